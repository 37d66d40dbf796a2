#!/bin/bash
# Submits the clocks job, the array job that waits for it, and the merge job
# that waits for the array. See README.md.
#
#   SHARDS=8 ./submit.sh INPUT_DIR OUTDIR [extra sbatch options for the array]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
input_dir=${1:?usage: submit.sh INPUT_DIR OUTDIR [sbatch options]}
out_dir=${2:?usage: submit.sh INPUT_DIR OUTDIR [sbatch options]}
shift 2
shards=${SHARDS:-8}

clocks_id=$(sbatch --parsable "$here/tracemill-clocks.sbatch" "$input_dir" "$out_dir")
clocks_id=${clocks_id%%;*}
array_id=$(sbatch --parsable --dependency="afterok:$clocks_id" --array="0-$((shards - 1))" "$@" \
  "$here/tracemill-array.sbatch" "$input_dir" "$out_dir")
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable --dependency="afterany:$array_id" "$here/tracemill-merge.sbatch" "$out_dir")
echo "clocks job $clocks_id, array job $array_id ($shards shards), merge job ${merge_id%%;*}"
