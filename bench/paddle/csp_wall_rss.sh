#!/usr/bin/env bash
# Wall time and peak RSS of `tracemill csp` on the issue-3 benchmark job, as
# bench/RESULTS.md records them (/usr/bin/time -v on the CLI).
#   csp_wall_rss.sh GEN_PADDLE TRACEMILL [RUNS]
# The job (8 trainers x 8 GPUs, 50k events + 5k mem events per rank, ~180 MB,
# seed 1) is generated once into $TMPDIR/tracemill-bench-paddle64 (never into
# the repository); outputs go to a fresh $TMPDIR/tracemill-bench-paddle64-out.*
# per run. The input is read once first so every run finds it in the page cache.
set -euo pipefail
gen=$1 tm=$2 runs=${3:-5}
tmp=${TMPDIR:-/tmp}
job=$tmp/tracemill-bench-paddle64
stamp=$job/.complete-seed1-8x8-50000-5000-600
if [ ! -e "$stamp" ]; then
  "$gen" -o "$job" --trainers 8 --gpus 8 --events 50000 --mem-events 5000 --dcgm-samples 600 --seed 1
  echo "gen_paddle seed 1" > "$stamp"
fi
cat "$job"/profile/* "$job"/dcgm/* > /dev/null
echo "input: $(du -sb "$job"/profile | cut -f1) bytes of profiles, $(du -sb "$job"/dcgm | cut -f1) bytes of DCGM logs"
for i in $(seq 1 "$runs"); do
  out=$(mktemp -d "$tmp/tracemill-bench-paddle64-out.XXXXXX")
  /usr/bin/time -f "run $i: %e s wall, %U s user, %S s sys, peak RSS %M KiB, exit %x" \
    "$tm" csp -q --profile-path "$job" --timeline-path "$out" \
      --gpus-per-trainer 8 --trainer-num 8 --group-size 4 --display-size 2
  rm -rf "$out"
done
