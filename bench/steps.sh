#!/usr/bin/env bash
# Prints, for one Google Benchmark JSON file, where each case's time went: the median over its
# rounds of every counter named step_<name> (bench_io's steps of a write or a read, in ms: open,
# stage, checksum, create_dataset, data, attributes, flush, close, copy), one row per case that has
# such counters, one column per step, and the case's median time beside them. Prints nothing
# when no case has step counters.
#   bench/steps.sh <results.json>
set -euo pipefail
[ $# -eq 1 ] || {
  echo "usage: steps.sh <results.json>" >&2
  exit 2
}
jq -r '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  [.benchmarks[] | select((.aggregate_name // "median") == "median")] as $runs
  | ([$runs[] | keys_unsorted[] | select(startswith("step_"))] | unique) as $all
  | ["open", "stage", "checksum", "create_dataset", "data", "attributes", "flush", "close", "copy"] as $order
  | ([$order[] | "step_\(.)" | select(. as $s | $all | index($s))] + [$all[] | select(. as $s | [$order[] | "step_\(.)"] | index($s) | not)]) as $steps
  | if ($steps | length) == 0 then empty else
      (["case", "time"] + [$steps[] | ltrimstr("step_")] | @tsv),
      ($runs | map(select(has($steps[0]))) | group_by(.run_name)
       | sort_by(.[0].family_index, .[0].per_family_instance_index)[]
       | . as $case
       | [($case[0].run_name | sub("/(manual|real)_time$"; "")),
          ([$case[].real_time] | median | . * 100 | round / 100 | tostring) + " " + $case[0].time_unit]
         + [$steps[] as $s | [$case[][$s] // 0] | median | . * 100 | round / 100 | tostring]
       | @tsv)
    end' "$1" | awk -F'\t' '
  { for (i = 1; i <= NF; ++i) { cell[NR, i] = $i; if (length($i) > width[i]) width[i] = length($i) } n = NR; if (NF > cols) cols = NF }
  END {
    for (r = 1; r <= n; ++r) {
      line = sprintf("%-" width[1] "s", cell[r, 1])
      for (i = 2; i <= cols; ++i) line = line sprintf("  %" width[i] "s", cell[r, i])
      print line
    }
  }'
