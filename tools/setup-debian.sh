#!/usr/bin/env bash
# Installs tracemill's dependencies from Debian 12 packages.
#
#   setup-debian.sh            what building and running `tracemill` needs (the README's first
#                              command; a build configured with -DTRACEMILL_BUILD_TESTS=OFF
#                              -DTRACEMILL_BUILD_BENCH=OFF)
#   setup-debian.sh --package  + what makes the man page and the .deb (help2man, dpkg-dev,
#                              file); the Containerfile's build stage runs this
#   setup-debian.sh --test     + everything the test suite needs (the README's test command)
#
# Idempotent: packages already installed are skipped by apt-get; `apt-get update`
# runs only when the package lists are missing or older than a day.
set -euo pipefail
build=(
  cmake ninja-build g++ pkg-config
  libtbb-dev libsimdjson-dev libdeflate-dev zlib1g-dev libabsl-dev libcli11-dev
  libsqlite3-dev  # --tables writes OUTDIR/tables.sqlite
)
package=(
  help2man  # tracemill.1 from --help (cmake --install, the .deb)
  dpkg-dev file  # dpkg-shlibdeps: the .deb's Depends (CPACK_DEBIAN_PACKAGE_SHLIBDEPS, which needs `file` too)
)
test=(
  libprotobuf-dev protobuf-compiler  # the tests and benchmarks cross-check the Paddle reader with protobuf
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 jq
  python3-pandas  # tests only: the README's pandas snippet on --tables' SQLite (tests/tables)
  python3-pytest  # tests only: the Python package, python/tracemill (tests/python)
  slurm-wlm munge  # the one-node Slurm cluster test (tests/shard/slurm_cluster_test.sh)
  # chromium + nodejs: the report's browser test (tests/report/browser_test.js);
  # fonts-dejavu-core: text in its screenshot.
  chromium nodejs fonts-dejavu-core
  clang libclang-rt-14-dev  # the asan preset: ASan + UBSan and the libFuzzer targets (tests/fuzz)
  # The container image test (tests/package/image_test.sh): a Debian 12 base
  # made with debootstrap, built and run by podman; runc, because crun cannot
  # run containers on a host with cgroup v1 and v2 mounted side by side.
  debootstrap podman runc
)
case "${1:-}" in
  "") packages=("${build[@]}") ;;
  --package) packages=("${build[@]}" "${package[@]}") ;;
  --test)
    packages=("${build[@]}" "${package[@]}" "${test[@]}")
    # Node.js + npm validate the Kubernetes example (tests/shard/k8s) and load the
    # sample job's outputs in Chrome DevTools' trace engine (tests/viewer): the
    # machine's own Node (e.g. NodeSource's, which provides npm itself and
    # conflicts with Debian's npm) is used if there is one, else Debian's.
    command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
    ;;
  *) echo "usage: setup-debian.sh [--package | --test]" >&2; exit 2 ;;
esac
# TRACEMILL_SETUP_PRINT=1: print the list and install nothing (tests/package/setup_lists_test.sh).
if [ "${TRACEMILL_SETUP_PRINT:-}" = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ! -d /var/lib/apt/lists/partial ] || [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
  $SUDO apt-get update -qq
fi
echo "setup: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
