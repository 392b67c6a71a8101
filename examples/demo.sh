#!/usr/bin/env bash
# The demo: runs every example that has a demo.conf, in ORDER, and prints a summary.
#   examples/demo.sh <build dir>
# A demo.conf sets ORDER (sort key), RANKS (MPI ranks) and ARGS (the program's arguments), and
# may set THEN_RANKS and THEN_ARGS: a second run of the same program (a restart). DEMO_DIR is a
# scratch folder for the files the examples write, removed at the end.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$1
summary=()
failed=0
DEMO_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hetero-demo-XXXXXX")
export DEMO_DIR
trap 'rm -rf "$DEMO_DIR"' EXIT
confs=$(for c in "$here"/*/demo.conf; do (ORDER=50 && source "$c" && echo "$ORDER $c"); done | sort -n | cut -d' ' -f2)
for conf in $confs; do
  dir=$(dirname "$conf")
  name=$(basename "$dir")
  ORDER=50 RANKS=2 ARGS="" THEN_RANKS="" THEN_ARGS=""
  # shellcheck disable=SC1090
  source "$conf"
  exe="$build/examples/$name/$name"
  status=ok
  start=$EPOCHREALTIME
  for run in first then; do
    ranks=$RANKS args=$ARGS
    if [ $run = then ]; then
      [ -n "$THEN_RANKS" ] || break
      ranks=$THEN_RANKS args=$THEN_ARGS
    fi
    printf '\n\033[1m== %s: mpiexec -n %s %s %s ==\033[0m\n' "$name" "$ranks" "$name" "${args//$DEMO_DIR/\$DEMO_DIR}"
    # shellcheck disable=SC2086
    if ! "${HETERO_MPIEXEC:-mpiexec}" -n "$ranks" "$exe" $args; then
      status=FAILED
      failed=1
      break
    fi
  done
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  shown_ranks=$RANKS
  [ -n "$THEN_RANKS" ] && shown_ranks="$RANKS+$THEN_RANKS"
  summary+=("$(printf '%-16s %5s ranks  %-6s %8.2f s' "$name" "$shown_ranks" "$status" "$seconds")")
done
printf '\n\033[1m== demo summary ==\033[0m\n'
printf '%s\n' "${summary[@]}"
exit $failed
