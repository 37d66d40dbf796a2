#!/usr/bin/env bash
# Writes tracemill.1 from the binary's own help, so the page cannot drift from
# the flags: help2man turns `tracemill --help` into NAME, SYNOPSIS, DESCRIPTION
# and OPTIONS, and each subcommand's --help (without the exit-status footer,
# which help2man already puts in DESCRIPTION) becomes a section of its own.
#
#   man-page.sh TRACEMILL_BIN HELP2MAN OUT
set -euo pipefail
bin=$(realpath "$1")
help2man=$2
out=$3
# Run as `tracemill` from PATH, so the usage lines say `tracemill`, not the
# build tree's path.
export PATH="$(dirname "$bin"):$PATH"
[ "$(basename "$bin")" = tracemill ] || { echo "man-page.sh: $bin is not named tracemill" >&2; exit 1; }

include=$(mktemp)
trap 'rm -f "$include"' EXIT
for cmd in convert csp diff "manifest merge" report; do
  # shellcheck disable=SC2086  # "manifest merge" is two words on purpose
  help=$(tracemill $cmd --help | sed '/^Exit status:/,$d')
  {
    printf '[TRACEMILL %s]\n.nf\n' "${cmd^^}"
    # roff: backslashes escaped, a leading . or ' kept as text.
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" <<<"$help"
    printf '.fi\n'
  } >>"$include"
done
"$help2man" --no-info --section 1 --include "$include" \
  --name "merge per-rank GPU profiler traces into Chrome traces" \
  --output "$out.tmp" tracemill
mv "$out.tmp" "$out"
