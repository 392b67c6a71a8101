#!/usr/bin/env bash
# The test `bench.support`: what bench_main.hpp and bench/report.sh promise about rounds.
#   check_support.sh <a benchmark with two or more cases, run on 2 ranks> <mpiexec> <report.sh>
# 1. Odd rounds run the cases in reverse order (so no side of a pair always runs second).
# 2. report.sh's ratio is the ratio of the medians, and "paired" the median over rounds of the
#    per-round ratios: on a file where the two differ (baseline 1, 2, 3 ms; rival 2, 2, 9 ms:
#    medians 2 and 2, per-round ratios 2, 1, 3), the row must read 1.000 and 2.000, and the
#    worst round 3.000.
# 3. report.sh --baseline=rival makes the rival the family's baseline (the baseline_x row then
#    reads paired 0.500, the median of 1/2, 1, 1/3), and refuses an unknown option.
# 4. scoreboard.sh (beside report.sh) puts the rival beside its baseline with 2.000 and 3.000:
#    in the summary (one case, verdict behind) and under the benchmark's command.
# 5. steps.sh prints each case's median step_<name> counters in bench_io's order of steps, and
#    nothing for a file without them.
set -euo pipefail
bench=$1 mpiexec=$2 report=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "bench.support: $*" >&2
  exit 1
}

"$mpiexec" -n 2 "$bench" --hetero_rounds=2 --benchmark_min_time=0.001 --benchmark_format=json \
  --benchmark_out="$tmp/rounds.json" --benchmark_out_format=json >/dev/null
mapfile -t names < <(jq -r '.benchmarks[].run_name' "$tmp/rounds.json")
count=${#names[@]}
[ "$count" -ge 4 ] && [ $((count % 2)) -eq 0 ] || fail "expected two rounds of two or more cases, got $count runs"
half=$((count / 2))
for ((i = 0; i < half; ++i)); do
  [ "${names[i]}" = "${names[count - 1 - i]}" ] \
    || fail "round 2 is not round 1 reversed: run $((i + 1)) is ${names[i]}, run $((count - i)) is ${names[count - 1 - i]}"
done

run() { printf '{"run_name": "%s", "real_time": %s, "time_unit": "ms", "family_index": %s, "per_family_instance_index": 0}' "$@"; }
{
  printf '{"benchmarks": ['
  printf '%s,' "$(run f/baseline_x/8 1 0)" "$(run f/rival/8 2 1)" "$(run f/rival/8 2 1)" "$(run f/baseline_x/8 2 0)"
  printf '%s,' "$(run f/baseline_x/8 3 0)"
  run f/rival/8 9 1
  printf ']}\n'
} >"$tmp/fixture.json"
got=$("$report" "$tmp/fixture.json" --tsv)
want=$(printf 'f\t8\tbaseline_x\t2\tms\t3\t1.000\t1.000\tbaseline_x\t-\t-\nf\t8\trival\t2\tms\t3\t2.000\t3.000\tbaseline_x\t-\t-')
[ "$got" = "$want" ] || fail "report.sh --tsv on the fixture printed
$got
instead of
$want"
line=$("$report" "$tmp/fixture.json" | awk '$3 == "rival"')
[ "$(echo "$line" | awk '{print $6, $8}')" = "1.000 2.000" ] \
  || fail "report.sh's table row for the rival should show ratio 1.000 and paired 2.000: $line"
got=$("$report" "$tmp/fixture.json" --tsv --baseline=rival | awk -F'\t' '$3 == "baseline_x" {print $7, $9}')
[ "$got" = "0.500 rival" ] || fail "report.sh --baseline=rival should make the rival the baseline: $got"
# 6. A case's bound_s counter (seconds) is printed in the case's unit, with median / bound:
#    times 3, 4, 5 us against a bound of 2 us read 2 and 2.000.
bound() { printf '{"run_name": "g/hetero/16", "real_time": %s, "time_unit": "us", "family_index": 0, "per_family_instance_index": 0, "bound_s": 2e-6}' "$1"; }
printf '{"benchmarks": [%s, %s, %s]}\n' "$(bound 3)" "$(bound 4)" "$(bound 5)" >"$tmp/bound.json"
got=$("$report" "$tmp/bound.json" --tsv | cut -f4,10,11)
[ "$got" = $'4\t2\t2.000' ] || fail "report.sh should print the bound in us and median/bound: $got"
[ "$("$report" "$tmp/bound.json" | awk '$3 == "hetero" {print $(NF - 1), $NF}')" = "2 2.000" ] \
  || fail "report.sh's table should end with the bound and median/bound: $("$report" "$tmp/bound.json")"
if "$report" "$tmp/fixture.json" --bogus >/dev/null 2>&1; then fail "report.sh accepted an unknown option"; fi
mkdir "$tmp/results"
cp "$tmp/fixture.json" "$tmp/results/fixture.json"
echo "mpiexec -n 1 fixture" >"$tmp/results/fixture.cmd"
"$(dirname "$report")/scoreboard.sh" "$tmp/results" "$tmp/scoreboard.md" >/dev/null
# The summary's row (one case: its median is the family's), then the case under its command.
grep -qF '| fixture | rival | baseline_x | 1 | 2.000 | 2.000-2.000 | 3.000 | behind |' "$tmp/scoreboard.md" \
  || fail "scoreboard.sh's summary row for the rival is wrong: $(grep rival "$tmp/scoreboard.md")"
grep -qF '| f/8 | rival | baseline_x | 2.000 | 3.000 | 3 |' "$tmp/scoreboard.md" \
  || fail "scoreboard.sh's case row for the rival is wrong: $(grep rival "$tmp/scoreboard.md")"
grep -A2 -F '### fixture' "$tmp/scoreboard.md" | grep -qF '`mpiexec -n 1 fixture`' \
  || fail "scoreboard.sh does not give the fixture's command under its heading"
steps="$(dirname "$report")/steps.sh"
step() { printf '{"run_name": "w/hetero/8/manual_time", "real_time": %s, "time_unit": "ms", "family_index": 0, "per_family_instance_index": 0, "step_data": %s, "step_open": %s}' "$@"; }
{
  printf '{"benchmarks": ['
  printf '%s,' "$(step 10 4 1)" "$(step 30 8 3)"
  step 20 6 2
  printf ']}\n'
} >"$tmp/steps.json"
got=$("$steps" "$tmp/steps.json" | tr -s ' ')
want=$'case time open data\nw/hetero/8 20 ms 2 6'
[ "$got" = "$want" ] || fail "steps.sh on the fixture printed
$got
instead of
$want"
[ -z "$("$steps" "$tmp/fixture.json")" ] || fail "steps.sh printed steps for a file without step counters"
echo "bench.support: rounds alternate their order; report.sh's ratios and baselines, scoreboard.sh's rows and steps.sh's medians are right"
