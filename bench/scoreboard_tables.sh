#!/usr/bin/env bash
# The scoreboard's tables from its rows (tab-separated on stdin: benchmark, case, variant, peer,
# median, worst, rounds, command; what bench/scoreboard.sh collects), in markdown on stdout:
#  - a summary, one row per family (benchmark, variant and peer; for the collectives, per
#    collective too): how many cases, the median of
#    the cases' paired medians, the range of those medians, the worst round of any case, and a
#    verdict on the median of medians: "ahead" below 0.97, "behind" above 1.03, else "level"
#    (prefixed "peer:" where the variant is another library, not hetero; "cost" where the family
#    measures what a feature costs, not a race: the power allocator and monitor, the tile kernels);
#  - then per benchmark its command, written once, and its cases.
set -euo pipefail
rows=$(cat)
[ -n "$rows" ] || { echo "scoreboard_tables.sh: no rows on stdin" >&2; exit 1; }

echo "## Summary"
echo
echo "One row per family: a benchmark's variant beside one peer (for the collectives, per collective). Ratios are the variant's time over the"
echo "peer's, paired round by round (below 1 the variant is faster); \"medians\" is the median over the"
echo "family's cases (sizes, matrices) of each case's median over rounds, with their range; \"worst\" is the"
echo "slowest single round of any case. Verdict on the median of medians: ahead below 0.97, behind above"
echo "1.03, level between; \"peer:\" where the variant is another library beside the baseline, and \"cost\""
echo "where the family measures what a feature costs (the power allocator's and monitor's work, one tile"
echo "kernel against another), not a race."
echo
echo "| benchmark | variant | peer (baseline) | cases | median of medians | medians range | worst round | verdict |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "$rows" | awk -F'\t' '
  {
    # The collectives differ too much to share a row: there the case name (the collective) is
    # part of the family.
    name = $1
    if ($1 == "bench_comm_collectives") { split($2, cs, "/"); name = $1 " " cs[1] }
    key = name SUBSEP $3 SUBSEP $4
    if (!(key in n)) order[++keys] = key
    n[key]++
    m[key, n[key]] = $5 + 0
    if (!(key in worst) || $6 + 0 > worst[key]) worst[key] = $6 + 0
  }
  END {
    for (k = 1; k <= keys; ++k) {
      key = order[k]
      c = n[key]
      for (i = 1; i <= c; ++i) v[i] = m[key, i]
      for (i = 2; i <= c; ++i) { x = v[i]; j = i - 1; while (j >= 1 && v[j] > x) { v[j + 1] = v[j]; --j } v[j + 1] = x }
      med = (c % 2 == 1) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
      verdict = med < 0.97 ? "ahead" : (med > 1.03 ? "behind" : "level")
      split(key, part, SUBSEP)
      if (part[2] ~ /^(omp_|tbb|lapacke|starpu)/) verdict = "peer: " verdict
      if (part[1] ~ /^bench_(power_allocator|power_monitor|task_tile_kernels)$/) verdict = "cost"
      printf "| %s | %s | %s | %d | %.3f | %.3f-%.3f | %.3f | %s |\n", part[1], part[2], part[3], c, med, v[1], v[c], worst[key], verdict
    }
  }'
echo
echo "## Every case"
printf '%s\n' "$rows" | awk -F'\t' '
  $1 != current {
    current = $1
    printf "\n### %s\n\n`%s`\n\n| case | variant | peer (baseline) | median | worst | rounds |\n|---|---|---|---|---|---|\n", $1, $8
  }
  { printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7 }'
