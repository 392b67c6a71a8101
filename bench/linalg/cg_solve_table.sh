#!/usr/bin/env bash
# The table of docs/results/linalg.md's "Iterations and time to 1e-8 with each preconditioner":
# for each matrix and rank count, the
# iterations to ||b - A x|| / ||b|| <= 1e-8 and the time to solve of hetero's cg_solve cases
# (bench_linalg_cg, one JSON per rank count: medians over its rounds) beside PETSc's CG with its
# default preconditioner and with none (petsc_cg.sh --solve's TSV: median time per iteration
# times the iterations; the median over rounds where it holds several). A solve that did not
# reach the tolerance shows its true residual in brackets; so does PETSc's, whose own stopping
# test reads the recurrence residual. The automatic
# column names, in square brackets, what it chose (over the rounds: each round makes its solver).
#   bench/linalg/cg_solve_table.sh <petsc_cg_solve.tsv> <ranks>=<cg.json> [<ranks>=<cg.json> ...]
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 <petsc_cg_solve.tsv> <ranks>=<cg.json> [<ranks>=<cg.json> ...]" >&2
  exit 2
fi
petsc=$1
shift
{
  for arg in "$@"; do
    ranks=${arg%%=*}
    json=${arg#*=}
    # ranks, matrix, preconditioner, iterations, median ms, converged, residual, chosen (automatic)
    jq -r --arg ranks "$ranks" '
      def median: sort | .[length / 2 | floor];
      [.benchmarks[] | select(.name | startswith("cg_solve/"))]
      | group_by(.run_name)
      | map({pc: (.[0].name | split("/")[1]), matrix: .[0].label, iterations: .[0].iterations,
             converged: .[0].converged, residual: .[0].residual, ms: ([.[].real_time] | median),
             chosen: ([.[].chosen] | map(tostring) | unique | join(","))})
      | .[] | [$ranks, .matrix, .pc, .iterations, .ms, .converged, .residual, .chosen] | @tsv' "$json"
  done
  # PETSc: the same columns, preconditioner petsc_default / petsc_none; where the TSV holds
  # several rounds of a case (cg_solve_run.sh), the median of their times (the upper middle one
  # of an even count, as jq's above), the iterations and residual of the first.
  awk -F'\t' 'NR > 1 && $1 != "matrix" {
      split($5, mode, "pc="); key = $2 "\t" $1 "\tpetsc_" mode[2]
      if (!(key in count)) { order[++n] = key; iters[key] = $6; ok[key] = ($9 <= 1e-8); res[key] = $9 }
      times[key, ++count[key]] = $6 * $7 / 1000
    }
    END {
      for (i = 1; i <= n; ++i) {
        key = order[i]; c = count[key]
        for (a = 2; a <= c; ++a)  # insertion sort of the rounds times
          for (b = a; b > 1 && times[key, b - 1] > times[key, b]; --b) {
            t = times[key, b]; times[key, b] = times[key, b - 1]; times[key, b - 1] = t
          }
        printf "%s\t%s\t%.3f\t%d\t%s\t\n", key, iters[key], times[key, int(c / 2) + 1], ok[key], res[key]
      }
    }' "$petsc"
} | awk -F'\t' '
  BEGIN { names[0] = "none"; names[1] = "jacobi"; names[2] = "chebyshev"; names[3] = "block_ic0" }
  function cell(key) {
    if (!(key in iters)) return "-"
    text = sprintf("%d, %.2f ms", iters[key], ms[key])
    if (!ok[key]) text = text sprintf(" (%.1e)", res[key])
    return text
  }
  {
    key = $1 SUBSEP $2 SUBSEP $3
    iters[key] = $4; ms[key] = $5; ok[key] = $6; res[key] = $7
    if ($8 != "") {  # the indices of cg_preconditioner that automatic chose, over the rounds
      n_names = split($8, picks, ","); text = ""
      for (j = 1; j <= n_names; ++j) text = text (j > 1 ? "/" : "") names[picks[j] + 0]
      chosen[key] = "[" text "]"
    }
    if (!(($1 SUBSEP $2) in seen)) { seen[$1 SUBSEP $2] = 1; order[++n] = $1 SUBSEP $2 }
  }
  END {
    print "| ranks | matrix | none | jacobi | chebyshev | block_ic0 | automatic (default) | PETSc default (bjacobi + ILU(0)) | PETSc none | default / PETSc default |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; ++i) {
      split(order[i], k, SUBSEP)
      a = order[i] SUBSEP "automatic"; p = order[i] SUBSEP "petsc_default"
      ratio = "-"
      if ((a in ms) && (p in ms) && ms[p] > 0) ratio = ok[p] ? sprintf("%.2f", ms[a] / ms[p]) : "PETSc did not converge"
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], cell(order[i] SUBSEP "none"),
             cell(order[i] SUBSEP "jacobi"), cell(order[i] SUBSEP "chebyshev"), cell(order[i] SUBSEP "block_ic0"),
             cell(a) " " chosen[a], cell(p), cell(order[i] SUBSEP "petsc_none"), ratio
    }
  }'
