#!/usr/bin/env bash
# `cmake --install` into a temporary prefix installs exactly what a user needs
# (cmake/Packaging.cmake), and the installed binary converts the installed
# sample job as the build tree's binary does.
#
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR VERSION
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$3
version=$4
t0=$(date +%s.%N)
. "$src/tests/package/package_lib.sh"

rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
prefix="$work/a prefix"  # a space: the install rules quote their paths
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

expected_files "$src" >"$work/expected.txt"
(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | LC_ALL=C sort) >"$work/installed.txt"
diff -u "$work/expected.txt" "$work/installed.txt" || { echo "FAIL: installed files differ from the expected list"; exit 1; }

# GNUInstallDirs layout, executable bits kept, nothing pointing into the build tree.
[ -x "$prefix/bin/tracemill" ] || { echo "FAIL: bin/tracemill is not executable"; exit 1; }
for f in slurm/submit.sh slurm/tracemill-clocks.sbatch slurm/tracemill-array.sbatch slurm/tracemill-merge.sbatch; do
  [ -x "$prefix/share/doc/tracemill/examples/$f" ] || { echo "FAIL: examples/$f lost its executable bit"; exit 1; }
done
if readelf -d "$prefix/bin/tracemill" | grep -E 'RPATH|RUNPATH'; then
  echo "FAIL: the installed binary has an RPATH"; exit 1
fi

got=$("$prefix/bin/tracemill" --version)
[ "$got" = "tracemill $version" ] || { echo "FAIL: --version says '$got', CMakeLists.txt $version"; exit 1; }

# The man page: help2man's header with the version, a section per subcommand.
man1=$prefix/share/man/man1/tracemill.1
grep -q "^\.TH TRACEMILL \"1\" .* \"tracemill $version\"" "$man1" || { echo "FAIL: tracemill.1 header"; head -3 "$man1"; exit 1; }
for s in CONVERT CSP DIFF "MANIFEST MERGE" REPORT; do
  grep -q "^\.SH \"TRACEMILL $s\"" "$man1" || { echo "FAIL: tracemill.1 has no section TRACEMILL $s"; exit 1; }
done
if command -v man >/dev/null 2>&1; then
  MANWIDTH=80 man -l "$man1" 2>"$work/man.err" | grep -q -- "--memory-limit" || { echo "FAIL: man -l"; cat "$work/man.err"; exit 1; }
  if [ -s "$work/man.err" ]; then echo "FAIL: man -l warns:"; cat "$work/man.err"; exit 1; fi
fi

examples="$prefix/share/doc/tracemill/examples"
"$prefix/bin/tracemill" convert "$examples/sample-job" -o "$work/out" --quiet
same_as_reference "$work/out" "$build/tracemill" "$examples/sample-job" "$src"

# The Python package, from where it was installed, on the installed binary
# and sample job: HTA's temporal breakdown (tests/data/tables/hta_trace_filter_temporal.csv).
py=$(/usr/bin/python3 -c "import sys; print('python%d.%d' % sys.version_info[:2])")
got=$(cd "$work" && PYTHONPATH="$prefix/lib/$py/dist-packages" TRACEMILL="$prefix/bin/tracemill" \
      TRACEMILL_CACHE_DIR="$work/cache" /usr/bin/python3 -c "
import tracemill
df = tracemill.TraceAnalysis(trace_dir='$examples/sample-job').get_temporal_breakdown(visualize=False)
print(tracemill.__file__.startswith('$prefix/'), df['rank'].tolist(), df['kernel_time(us)'].tolist())")
[ "$got" = "True [0, 1] [600058.0, 600674.0]" ] || { echo "FAIL: import tracemill from the prefix: $got"; exit 1; }

echo "PASS: cmake --install: $(wc -l <"$work/installed.txt") files, sample job converted, in $(elapsed "$t0") s"
