#!/usr/bin/env bash
# Prints, for one Google Benchmark JSON file, each case's median time and its ratio to the
# median of its family's baseline at the same arguments. Names follow
# <family>/<variant>[/<args>...]; a variant named baseline_* is the family's baseline.
#   bench/report.sh <results.json> [--tsv]
set -euo pipefail
json=$1
# One row per median: family, args, variant, time (in the benchmark's unit), unit.
rows=$(jq -r '
  .benchmarks[] | select(.aggregate_name == "median")
  | (.run_name | sub("/(manual|real)_time$"; "") | split("/")) as $p
  | [$p[0], ($p[2:] | join("/")), $p[1], .real_time, .time_unit] | @tsv' "$json")
if [ "${2:-}" = "--tsv" ]; then
  echo "$rows"
  exit 0
fi
echo "$rows" | awk -F'\t' '
  { key = $1 "\t" $2; if ($3 ~ /^baseline/) base[key] = $4; t[NR] = $4; k[NR] = key; line[NR] = $0; n = NR }
  END {
    printf "%-28s %-14s %-22s %14s %8s\n", "family", "args", "variant", "median", "ratio"
    for (i = 1; i <= n; ++i) {
      split(line[i], f, "\t")
      r = (k[i] in base && base[k[i]] > 0) ? sprintf("%.3f", t[i] / base[k[i]]) : "-"
      printf "%-28s %-14s %-22s %11.4g %-2s %8s\n", f[1], (f[2] == "" ? "-" : f[2]), f[3], f[4], f[5], r
    }
  }'
