#!/usr/bin/env bash
# StarPU-MPI's block Cholesky on 2 ranks, the distributed peer of bench_task_cholesky_mpi (hetero's tasklets and
# MPI+OpenMP on 2 ranks, 1 worker each): the same tiles, kernels and sizes, StarPU's right-looking order (without and
# with critical-path priorities) and hetero's left-looking one (cholesky_starpu_mpi.cpp), 1 CPU worker per rank, double
# and single precision.
#
# usage: bench/task/cholesky_starpu_mpi.sh <build dir> <results dir> [rounds] [sizes]
#   builds <build dir>/starpu-mpi/cholesky_starpu_mpi, writes <results dir>/cholesky_starpu_mpi.tsv (and .log: StarPU's
#   messages) and prints the TSV. rounds: timed factorisations per case after one warm-up (default 7); sizes: the
#   matrix orders, quoted (default "2048 4096 8192"); where N <= 2048 the factor is checked by its residual.
#
# Debian's StarPU-MPI is built on Open MPI while hetero builds with MPICH, so this is a separate program compiled with
# mpicxx.openmpi and launched with mpiexec.openmpi (Open MPI's default binding: each rank on its own core, where
# StarPU's MPI thread shares the core with the rank's worker); never with the unversioned mpicxx/mpiexec.
# Without StarPU-MPI or Open MPI it prints "StarPU-MPI Cholesky SKIPPED: ..." and exits 0.
set -euo pipefail

RANKS=2

usage() {
  echo "usage: $0 <build dir> <results dir> [rounds] [sizes]" >&2
  exit 2
}
[[ $# -ge 2 && $# -le 4 ]] || usage
build_dir=$1
results_dir=$2
rounds=${3:-7}
sizes=${4:-2048 4096 8192}
if [[ ! $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "cholesky_starpu_mpi.sh: rounds must be a positive integer, not '$rounds'" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
examples=$(cd "$here/../../examples/cholesky" && pwd)

skip() {
  echo "StarPU-MPI Cholesky SKIPPED: $*"
  exit 0
}
command -v pkg-config > /dev/null || skip "pkg-config is not installed"
pkg-config --exists starpumpi-1.3 || skip "StarPU-MPI 1.3 is not installed (no pkg-config module starpumpi-1.3; apt-get install libstarpu-dev)"
command -v mpicxx.openmpi > /dev/null || skip "mpicxx.openmpi (Open MPI's compiler; libopenmpi-dev) is missing"
command -v mpiexec.openmpi > /dev/null || skip "mpiexec.openmpi (Open MPI's launcher; openmpi-bin) is missing"

mkdir -p "$build_dir/starpu-mpi" "$results_dir"
program=$build_dir/starpu-mpi/cholesky_starpu_mpi
# OMPI_SKIP_MPICXX: the C API only (Open MPI's C++ bindings do not compile cleanly as C++20)
# shellcheck disable=SC2046 # pkg-config's flags are meant to split into words
mpicxx.openmpi -std=c++20 -O2 -DOMPI_SKIP_MPICXX=1 -I"$here" -I"$examples" -o "$program" "$here/cholesky_starpu_mpi.cpp" \
  $(pkg-config --cflags --libs starpumpi-1.3 starpu-1.3) -llapacke -lopenblas

launcher=(mpiexec.openmpi --oversubscribe)
[[ $(id -u) -ne 0 ]] || launcher+=(--allow-run-as-root) # Open MPI refuses to run as root without it

arguments=(--rounds "$rounds")
for n in $sizes; do arguments+=(--n "$n"); done
tsv=$results_dir/cholesky_starpu_mpi.tsv
log=$results_dir/cholesky_starpu_mpi.log
partial=$tsv.partial
echo "StarPU $(pkg-config --modversion starpumpi-1.3), $(mpiexec.openmpi --version 2>&1 | sed -n 1p), $RANKS ranks," \
  "sizes $sizes, $rounds rounds" > "$log"
# One BLAS thread per task, as in the one-rank StarPU families.
if ! OPENBLAS_NUM_THREADS=1 "${launcher[@]}" -x OPENBLAS_NUM_THREADS -n "$RANKS" "$program" "${arguments[@]}" \
  > "$partial" 2>> "$log"; then
  cat "$log" >&2
  echo "cholesky_starpu_mpi.sh: cholesky_starpu_mpi failed; see $log" >&2
  exit 1
fi
mv "$partial" "$tsv"
cat "$tsv"
