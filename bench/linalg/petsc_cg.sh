#!/usr/bin/env bash
# PETSc baseline for hetero's CG benchmark (cg_1000, the seed's mode): KSPCG with no preconditioner, 1000 fixed
# iterations, microseconds per iteration, on the SuiteSparse matrices of data/matrices, with 1 and 2 ranks and the
# same row blocks as hetero (petsc_cg.c).
#
# With --solve, the baseline of cg_bench's cg_solve instead: solves to ||r|| / ||b|| <= 1e-8 (b = A * ones), with
# PETSc's default preconditioner (block Jacobi, ILU(0) per rank) and with none, on 1, 2 and 4 ranks; the TSV's
# iterations column is then the iterations to the tolerance, and the time per iteration times it the time to solve.
#
# usage: bench/linalg/petsc_cg.sh [--solve] <build dir> <results dir> [rounds]
#   builds <build dir>/petsc/petsc_cg, writes <results dir>/petsc_cg.tsv (--solve: petsc_cg_solve.tsv; and the .log
#   beside it: the solver's messages) and prints the TSV. rounds: timed solves per matrix after one warm-up solve
#   (default 7).
#
# Debian's PETSc is built on Open MPI while hetero builds with MPICH, so this is a separate program compiled with
# mpicc.openmpi and launched with mpiexec.openmpi; never with the unversioned mpicc/mpiexec (those stay MPICH's).
# Without PETSc or Open MPI it prints "PETSc CG SKIPPED: ..." and exits 0.
set -euo pipefail

MATRICES="bcsstk14 1138_bus bcsstk19 nos7 nos3 gr_30_30" # cg_bench.cpp's cg_1000 set
RANKS="1 2"
ITERATIONS=1000

usage() {
  echo "usage: $0 [--solve] <build dir> <results dir> [rounds]" >&2
  exit 2
}
solve=0
if [[ ${1:-} == --solve ]]; then
  solve=1
  shift
fi
[[ $# -eq 2 || $# -eq 3 ]] || usage
build_dir=$1
results_dir=$2
rounds=${3:-7}
if [[ ! $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "petsc_cg.sh: rounds must be a positive integer, not '$rounds'" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_file=$here/petsc_cg.c
matrix_dir=$(cd "$here/../.." && pwd)/data/matrices

skip() {
  echo "PETSc CG SKIPPED: $*"
  exit 0
}
command -v pkg-config > /dev/null || skip "pkg-config is not installed"
petsc=""
for name in PETSc petsc; do
  if pkg-config --exists "$name"; then
    petsc=$name
    break
  fi
done
[[ -n $petsc ]] || skip "PETSc is not installed (no pkg-config module PETSc or petsc; apt-get install petsc-dev)"
command -v mpicc.openmpi > /dev/null || skip "mpicc.openmpi (Open MPI's compiler; libopenmpi-dev) is missing"
command -v mpiexec.openmpi > /dev/null || skip "mpiexec.openmpi (Open MPI's launcher; openmpi-bin) is missing"

paths=()
for m in $MATRICES; do
  if [[ -f $matrix_dir/$m.mtx.gz ]]; then
    paths+=(--matrix "$matrix_dir/$m.mtx.gz")
  else
    echo "petsc_cg.sh: $matrix_dir/$m.mtx.gz not found; skipping $m" >&2
  fi
done
[[ ${#paths[@]} -gt 0 ]] || skip "none of the matrices ($MATRICES) is in $matrix_dir"

mkdir -p "$build_dir/petsc" "$results_dir"
program=$build_dir/petsc/petsc_cg
# shellcheck disable=SC2046 # pkg-config's flags are meant to split into words
mpicc.openmpi -O2 -o "$program" "$source_file" $(pkg-config --cflags --libs "$petsc") -lz

launcher=(mpiexec.openmpi --oversubscribe)
[[ $(id -u) -ne 0 ]] || launcher+=(--allow-run-as-root) # Open MPI refuses to run as root without it

name=petsc_cg
modes=("--fixed $ITERATIONS")
if ((solve)); then
  name=petsc_cg_solve
  RANKS="1 2 4"
  modes=("--rtol 1e-8 --pc default" "--rtol 1e-8 --pc none")
fi
tsv=$results_dir/$name.tsv
log=$results_dir/$name.log
partial=$tsv.partial
columns=(matrix ranks rows nnz mode iterations median_us_per_iteration worst_us_per_iteration relative_residual)
(IFS=$'\t' && echo "${columns[*]}") > "$partial"
: > "$log"
echo "PETSc $(pkg-config --modversion "$petsc") ($petsc), $(mpiexec.openmpi --version 2>&1 | sed -n 1p)," \
  "modes: ${modes[*]}, $rounds rounds" >> "$log"
for r in $RANKS; do
  for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086 # a mode is several arguments
    if ! "${launcher[@]}" -n "$r" "$program" "${paths[@]}" $mode --rounds "$rounds" >> "$partial" 2>> "$log"; then
      cat "$log" >&2
      echo "petsc_cg.sh: petsc_cg failed with $r rank(s), $mode; see $log" >&2
      exit 1
    fi
  done
done
mv "$partial" "$tsv"
cat "$tsv"
