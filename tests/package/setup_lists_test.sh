#!/usr/bin/env bash
# The README's first command installs only what building and running need;
# the test command installs the rest (issue 21: the first command installed
# Chromium, Slurm and munge just to convert the sample).
#
#   setup_lists_test.sh SOURCE_DIR
set -euo pipefail
src=$1
setup="$src/tools/setup-debian.sh"
fail() { echo "FAIL: $*"; exit 1; }

first=$(grep -m1 '^bash tools/setup-debian.sh' "$src/README.md")
case "$first" in
  "bash tools/setup-debian.sh && cmake "*-DTRACEMILL_BUILD_TESTS=OFF*-DTRACEMILL_BUILD_BENCH=OFF*) ;;
  *) fail "the README's first command is not 'bash tools/setup-debian.sh && cmake ... tests and benchmarks off': $first" ;;
esac
tests=$(grep -m2 '^bash tools/setup-debian.sh' "$src/README.md" | tail -1)
[[ "$tests" == "bash tools/setup-debian.sh --test && "* ]] || fail "the README's test command does not run setup-debian.sh --test: $tests"

build=$(TRACEMILL_SETUP_PRINT=1 bash "$setup")
all=$(TRACEMILL_SETUP_PRINT=1 bash "$setup" --test)
expected="cmake ninja-build g++ pkg-config libtbb-dev libsimdjson-dev libdeflate-dev zlib1g-dev libabsl-dev libcli11-dev libsqlite3-dev"
[ "$(echo $build)" = "$expected" ] || fail "setup-debian.sh installs '$(echo $build)', expected '$expected'"
for p in chromium nodejs slurm-wlm munge podman libgtest-dev libprotobuf-dev; do
  grep -qx "$p" <<<"$build" && fail "the first command installs $p"
  grep -qx "$p" <<<"$all" || fail "the test command does not install $p"
done
for p in $build; do grep -qx "$p" <<<"$all" || fail "--test leaves out the build package $p"; done
echo "PASS: first command installs $(wc -l <<<"$build") packages; the test command $(wc -l <<<"$all")"
