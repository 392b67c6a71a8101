#!/usr/bin/env bash
# One command for docs/results/linalg.md's "Iterations and time to 1e-8 with each preconditioner":
# hetero's cg_solve cases (bench_linalg_cg) on 1, 2 and 4 ranks, PETSc's CG with its default
# preconditioner and with none on the same matrices and rank counts (petsc_cg.sh --solve: another
# program, since Debian's PETSc is built on Open MPI), then the table of both
# (cg_solve_table.sh), printed and written to <results dir>/cg_solve_table.md.
#   bench/linalg/cg_solve_run.sh <build dir> <results dir> [rounds]
# rounds (default 5): the two programs take turns, one round each, so that both meet the same
# spells of a shared machine (a round of hetero: one solver per case and rank count, timed over
# 5 solves; of PETSc: 3 timed solves after a warm-up, their median). The table gives each
# side's median over the rounds; the rounds' files are kept under <results dir>/rounds.
# Without PETSc, the hetero columns alone (petsc_cg.sh prints why it skipped).
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 <build dir> <results dir> [rounds]" >&2
  exit 2
fi
build_dir=$1
results_dir=$2
rounds=${3:-5}
if [[ ! $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "cg_solve_run.sh: rounds must be a positive integer, not '$rounds'" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$build_dir/bench/linalg/bench_linalg_cg
[[ -x $bench ]] || {
  echo "cg_solve_run.sh: $bench not found; build the target bench_linalg_cg first" >&2
  exit 1
}
command -v jq > /dev/null || {
  echo "cg_solve_run.sh: jq is missing (apt-get install jq)" >&2
  exit 1
}
launcher=${MPIEXEC:-mpiexec}
mkdir -p "$results_dir/rounds"
petsc=$results_dir/petsc_cg_solve.tsv
rm -f "$petsc"
petsc_skipped=0
for ((r = 1; r <= rounds; ++r)); do
  for n in 1 2 4; do
    "$launcher" -n "$n" "$bench" '--benchmark_filter=^cg_solve/' --hetero_rounds=1 \
      --benchmark_out="$results_dir/rounds/cg_solve$n.$r.json" --benchmark_out_format=json \
      > "$results_dir/rounds/cg_solve$n.$r.log"
  done
  ((petsc_skipped)) && continue
  round_dir=$results_dir/rounds/petsc$r
  "$here/petsc_cg.sh" --solve "$build_dir" "$round_dir" 3 > "$round_dir.out"
  if [[ ! -f $round_dir/petsc_cg_solve.tsv ]]; then # skipped: the table with no PETSc rows
    cat "$round_dir.out" >&2
    petsc_skipped=1
    continue
  fi
  # One TSV of every round's rows (the header once): the table takes the median per matrix.
  if [[ -f $petsc ]]; then tail -n +2 "$round_dir/petsc_cg_solve.tsv" >> "$petsc"; else cp "$round_dir/petsc_cg_solve.tsv" "$petsc"; fi
done
jsons=()
for n in 1 2 4; do
  jq -s '{context: .[0].context, benchmarks: (map(.benchmarks) | add)}' \
    "$results_dir"/rounds/cg_solve"$n".*.json > "$results_dir/cg_solve$n.json"
  jsons+=("$n=$results_dir/cg_solve$n.json")
done
if [[ ! -f $petsc ]]; then
  petsc=$(mktemp)
  trap 'rm -f "$petsc"' EXIT
fi
"$here/cg_solve_table.sh" "$petsc" "${jsons[@]}" | tee "$results_dir/cg_solve_table.md"
