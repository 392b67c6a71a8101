#!/usr/bin/env bash
# One table over every benchmark result of a run: each case (hetero's, or another peer's) beside the
# family's baseline (plain Kokkos, plain MPI, OpenMP tasks, a peer library), the paired ratio
# case / baseline (median over rounds, and the worst round: the largest), and the command that
# produced it. Below 1 the case is faster.
#   bench/scoreboard.sh <results dir> [<markdown file to write>]
# Reads <results dir>/<name>.json (Google Benchmark) and <name>.cmd (the command, from run.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
results=$1
markdown=${2:-}

shopt -s nullglob
rows=()
for json in "$results"/*.json; do
  name=$(basename "$json" .json)
  command=$(cat "$results/$name.cmd" 2>/dev/null || echo "-")
  # awk, not read: a benchmark without arguments has an empty field, which read would drop.
  while IFS= read -r row; do
    rows+=("$row")
  done < <("$here/report.sh" "$json" --tsv | awk -F'\t' -v name="$name" -v command="$command" '
    $7 != "-" && $3 !~ /^baseline/ {
      printf "%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, $1, ($2 == "" ? "" : "/" $2), $3, $9, $7, $8, $6, command
    }')
done
[ ${#rows[@]} -gt 0 ] || {
  echo "scoreboard: no paired results in $results" >&2
  exit 1
}

echo "== scoreboard: variant / peer, paired over rounds (below 1: the variant is faster) =="
printf '%s\n' "${rows[@]}" | awk -F'\t' '
  { printf "%-26s %-34s %-24s %-26s %7s %7s %4s\n", $1, $2, $3, $4, $5, $6, $7 }
  BEGIN { printf "%-26s %-34s %-24s %-26s %7s %7s %4s\n", "benchmark", "case", "variant", "peer", "median", "worst", "runs" }'

if [ -n "$markdown" ]; then
  {
    echo "# Scoreboard"
    echo
    echo "From the last full \`./hetero.sh bench\` run, started $(cat "$results/started" 2>/dev/null || echo "-") (1, 5 and"
    echo "15 minute load averages), on $(nproc) cores. Each row is one case (hetero's, or another peer's) beside the"
    echo "family's baseline in the same binary; the ratio is the case's time over the baseline's, paired round by round"
    echo "(bench/report.sh): the median over rounds and the worst round. Below 1 the case is faster. Written by"
    echo "bench/scoreboard.sh; the plots beside this file come from the same runs."
    echo
    echo "| benchmark | case | variant | peer (baseline) | median | worst | rounds | command |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | `%s` |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
  } >"$markdown"
  echo "scoreboard written to $markdown"
fi
