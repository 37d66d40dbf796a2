#!/bin/sh
# Peak RSS of `tracemill convert` on generated input (plain JSON and gzip):
#   peak_rss.sh GEN_KINETO TRACEMILL [RANKS] [EVENTS] [extra convert flags...]
# Input and output go to a temporary directory under $TMPDIR (else /tmp),
# removed at exit.
set -eu
gen=$1; tm=$2; ranks=${3:-8}; events=${4:-50000}
shift 2; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
[ -x /usr/bin/time ] || { echo "peak_rss.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/tracemill-rss-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$gen" --ranks "$ranks" --events "$events" --seed 1 --out "$dir/json" >/dev/null
"$gen" --ranks "$ranks" --events "$events" --seed 1 --out "$dir/gzip" --gzip >/dev/null
for kind in json gzip; do
  /usr/bin/time -v "$tm" convert "$dir/$kind" -o "$dir/out-$kind" --quiet "$@" 2>"$dir/time.txt"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt")
  bytes=$(cat "$dir/$kind"/* | wc -c)
  echo "peak_rss ${ranks}x${events} $kind: input ${bytes} bytes on disk, max RSS ${rss} KiB, wall ${wall}"
done
