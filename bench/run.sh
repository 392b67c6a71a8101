#!/usr/bin/env bash
# Runs every benchmark of a build, summarises medians as ratios to each family's baseline, and
# ends with the scoreboard (bench/scoreboard.sh) over all of them.
#   bench/run.sh <build dir> <results dir> <plots dir>
# Environment: HETERO_BENCH_ROUNDS (rounds of every case, default 7; see bench_main.hpp), HETERO_BENCH_FILTER (a regex on
# benchmark names), HETERO_BENCH_TIMEOUT (seconds per benchmark program, default 1800),
# HETERO_PLOTS=1 (write PNG plots to <plots dir>).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$1
results=$2
plots=$3
rounds=${HETERO_BENCH_ROUNDS:-7}
mkdir -p "$results"
rm -f "$results"/*.json "$results"/*.cmd "$results"/petsc_cg.tsv "$results"/cholesky_starpu_mpi.tsv # the scoreboard reads only this run's results
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >"$results/started"

shopt -s nullglob
lists=("$build"/bench/list.d/*.txt)
[ ${#lists[@]} -gt 0 ] || {
  echo "no benchmarks in $build/bench/list.d" >&2
  exit 1
}
failed=0
for list in "${lists[@]}"; do
  read -r name ranks exe <"$list"
  echo "== $name on $ranks rank(s), $rounds rounds (medians over rounds) =="
  # Not --benchmark_enable_random_interleaving: each rank would shuffle differently and wait
  # forever in another benchmark's collective.
  args=(--hetero_rounds="$rounds" --benchmark_out="$results/$name.json" --benchmark_out_format=json)
  [ -n "${HETERO_BENCH_FILTER:-}" ] && args+=(--benchmark_filter="$HETERO_BENCH_FILTER")
  echo "mpiexec -n $ranks ${exe#"$PWD"/} --hetero_rounds=$rounds${HETERO_BENCH_FILTER:+ --benchmark_filter=$HETERO_BENCH_FILTER}" \
    >"$results/$name.cmd"
  if ! timeout "${HETERO_BENCH_TIMEOUT:-1800}" "${HETERO_MPIEXEC:-mpiexec}" -n "$ranks" "$exe" "${args[@]}"; then
    echo "$name FAILED" >&2
    failed=1
    continue
  fi
  "$here/report.sh" "$results/$name.json"
  if [ "${HETERO_PLOTS:-0}" = 1 ]; then "$here/plot.sh" "$results/$name.json" "$plots"; fi
done
# PETSc's CG (a separate program on Open MPI: bench/linalg/petsc_cg.sh), the CG benchmark's
# external peer; the scoreboard sets it beside linalg_cg's cg_1000 family.
if [ -z "${HETERO_BENCH_FILTER:-}" ] || [[ cg_1000 =~ ${HETERO_BENCH_FILTER} ]]; then
  echo "== petsc_cg: PETSc KSPCG, 1000 fixed iterations, 1 and 2 ranks, $rounds rounds =="
  if ! "$here/linalg/petsc_cg.sh" "$build" "$results" "$rounds"; then
    echo "petsc_cg FAILED" >&2
    failed=1
  fi
fi
# StarPU-MPI's Cholesky on 2 ranks (a separate program on Open MPI: bench/task/cholesky_starpu_mpi.sh), the
# distributed peer of bench_task_cholesky_mpi; the scoreboard sets it beside that benchmark's hetero cases.
if [ -z "${HETERO_BENCH_FILTER:-}" ] || [[ cholesky_2ranks =~ ${HETERO_BENCH_FILTER} ]]; then
  echo "== cholesky_starpu_mpi: StarPU-MPI block Cholesky, 2 ranks, $rounds rounds =="
  if ! "$here/task/cholesky_starpu_mpi.sh" "$build" "$results" "$rounds"; then
    echo "cholesky_starpu_mpi FAILED" >&2
    failed=1
  fi
fi
# One table at the end; a full run (no filter, nothing failed) also writes docs/bench/scoreboard.md.
if [ -z "${HETERO_BENCH_FILTER:-}" ] && [ $failed -eq 0 ]; then
  "$here/scoreboard.sh" "$results" "$plots/scoreboard.md"
else
  "$here/scoreboard.sh" "$results"
fi
exit $failed
