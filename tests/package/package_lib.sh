# Shared by the package tests (sourced): what an install must hold, the
# sample job run by an installed tracemill against the build tree's binary,
# and their timing.

# elapsed T0: seconds since T0 (a `date +%s.%N`), one decimal.
elapsed() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }

# expected_files SOURCE_DIR: the files `cmake --install` puts under a prefix,
# relative to it, sorted (cmake/Packaging.cmake).
expected_files() {
  local src=$1
  {
    echo bin/tracemill
    echo share/man/man1/tracemill.1
    echo share/doc/tracemill/README.md
    if [ -f "$src/LICENSE" ]; then echo share/doc/tracemill/LICENSE; fi
    (cd "$src/cluster-examples" && find . -type f | sed 's|^\./|share/doc/tracemill/examples/|')
    local py
    py=$(/usr/bin/python3 -c "import sys; print('python%d.%d' % sys.version_info[:2])")
    (cd "$src/python" && find tracemill -name '*.py' | sed "s|^|lib/$py/dist-packages/|")
  } | LC_ALL=C sort
}

# same_as_reference OUT REF_BIN INPUT_DIR SOURCE_DIR: OUT (a run of an
# installed tracemill on INPUT_DIR) has exit code 0 in its manifest, parses,
# and equals REF_BIN's run on the same INPUT_DIR byte for byte (traces) and
# field for field (manifest, run-specific fields aside).
same_as_reference() {
  local out=$1 ref_bin=$2 input=$3 src=$4
  "$ref_bin" convert "$input" -o "$out.ref" --quiet
  python3 "$src/tests/shard/check_outputs.py" valid "$out" "$out.ref"
  python3 "$src/tests/shard/check_outputs.py" same "$out.ref" "$out"
  python3 - "$out/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0 and m["totals"]["outputs"] == 2, (m["exit_code"], m["totals"])
PY
}
