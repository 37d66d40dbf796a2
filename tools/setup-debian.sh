#!/usr/bin/env bash
# Installs tracemill's build and test dependencies from Debian 12 packages.
# chromium + nodejs: the report's browser test (tests/report/browser_test.js);
# fonts-dejavu-core: text in its screenshot.
# Idempotent: packages already installed are skipped by apt-get; `apt-get update`
# runs only when the package lists are missing or older than a day.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libtbb-dev libsimdjson-dev libdeflate-dev zlib1g-dev
  libsqlite3-dev  # --tables writes OUTDIR/tables.sqlite
  libprotobuf-dev protobuf-compiler libabsl-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 jq
  python3-pandas  # tests only: the README's pandas snippet on --tables' SQLite (tests/tables)
  slurm-wlm munge  # the one-node Slurm cluster test (tests/shard/slurm_cluster_test.sh)
  chromium nodejs fonts-dejavu-core
  clang libclang-rt-14-dev  # the asan preset: ASan + UBSan and the libFuzzer targets (tests/fuzz)
)
# Node.js + npm validate the Kubernetes example (tests/shard/k8s) and load the
# sample job's outputs in Chrome DevTools' trace engine (tests/viewer): the
# machine's own Node (e.g. NodeSource's, which provides npm itself and
# conflicts with Debian's npm) is used if there is one, else Debian's.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
stamp=/var/lib/apt/periodic/update-success-stamp
if [ ! -d /var/lib/apt/lists/partial ] || [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
  $SUDO apt-get update -qq
fi
echo "setup: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
