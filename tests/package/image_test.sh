#!/usr/bin/env bash
# The container image as tools/build-image.sh builds it, on a Debian 12 base
# made with debootstrap from this machine's Debian mirror (no registry is
# reachable here), then run with podman: --version, the user, no build
# packages, and the sample job, whose outputs must equal the build tree's
# binary's byte for byte.
#
#   image_test.sh SOURCE_DIR WORK_DIR VERSION REF_BIN
#
# Everything podman keeps lives in WORK_DIR (storage.conf, containers.conf):
# the debootstrap tarball, the base image and the build's layers stay there
# between runs, so a second run skips the debootstrap and reuses unchanged
# layers. Skipped (77), with the reason, where podman cannot run a container.
set -euo pipefail
src=$(realpath "$1")
work=$2
version=$3
ref_bin=$(realpath "$4")
t0=$(date +%s.%N)
. "$src/tests/package/package_lib.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the image test runs podman and debootstrap as root"; exit 77
fi
for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (tools/setup-debian.sh --test installs it)"; exit 77; }
done
mkdir -p "$work"
work=$(realpath "$work")
rm -rf "$work/out" "$work/out.ref"

# Podman's configuration for this test only. runc, not crun: crun refuses
# hosts with cgroup v1 and v2 mounted side by side ("cgroups in hybrid mode
# not supported"). cgroupfs and file events: no systemd. The ulimits: podman
# asks for nofile 1048576 and nproc 4194304 by default, which a process
# without CAP_SYS_RESOURCE (this sandbox) may not raise to, so the
# container gets this shell's hard limits (nproc at most 32768, what podman
# lowers its own to).
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[ "$nofile" = unlimited ] && nofile=1048576
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
# Podman's run-time state (runroot, tmp_dir) lives under /run: conmon's
# socket paths must stay short (from a long runroot every container took 20 s
# to be reaped: "Exceeded conmon timeout"), and podman's database ties it to
# the storage, so its name comes from WORK_DIR.
state=/run/tracemill-test-$(printf %s "$work" | md5sum | cut -c1-8)
cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$state/libpod"
CONF
storage_conf() {
  cat >"$work/storage.conf" <<CONF
[storage]
driver = "$1"
graphroot = "$work/storage-$1"
runroot = "$state/storage-$1"
CONF
}
export CONTAINERS_CONF=$work/containers.conf CONTAINERS_STORAGE_CONF=$work/storage.conf
storage_conf overlay
if ! podman info >"$work/podman-info.log" 2>&1; then
  storage_conf vfs  # no overlay mounts here: the slow, always-working driver
  podman info >"$work/podman-info.log" 2>&1 ||
    { echo "SKIP: podman cannot start here: $(tail -3 "$work/podman-info.log")"; exit 77; }
fi
echo "podman $(podman version --format '{{.Client.Version}}'), storage $(podman info --format '{{.Store.GraphDriverName}}'), runtime runc"

# Build. If that fails, tell "podman cannot run a container here" (skip)
# from a broken image (fail).
t_build=$(date +%s.%N)
if ! bash "$src/tools/build-image.sh" --debootstrap "$work/base" >"$work/build.log" 2>&1; then
  base=localhost/tracemill-base:bookworm
  if ! podman image exists "$base"; then
    tail -20 "$work/build.log"
    echo "SKIP: no Debian 12 base image could be made (debootstrap from the Debian mirror failed)"; exit 77
  fi
  if ! podman run --rm --network none "$base" true >"$work/probe.log" 2>&1; then
    tail -20 "$work/build.log"
    echo "SKIP: podman cannot run a container here: $(tail -3 "$work/probe.log")"; exit 77
  fi
  tail -40 "$work/build.log"
  echo "FAIL: tools/build-image.sh (log: $work/build.log)"; exit 1
fi
image=$(tail -1 "$work/build.log")
echo "built $image in $(elapsed "$t_build") s (log: $work/build.log)"
[ "$image" = "localhost/tracemill:$version" ] || { echo "FAIL: the image is $image, not tracemill:$version"; exit 1; }
# Rebuilds leave the previous build's layers untagged; keep a day of them as cache.
podman image prune -f --filter until=24h >/dev/null

t_run=$(date +%s.%N)
run() { podman run --rm --network none "$@"; }
got=$(run "$image" --version)
[ "$got" = "tracemill $version" ] || { echo "FAIL: --version in the image says '$got'"; exit 1; }
[ "$(podman image inspect --format '{{.Config.User}} {{json .Config.Entrypoint}}' "$image")" = '10001:10001 ["tracemill"]' ] ||
  { echo "FAIL: user or entrypoint: $(podman image inspect --format '{{.Config.User}} {{json .Config.Entrypoint}}' "$image")"; exit 1; }
[ "$(run --entrypoint id "$image" -u)" = 10001 ] || { echo "FAIL: the image does not run as uid 10001"; exit 1; }
# The run stage holds the .deb and its runtime libraries, no build packages.
pkgs=$(run --entrypoint dpkg-query "$image" -W -f '${Package} ${Version}\n')
[ "$(grep '^tracemill ' <<<"$pkgs")" = "tracemill $version" ] || { echo "FAIL: tracemill $version is not installed as a package"; exit 1; }
if grep -E -- '-dev |^(g\+\+|gcc|cmake|ninja-build) ' <<<"$pkgs"; then echo "FAIL: build packages in the image"; exit 1; fi

# The sample job, mounted read-only at its own path so that the manifests'
# input paths match the reference run's.
sample=$src/cluster-examples/sample-job
mkdir -p "$work/out"
chmod 0777 "$work/out"  # written by uid 10001
run -v "$sample:$sample:ro" -v "$work/out:$work/out" "$image" convert "$sample" -o "$work/out/sample" --quiet
same_as_reference "$work/out/sample" "$ref_bin" "$sample" "$src"
rm -rf "$work/out"
echo "ran --version, id, dpkg-query and the sample job in $(elapsed "$t_run") s"

echo "PASS: $image built with podman on a debootstrap base and run, in $(elapsed "$t0") s"
