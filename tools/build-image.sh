#!/usr/bin/env bash
# Builds the tracemill container image (Containerfile) with podman, or buildah
# where podman is missing, and tags it tracemill:<version>, the version of
# `project(tracemill VERSION ...)` in CMakeLists.txt (the same as
# `tracemill --version` and the .deb's).
#
#   build-image.sh [--base IMAGE] [--debootstrap CACHE_DIR [--mirror URL]] [--network MODE]
#
#   --base IMAGE         the Debian 12 image both stages start from
#                        (default docker.io/library/debian:bookworm)
#   --debootstrap DIR    where no registry is reachable: make a Debian 12 root file system
#                        with debootstrap from a Debian mirror (once; the tarball is kept in
#                        DIR), import it as localhost/tracemill-base:bookworm and build on it.
#                        Needs root and debootstrap.
#   --mirror URL         the mirror for --debootstrap (default: this machine's apt source for
#                        bookworm, else debootstrap's default)
#   --network MODE       the network of the build's RUN steps, which only apt-get from the
#                        base's mirror (default host: no bridge or NAT set-up needed)
#
# Prints the image's name on its last line. Podman and buildah read their
# usual configuration (containers.conf, storage.conf; CONTAINERS_CONF and
# CONTAINERS_STORAGE_CONF point elsewhere, as tests/package/image_test.sh does).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
base=docker.io/library/debian:bookworm
cache="" mirror="" network=host
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --debootstrap) cache=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --network) network=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
done

if command -v podman >/dev/null 2>&1; then
  engine=podman
elif command -v buildah >/dev/null 2>&1; then
  engine=buildah
else
  echo "build-image: neither podman nor buildah is installed (apt-get install podman)" >&2
  exit 1
fi

version=$(sed -n -E 's/^project\(tracemill VERSION ([0-9][0-9.]*).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "build-image: no project(tracemill VERSION ...) in CMakeLists.txt" >&2; exit 1; }
image=localhost/tracemill:$version

# This machine's Debian mirror for bookworm, from its apt sources (one-line
# and deb822 formats).
host_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n -E 's/^deb[ \t]+(\[[^]]*\][ \t]+)?([^ \t]+)[ \t]+bookworm[ \t].*/\2/p' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush() { if (deb && suite && uri != "" && enabled) print uri; deb = suite = 0; uri = ""; enabled = 1 }
         BEGIN { enabled = 1 }
         /^[ \t]*$/ { flush(); next }
         /^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
         /^URIs:/ { uri = $2 }
         /^Suites:/ { suite = ($0 ~ /[ \t]bookworm([ \t]|$)/) }
         /^Enabled:[ \t]*no/ { enabled = 0 }
         END { flush() }' "$f"
  done
}

if [ -n "$cache" ]; then
  base=localhost/tracemill-base:bookworm
  if ! "$engine" inspect --type image "$base" >/dev/null 2>&1; then
    mkdir -p "$cache"
    cache=$(cd "$cache" && pwd)
    tarball=$cache/bookworm-minbase.tar
    if [ ! -f "$tarball" ]; then
      command -v debootstrap >/dev/null 2>&1 ||
        { echo "build-image: --debootstrap needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
      [ -n "$mirror" ] || mirror=$(host_mirror | head -1)
      rootfs=$cache/rootfs.tmp
      rm -rf "$rootfs"
      echo "build-image: debootstrap bookworm from ${mirror:-the default mirror of debootstrap} into $rootfs" >&2
      extra=()
      case "$mirror" in https:*) extra+=(--include=ca-certificates) ;; esac
      debootstrap --variant=minbase "${extra[@]}" bookworm "$rootfs" ${mirror:+"$mirror"} >"$cache/debootstrap.log" 2>&1 ||
        { tail -20 "$cache/debootstrap.log" >&2; echo "build-image: debootstrap failed (log: $cache/debootstrap.log)" >&2; exit 1; }
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
      tar -C "$rootfs" --numeric-owner -cf "$tarball.tmp" .
      mv "$tarball.tmp" "$tarball"
      rm -rf "$rootfs"
    fi
    echo "build-image: importing $tarball as $base" >&2
    if [ "$engine" = podman ]; then
      podman import --quiet "$tarball" "$base" >/dev/null
    else  # buildah: a container from scratch with the root file system added
      ctr=$(buildah from scratch)
      buildah add --quiet "$ctr" "$tarball" / >/dev/null
      buildah commit --quiet --rm "$ctr" "$base" >/dev/null
    fi
  fi
fi

base_seconds=$SECONDS
echo "build-image: building $image on $base with $engine" >&2
"$engine" build --network "$network" --build-arg BASE_IMAGE="$base" -t "$image" -f "$src/Containerfile" "$src" >&2
echo "build-image: base ready in ${base_seconds} s, image built in $((SECONDS - base_seconds)) s" >&2
echo "$image"
