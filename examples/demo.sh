#!/usr/bin/env bash
# The demo: runs every example that has a demo.conf, in ORDER, and prints a summary.
#   examples/demo.sh <build dir>
# A demo.conf sets ORDER (sort key), RANKS (MPI ranks) and ARGS (the program's arguments).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$1
summary=()
failed=0
confs=$(for c in "$here"/*/demo.conf; do (ORDER=50 && source "$c" && echo "$ORDER $c"); done | sort -n | cut -d' ' -f2)
for conf in $confs; do
  dir=$(dirname "$conf")
  name=$(basename "$dir")
  ORDER=50 RANKS=2 ARGS=""
  # shellcheck disable=SC1090
  source "$conf"
  exe="$build/examples/$name/$name"
  printf '\n\033[1m== %s: mpiexec -n %s %s %s ==\033[0m\n' "$name" "$RANKS" "$name" "$ARGS"
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  if "${HETERO_MPIEXEC:-mpiexec}" -n "$RANKS" "$exe" $ARGS; then status=ok; else
    status=FAILED
    failed=1
  fi
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  summary+=("$(printf '%-16s %5s ranks  %-6s %8.2f s' "$name" "$RANKS" "$status" "$seconds")")
done
printf '\n\033[1m== demo summary ==\033[0m\n'
printf '%s\n' "${summary[@]}"
exit $failed
