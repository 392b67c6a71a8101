#!/usr/bin/env bash
# Prints, for one Google Benchmark JSON file, each case's median time and its ratio to the
# median of its family's baseline at the same arguments. Names follow
# <family>/<variant>[/<args>...]; a variant named baseline_* is the family's baseline. The
# median is over the rounds of a case (runs with the same name, see bench_main.hpp), or
# Google Benchmark's own median aggregate where --benchmark_repetitions was used. "paired" is
# the median over rounds of (this case's time in round r / the baseline's time in round r): the
# two ran next to each other, so a phase of the machine that slows both cancels out, whereas the
# ratio of medians can compare a slow phase of one with a fast phase of the other.
# --tsv prints the rows (family, args, variant, median, unit, runs, paired, worst, baseline, bound,
# of_bound; "-" without rounds or bound), where worst is the largest per-round ratio, baseline the
# family's baseline variant at the same arguments, bound the case's counter bound_s (the least
# time the device allows, bench/support/bounds.hpp) in the case's unit, and of_bound median/bound.
# --baseline=VARIANT makes VARIANT each family's baseline instead (where a family has it), e.g.
# hetero_device_alone for a split against the GPU alone.
#   bench/report.sh <results.json> [--tsv] [--baseline=VARIANT]
set -euo pipefail
json=$1
shift
tsv=0 baseline=""
for a in "$@"; do
  case "$a" in
    --tsv) tsv=1 ;;
    --baseline=*) baseline=${a#--baseline=} ;;
    *)
      echo "report.sh: unknown option '$a' (allowed: --tsv, --baseline=VARIANT)" >&2
      exit 2
      ;;
  esac
done
# One row per case: family, args, variant, median time (in the benchmark's unit), unit, runs,
# paired ratio (rounds in run order: Google Benchmark writes the runs in the order they ran).
rows=$(jq -r --arg baseline "$baseline" '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def fixed3: (. * 1000 | round) as $m | "\($m / 1000 | floor).\("00\($m % 1000)" | .[-3:])";
  [.benchmarks[] | select((.aggregate_name // "median") == "median")]
  | group_by(.run_name)
  | sort_by(.[0].family_index, .[0].per_family_instance_index)
  | map((.[0].run_name | sub("/(manual|real)_time$"; "") | split("/")) as $p
        | {family: $p[0], args: ($p[2:] | join("/")), variant: $p[1], unit: .[0].time_unit, times: [.[].real_time],
           bound: (.[0].bound_s // null)})
  | ([.[] | "\(.family)/\(.args)/\(.variant)"]) as $present
  | (map("\(.family)/\(.args)/\($baseline)" as $wanted
         | select(if $baseline != "" and any($present[]; . == $wanted)
                  then .variant == $baseline else .variant | startswith("baseline") end)
         | {key: "\(.family)/\(.args)", value: .}) | from_entries)
      as $base
  | .[]
  | .times as $t
  | $base["\(.family)/\(.args)"] as $bc
  | ($bc.times // null) as $b
  | (if $b != null and ($t | length) > 1
     then [range(0; [($t | length), ($b | length)] | min) | select($b[.] > 0) | $t[.] / $b[.]]
     else [] end) as $ratios
  | [.family, .args, .variant, ($t | median), .unit, ($t | length),
     (if ($ratios | length) > 0 then $ratios | median | fixed3 else "-" end),
     (if ($ratios | length) > 0 then $ratios | max | fixed3 else "-" end),
     ($bc.variant // "-"),
     (if .bound != null and .bound > 0
      then (.bound * ({"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1}[.unit] // 1)) as $b
           | ($b | tostring), (($t | median) / $b | fixed3)
      else "-", "-" end)] | @tsv' "$json")
if [ $tsv -eq 1 ]; then
  echo "$rows"
  exit 0
fi
echo "$rows" | awk -F'\t' '
  { key = $1 "\t" $2; if ($3 == $9) base[key] = $4; t[NR] = $4; k[NR] = key; line[NR] = $0; n = NR }
  END {
    printf "%-28s %-14s %-22s %14s %8s %6s %7s %11s %8s\n", "family", "args", "variant", "median", "ratio", "runs", "paired", "bound", "x bound"
    for (i = 1; i <= n; ++i) {
      split(line[i], f, "\t")
      r = (k[i] in base && base[k[i]] > 0) ? sprintf("%.3f", t[i] / base[k[i]]) : "-"
      b = (f[10] == "-" ? "-" : sprintf("%.4g", f[10]))
      printf "%-28s %-14s %-22s %11.4g %-2s %8s %6s %7s %11s %8s\n", f[1], (f[2] == "" ? "-" : f[2]), f[3], f[4], f[5], r, f[6], f[7], b, f[11]
    }
  }'
