#!/bin/bash
# Submits the array job and the merge job that waits for it. See README.md.
#
#   SHARDS=8 ./submit.sh INPUT_DIR OUTDIR [extra sbatch options for the array]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
input_dir=${1:?usage: submit.sh INPUT_DIR OUTDIR [sbatch options]}
out_dir=${2:?usage: submit.sh INPUT_DIR OUTDIR [sbatch options]}
shift 2
shards=${SHARDS:-8}

array_id=$(sbatch --parsable --array="0-$((shards - 1))" "$@" "$here/tracemill-array.sbatch" "$input_dir" "$out_dir")
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable --dependency="afterany:$array_id" "$here/tracemill-merge.sbatch" "$out_dir")
echo "array job $array_id ($shards shards), merge job ${merge_id%%;*}"
