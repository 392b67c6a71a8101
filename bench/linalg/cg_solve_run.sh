#!/usr/bin/env bash
# One command for docs/results/linalg.md's "Iterations and time to 1e-8 with each preconditioner":
# hetero's cg_solve cases (bench_linalg_cg) on 1, 2 and 4 ranks, PETSc's CG with its default
# preconditioner and with none on the same matrices and rank counts (petsc_cg.sh --solve: another
# program, since Debian's PETSc is built on Open MPI), then the table of both
# (cg_solve_table.sh), printed and written to <results dir>/cg_solve_table.md.
#   bench/linalg/cg_solve_run.sh <build dir> <results dir> [rounds]
# rounds: hetero's rounds (--hetero_rounds) per rank count, and PETSc's timed solves (default 5 and 7).
# Without PETSc, the hetero columns alone (petsc_cg.sh prints why it skipped).
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 <build dir> <results dir> [rounds]" >&2
  exit 2
fi
build_dir=$1
results_dir=$2
rounds=${3:-}
if [[ -n $rounds && ! $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "cg_solve_run.sh: rounds must be a positive integer, not '$rounds'" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$build_dir/bench/linalg/bench_linalg_cg
[[ -x $bench ]] || {
  echo "cg_solve_run.sh: $bench not found; build the target bench_linalg_cg first" >&2
  exit 1
}
launcher=${MPIEXEC:-mpiexec}
mkdir -p "$results_dir"
jsons=()
for n in 1 2 4; do
  "$launcher" -n "$n" "$bench" '--benchmark_filter=^cg_solve/' --hetero_rounds="${rounds:-5}" \
    --benchmark_out="$results_dir/cg_solve$n.json" --benchmark_out_format=json > "$results_dir/cg_solve$n.log"
  jsons+=("$n=$results_dir/cg_solve$n.json")
done
rm -f "$results_dir/petsc_cg_solve.tsv"
"$here/petsc_cg.sh" --solve "$build_dir" "$results_dir" "${rounds:-7}" > "$results_dir/petsc_cg_solve.out"
petsc=$results_dir/petsc_cg_solve.tsv
if [[ ! -f $petsc ]]; then # skipped: the table with no PETSc rows
  cat "$results_dir/petsc_cg_solve.out" >&2
  petsc=$(mktemp)
  trap 'rm -f "$petsc"' EXIT
fi
"$here/cg_solve_table.sh" "$petsc" "${jsons[@]}" | tee "$results_dir/cg_solve_table.md"
