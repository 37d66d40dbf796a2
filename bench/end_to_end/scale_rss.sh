#!/bin/bash
# Issue 5's memory figures: peak RSS and wall time of `tracemill convert`
# with a fixed --memory-limit as the input grows, and a job of many small
# files under a low open-file limit.
#   scale_rss.sh GEN_KINETO TRACEMILL WORKDIR [LIMIT] [SIZES_GB...]
#   (defaults: LIMIT 512M, sizes 1 4 10; REPS=3 runs of each size)
# Input: gen_kineto ranks of 140,000 events (~62 MB each, seed 1); 1 GB is
# 16 ranks, 4 GB 64, 10 GB 160 (the first N files of one generated set).
# Then 4,096 files of ~256 KB (575 events each) converted with `ulimit -n 256`
# and with the default limit, outputs compared byte for byte.
# WORKDIR needs about 2.5 x the largest size free; it is left in place
# (delete it yourself).
set -euo pipefail
gen=$1; tm=$2; work=$3; limit=${4:-512M}
shift 3; [ $# -gt 0 ] && shift
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1 4 10)
[ -x /usr/bin/time ] || { echo "scale_rss.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
mkdir -p "$work"
max=0; for g in "${sizes[@]}"; do [ "$g" -gt "$max" ] && max=$g; done
ranks=$((max * 16))
if [ ! -f "$work/in.ranks-$ranks" ]; then
  rm -rf "$work/in"
  "$gen" --ranks "$ranks" --events 140000 --seed 1 --out "$work/in" >/dev/null
  touch "$work/in.ranks-$ranks"
fi
echo "machine: $(nproc) cpus, $(uname -r), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Each size REPS times (default 3), sizes interleaved. Before each run the
# previous outputs are removed and `sync` runs, so no earlier writeback
# competes for the cores. Two times per run: the convert alone, and the
# convert plus the `sync` that makes its outputs durable (a small job leaves
# its outputs dirty in the page cache for the kernel to write after it
# exits; a large one must write most of them back while it runs).
reps=${REPS:-3}
for ((k = 1; k <= reps; ++k)); do
for g in "${sizes[@]}"; do
  n=$((g * 16))
  files=(); for ((r = 0; r < n; ++r)); do files+=("$work/in/rank$r.pt.trace.json"); done
  bytes=$(cat "${files[@]}" | wc -c)
  rm -rf "$work/out"; sync
  t0=$(date +%s.%N)
  /usr/bin/time -v "$tm" convert "${files[@]}" -o "$work/out" --memory-limit "$limit" \
    --tmp-dir "$work" --quiet 2>"$work/time.txt" || { cat "$work/time.txt"; exit 1; }
  sync
  t1=$(date +%s.%N)
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s }')
  echo "rep $k size ${g}GB: $n files, $bytes bytes, --memory-limit $limit: max RSS $rss KiB," \
    "wall $wall, $(awk -v s="$secs" -v b="$bytes" 'BEGIN { printf "%.2f s/GB", s / (b / 1e9) }')," \
    "with sync $(awk -v a="$t0" -v z="$t1" -v b="$bytes" 'BEGIN { printf "%.2f s, %.2f s/GB", z - a, (z - a) / (b / 1e9) }')," \
    "outputs $(ls "$work/out" | grep -c trace.json)"
done
done
# Many small files under a low descriptor limit.
if [ ! -f "$work/small.done" ]; then
  rm -rf "$work/small"
  "$gen" --ranks 4096 --events 575 --seed 2 --out "$work/small" >/dev/null
  touch "$work/small.done"
fi
rm -rf "$work/small-out-low" "$work/small-out-high"
(ulimit -n 256; /usr/bin/time -v "$tm" convert "$work/small" -o "$work/small-out-low" --quiet 2>"$work/time.txt") \
  || { cat "$work/time.txt"; exit 1; }
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
"$tm" convert "$work/small" -o "$work/small-out-high" --quiet
same=identical
for f in "$work/small-out-high"/*.trace.json; do
  cmp -s "$f" "$work/small-out-low/$(basename "$f")" || same=DIFFERENT
done
echo "small files: $(ls "$work/small" | wc -l) files, $(cat "$work/small"/*.json | wc -c) bytes," \
  "ulimit -n 256: max RSS $rss KiB, wall $wall; outputs vs default limit: $same"
