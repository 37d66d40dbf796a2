#!/usr/bin/env bash
# Command-line checks of the run report (ctest drives this script).
#   cli_test.sh convert BIN INPUT OUTDIR EXPECTED_EXIT
#     `tracemill convert` exits as expected and leaves manifest.json and
#     report.html (and no temporary); `--no-report` leaves no report.html.
#   cli_test.sh rebuild BIN OUTDIR
#     `tracemill report OUTDIR` rebuilds the same bytes from manifest.json;
#     a directory without a manifest, or with a file that is not a tracemill
#     manifest, is a usage error (exit 2).
set -euo pipefail
mode=$1
bin=$2
case "$mode" in
  convert)
    in=$3 out=$4 want=$5
    rm -rf "$out"
    mkdir -p "$(dirname "$out")"
    rc=0
    "$bin" convert "$in" -o "$out" --quiet || rc=$?
    [ "$rc" = "$want" ] || { echo "FAIL: exit status $rc, expected $want"; exit 1; }
    [ -s "$out/manifest.json" ] || { echo "FAIL: no manifest.json"; exit 1; }
    [ -s "$out/report.html" ] || { echo "FAIL: no report.html"; exit 1; }
    if ls -a "$out" | grep -q '\.tmp\.'; then echo "FAIL: temporary left in $out"; exit 1; fi
    bare="$out.no-report"
    rm -rf "$bare"
    "$bin" convert "$in" -o "$bare" --quiet --no-report || true
    [ -s "$bare/manifest.json" ] || { echo "FAIL: --no-report: no manifest.json"; exit 1; }
    [ ! -e "$bare/report.html" ] || { echo "FAIL: --no-report wrote report.html"; exit 1; }
    rm -rf "$bare"
    echo "ok: convert $in -> $out (exit $rc), report $(wc -c < "$out/report.html") bytes"
    ;;
  rebuild)
    out=$3
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cp "$out/report.html" "$tmp/first.html"
    rm "$out/report.html"
    "$bin" report "$out"
    cmp "$out/report.html" "$tmp/first.html" || { echo "FAIL: rebuilt report differs"; exit 1; }
    rc=0
    "$bin" report "$tmp/nothing-here" 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || { echo "FAIL: report on a directory without manifest: exit $rc, expected 2"; exit 1; }
    grep -q "manifest.json" "$tmp/err" || { echo "FAIL: error does not name manifest.json"; exit 1; }
    mkdir -p "$tmp/other"
    echo '{"traceEvents": []}' > "$tmp/other/manifest.json"
    rc=0
    "$bin" report "$tmp/other" 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || { echo "FAIL: report on a foreign manifest.json: exit $rc, expected 2"; exit 1; }
    grep -q "not a tracemill manifest" "$tmp/err" || { echo "FAIL: error: $(cat "$tmp/err")"; exit 1; }
    [ ! -e "$tmp/other/report.html" ] || { echo "FAIL: report.html written for a foreign manifest"; exit 1; }
    rc=0
    "$bin" report 2> /dev/null || rc=$?
    [ "$rc" = 2 ] || { echo "FAIL: report without OUTDIR: exit $rc, expected 2"; exit 1; }
    echo "ok: tracemill report $out rebuilt identical bytes"
    ;;
  *)
    echo "usage: $0 convert|rebuild ..." >&2
    exit 2
    ;;
esac
