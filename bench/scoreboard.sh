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
# PETSc's CG (bench/linalg/petsc_cg.sh: a separate program, on Open MPI) beside linalg_cg's
# cg_1000 cases on the same matrices and rank count. Not paired (two programs, run one after the
# other): the ratio is hetero's median over rounds / PETSc's median, and "worst" hetero's slowest
# round / PETSc's median.
petsc_tsv=$results/petsc_cg.tsv
cg_name=bench_linalg_cg # the CG benchmark's results: <results>/<target>.json and .cmd (bench/run.sh)
if [ -f "$results/$cg_name.json" ] && [ -f "$petsc_tsv" ]; then
  cg_command=$(cat "$results/$cg_name.cmd" 2>/dev/null || echo "-")
  cg_ranks=$(sed -n 's/.* -n \([0-9]*\) .*/\1/p' <<<"$cg_command")
  while IFS= read -r row; do
    rows+=("$row")
  done < <(jq -r '
      def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      [.benchmarks[] | select((.run_name | startswith("cg_1000/")) and ((.run_name | split("/"))[1] | startswith("baseline") | not))]
      | group_by(.run_name)[] | [(.[0].run_name | split("/"))[1], .[0].label, ([.[].real_time] | median), ([.[].real_time] | max), length]
      | @tsv' "$results/$cg_name.json" \
    | awk -F'\t' -v ranks="${cg_ranks:-2}" -v command="$cg_command; bench/linalg/petsc_cg.sh" '
      FNR == NR { if (FNR > 1 && $2 == ranks) petsc[$1] = $7; next }
      ($2 in petsc) && petsc[$2] > 0 {
        printf "bench_linalg_cg vs petsc_cg\tcg_1000/%s\t%s\tPETSc KSPCG (%s ranks, separate program)\t%.3f\t%.3f\t%s\t%s\n",
               $2, $1, ranks, $3 / petsc[$2], $4 / petsc[$2], $5, command
      }' "$petsc_tsv" -)
fi
# StarPU-MPI's Cholesky (bench/task/cholesky_starpu_mpi.sh: a separate program, on Open MPI) beside
# bench_task_cholesky_mpi's 2-rank hetero cases of the same precision and size; the peer is StarPU's
# fastest variant at each point (right-looking without or with priorities, or left-looking). Not
# paired either, as PETSc's above.
starpu_tsv=$results/cholesky_starpu_mpi.tsv
chol_name=bench_task_cholesky_mpi
if [ -f "$results/$chol_name.json" ] && [ -f "$starpu_tsv" ]; then
  chol_command=$(cat "$results/$chol_name.cmd" 2>/dev/null || echo "-")
  while IFS= read -r row; do
    rows+=("$row")
  done < <(jq -r '
      def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      [.benchmarks[] | select((.run_name | startswith("cholesky_2ranks_")) and ((.run_name | split("/"))[1] == "hetero"))]
      | group_by(.run_name)[] | (.[0].run_name | split("/")) as $p
      | [($p[0] | ltrimstr("cholesky_2ranks_")), $p[2], ([.[].real_time] | median), ([.[].real_time] | max), length]
      | @tsv' "$results/$chol_name.json" \
    | awk -F'\t' -v command="$chol_command; bench/task/cholesky_starpu_mpi.sh" '
      FNR == NR {
        if (FNR > 1) { key = $1 "/" $3; if (!(key in best) || $7 < best[key]) { best[key] = $7; order[key] = $2 } }
        next
      }
      ($1 "/" $2 in best) && best[$1 "/" $2] > 0 {
        key = $1 "/" $2
        printf "%s vs cholesky_starpu_mpi\tcholesky_2ranks_%s/%s\thetero\tStarPU-MPI %s (2 ranks, separate program)\t%.3f\t%.3f\t%s\t%s\n",
               "'"$chol_name"'", $1, $2, order[key], $3 / best[key], $4 / best[key], $5, command
      }' "$starpu_tsv" -)
fi
[ ${#rows[@]} -gt 0 ] || {
  echo "scoreboard: no paired results in $results" >&2
  exit 1
}

echo "== scoreboard: variant / peer, paired over rounds (below 1: the variant is faster) =="
printf '%s\n' "${rows[@]}" | awk -F'\t' '
  { printf "%-26s %-34s %-24s %-26s %7s %7s %4s\n", $1, $2, $3, $4, $5, $6, $7 }
  BEGIN { printf "%-26s %-34s %-24s %-26s %7s %7s %4s\n", "benchmark", "case", "variant", "peer", "median", "worst", "runs" }'

printf '%s\n' "${rows[@]}" >"$results/scoreboard.tsv" # the rows, for bench/scoreboard_tables.sh
if [ -n "$markdown" ]; then
  {
    echo "# Scoreboard"
    echo
    echo "From the last full \`./hetero.sh bench\` run, started $(cat "$results/started" 2>/dev/null || echo "-") (1, 5 and"
    echo "15 minute load averages), on $(nproc) cores. Each case (hetero's, or another peer's) ran beside its"
    echo "family's baseline in the same binary; the ratio is the case's time over the baseline's, paired round by"
    echo "round (bench/report.sh). Below 1 the case is faster. Written by bench/scoreboard.sh (the tables by"
    echo "bench/scoreboard_tables.sh from $results/scoreboard.tsv). The plots beside this file come from this run"
    echo "only when it was made with --plots; each plot is named, with its run, in the docs that show it."
    echo
    printf '%s\n' "${rows[@]}" | "$here/scoreboard_tables.sh"
  } >"$markdown"
  echo "scoreboard written to $markdown"
fi
