#!/usr/bin/env bash
# The .deb as a user installs it: built by CPack (Depends from
# dpkg-shlibdeps), installed with apt-get on this machine, checked with
# `dpkg -L`, run as /usr/bin/tracemill on the sample job it ships, and purged
# again, leaving nothing behind.
#
#   deb_test.sh BUILD_DIR SOURCE_DIR WORK_DIR VERSION
#
# Needs root (apt-get). Skipped (77) when a tracemill that this test did not
# install is already on the machine: the test would replace it, then purge it.
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$3
version=$4
t0=$(date +%s.%N)
. "$src/tests/package/package_lib.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: installing the .deb with apt-get needs root"; exit 77
fi
command -v dpkg-shlibdeps >/dev/null || { echo "FAIL: dpkg-shlibdeps missing: run tools/setup-debian.sh --test (dpkg-dev)"; exit 1; }
mkdir -p "$work"
work=$(realpath "$work")
# Marks a package this test installed, so that a run killed before its purge
# (a ctest timeout) is cleaned up by the next run instead of skipping it.
marker=$work/installed-by-this-test
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -qq "$@"; }
installed() { dpkg-query -W -f='${Status}' tracemill 2>/dev/null | grep -q "ok installed"; }
if installed || [ -e /usr/bin/tracemill ]; then
  if [ -f "$marker" ] && installed; then
    echo "purging the tracemill an earlier run of this test left installed"
    apt_get purge tracemill >/dev/null
  else
    echo "SKIP: a tracemill this test did not install is on this machine" \
         "($(dpkg-query -W -f='${Version}' tracemill 2>/dev/null || echo "/usr/bin/tracemill, no package")):" \
         "the test would replace it and purge it (apt-get purge tracemill, then rerun)"
    exit 77
  fi
fi
find "$work" -mindepth 1 -maxdepth 1 ! -name "$(basename "$marker")" -exec rm -rf {} +

# CPack, as `cmake --build BUILD --target package` runs it, into WORK_DIR.
(cd "$build" && cpack -G DEB -B "$work/package" >"$work/cpack.log") || { cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
arch=$(dpkg --print-architecture)
deb=$work/package/tracemill_${version}_${arch}.deb
[ -f "$deb" ] || { echo "FAIL: no $(basename "$deb"): $(ls "$work/package")"; exit 1; }
[ "$(dpkg-deb -f "$deb" Package)" = tracemill ] && [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
  { echo "FAIL: control fields"; dpkg-deb -f "$deb"; exit 1; }

# Depends: computed by dpkg-shlibdeps, runtime libraries only.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libtbb12 libsimdjson14 libdeflate0 libabsl20220623 zlib1g libc6 libstdc++6; do
  grep -q -- "$lib" <<<"$depends" || { echo "FAIL: Depends lacks $lib"; exit 1; }
done
if grep -q -- '-dev\b' <<<"$depends"; then echo "FAIL: Depends names a -dev package"; exit 1; fi

touch "$marker"
trap '[ ! -f "$marker" ] || { apt_get purge tracemill >/dev/null 2>&1 && rm -f "$marker"; }' EXIT
apt_get install "$deb" >"$work/apt-install.log" 2>&1 || { cat "$work/apt-install.log"; echo "FAIL: apt-get install"; exit 1; }
installed || { echo "FAIL: tracemill not installed after apt-get install"; exit 1; }

# dpkg -L: exactly the cmake --install files under /usr, plus their folders.
dpkg -L tracemill >"$work/dpkg-L.txt"
while read -r f; do [ -d "$f" ] || echo "${f#/usr/}"; done <"$work/dpkg-L.txt" | LC_ALL=C sort >"$work/files.txt"
expected_files "$src" >"$work/expected.txt"
diff -u "$work/expected.txt" "$work/files.txt" || { echo "FAIL: dpkg -L differs from the expected list"; exit 1; }

got=$(/usr/bin/tracemill --version)
[ "$got" = "tracemill $version" ] || { echo "FAIL: /usr/bin/tracemill --version says '$got'"; exit 1; }
[ "$(command -v tracemill)" = /usr/bin/tracemill ] || echo "note: tracemill on PATH is $(command -v tracemill)"
if command -v man >/dev/null && ! man -w tracemill >/dev/null 2>&1; then echo "FAIL: man cannot find tracemill(1)"; exit 1; fi
examples=/usr/share/doc/tracemill/examples
/usr/bin/tracemill convert "$examples/sample-job" -o "$work/out" --quiet
same_as_reference "$work/out" "$build/tracemill" "$examples/sample-job" "$src"

apt_get purge tracemill >"$work/apt-purge.log" 2>&1 || { cat "$work/apt-purge.log"; echo "FAIL: apt-get purge"; exit 1; }
rm -f "$marker"
if dpkg-query -W -f='${Status}\n' tracemill 2>/dev/null | grep -qv "not-installed"; then
  echo "FAIL: dpkg still knows tracemill after purge: $(dpkg-query -W -f='${Status}' tracemill)"; exit 1
fi
left=$(while read -r f; do [ -e "$f" ] && ! [ -d "$f" ] && echo "$f"; done <"$work/dpkg-L.txt" || true)
[ -z "$left" ] || { echo "FAIL: left behind after purge: $left"; exit 1; }
for d in /usr/share/doc/tracemill /usr/bin/tracemill /usr/share/man/man1/tracemill.1; do
  [ ! -e "$d" ] || { echo "FAIL: $d exists after purge"; exit 1; }
done

echo "PASS: $(basename "$deb"): installed, $(wc -l <"$work/files.txt") files, sample job converted, purged, in $(elapsed "$t0") s"
