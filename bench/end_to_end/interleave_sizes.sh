#!/bin/bash
# Issue 34's per-byte comparison across job sizes, interleaved: the CLI
# (`tracemill convert DIR/*.json -o OUT --threads T -q`) on each input
# folder in turn, REPS rounds, so that a size's runs are spread over the
# same minutes as the others'. Per run: wall time of the convert alone, of
# the convert plus the `sync` that makes its outputs durable, MB/s of input
# JSON (both), and convert's own peak RSS (`/usr/bin/time -v`).
#   interleave_sizes.sh TRACEMILL OUT_DIR INPUT_DIR...
#   (REPS=3, THREADS=2; each INPUT_DIR holds rank*.json, e.g. made by
#   `bench_end_to_end --real --ranks=N --keep_input --tmpdir=D
#   --benchmark_filter=none`; OUT_DIR needs as much free space as the
#   largest input)
set -euo pipefail
tm=$1; out=$2; shift 2
[ -x /usr/bin/time ] || { echo "interleave_sizes.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
echo "machine: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "start: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "dir ranks bytes round convert_s convert_MBps with_sync_s with_sync_MBps peak_rss_MB"
reps=${REPS:-3}
for ((k = 1; k <= reps; ++k)); do
  for dir in "$@"; do
    files=("$dir"/*.json)
    bytes=$(stat -c %s "${files[@]}" | awk '{s += $1} END {print s}')
    rm -rf "$out"; sync; sleep 2
    t0=$(date +%s.%N)
    /usr/bin/time -v "$tm" convert "${files[@]}" -o "$out" --threads "${THREADS:-2}" -q 2> "$out.time" || {
      echo "convert failed:" >&2; cat "$out.time" >&2; exit 1; }
    t1=$(date +%s.%N)
    sync
    t2=$(date +%s.%N)
    rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$out.time")
    awk -v d="$dir" -v n="${#files[@]}" -v b="$bytes" -v k="$k" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v r="$rss_kb" \
      'BEGIN { c = t1 - t0; s = t2 - t0;
               printf "%s %d %.0f %d %.2f %.1f %.2f %.1f %.0f\n", d, n, b, k, c, b / c / 1e6, s, b / s / 1e6, r / 1024 }'
  done
done
rm -rf "$out" "$out.time"
echo "end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
