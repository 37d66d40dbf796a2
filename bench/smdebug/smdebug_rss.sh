#!/usr/bin/env bash
# Wall time and peak RSS of `tracemill convert` on synthetic smdebug jobs of
# 16, 64 and 256 nodes x 1 hour (tools/gen_smdebug, seed 1; 120 files per
# node), as bench/RESULTS.md records them (/usr/bin/time -v on the CLI).
#   [TRACEMILL_ARGS="--memory-limit 256M"] smdebug_rss.sh GEN_SMDEBUG TRACEMILL [NODES...]
# Jobs are generated once into $TMPDIR/tracemill-bench-smdebug-<n> (never into
# the repository) and read once before timing (page cache).
set -euo pipefail
gen=$1 tm=$2
shift 2
tmp=${TMPDIR:-/tmp}
for n in "${@:-16 64 256}"; do
  for nodes in $n; do
    job=$tmp/tracemill-bench-smdebug-$nodes
    if [ ! -e "$job.complete" ]; then
      "$gen" -o "$job" --nodes "$nodes" --hours 1 --seed 1 && touch "$job.complete"
    fi
    find "$job" -type f -exec cat {} + > /dev/null
    out=$(mktemp -d "$tmp/tracemill-bench-smdebug-out.XXXXXX")
    echo "$nodes nodes: $(find "$job" -type f -name '*.json' | wc -l) files, $(du -sb "$job" | cut -f1) bytes"
    /usr/bin/time -f "$nodes nodes: %e s wall, %U s user, %S s sys, peak RSS %M KiB, exit %x" \
      "$tm" convert -q --no-report ${TRACEMILL_ARGS:-} --group-by node --gpus-per-node 1 "$job" -o "$out"
    rm -rf "$out"
  done
done
