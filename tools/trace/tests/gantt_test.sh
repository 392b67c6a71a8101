#!/usr/bin/env bash
# The trace tools end to end: the Cholesky example on 2 ranks writes a trace (HETERO_TRACE); the
# trace is valid JSON with both ranks' tasks; gantt.sh draws it as a PNG; merge.sh merges per-rank
# files; gantt.sh refuses what is not a trace, and a missing file, with exit 2 and a message.
#   gantt_test.sh <mpiexec> <cholesky> <tools/trace folder> <work folder>
set -euo pipefail
mpiexec=$1 cholesky=$2 tools=$3 work=$4
mkdir -p "$work"
trace=$work/cholesky.json
rm -f "$trace" "$work"/*.png
fail() { echo "FAILED: $*" >&2; exit 1; }

HETERO_TRACE=$trace "$mpiexec" -n 2 "$cholesky" 512 64 double
[ -s "$trace" ] || fail "no trace written to $trace"
jq empty "$trace" || fail "$trace is not valid JSON"
for rank in 0 1; do
  tasks=$(jq "[.traceEvents[] | select(.ph == \"X\" and .pid == $rank and .cat == \"task\")] | length" "$trace")
  # n = 512, b = 64: 8 tile rows; every rank runs potrf, trsm, syrk and gemm tasks
  [ "$tasks" -ge 20 ] || fail "rank $rank has $tasks task events"
  for kind in potrf trsm syrk gemm; do
    n=$(jq "[.traceEvents[] | select(.pid == $rank and .cat == \"task\" and (.name | startswith(\"$kind\")))] | length" "$trace")
    [ "$n" -ge 1 ] || fail "rank $rank has no $kind task"
  done
done
echo "trace: $(jq '.traceEvents | length' "$trace") events"

"$tools/gantt.sh" "$trace" "$work/cholesky.png" "test" | tee "$work/gantt.out"
grep -q "(2 rows," "$work/gantt.out" || fail "gantt.sh did not draw 2 rows"
[ "$(head -c 8 "$work/cholesky.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "not a PNG"

# Two ranks' parts as separate files, merged: the same events.
jq '{displayTimeUnit, traceEvents: [.traceEvents[] | select(.pid == 0)]}' "$trace" >"$work/part.rank0"
jq '{displayTimeUnit, traceEvents: [.traceEvents[] | select(.pid == 1)]}' "$trace" >"$work/part.rank1"
"$tools/merge.sh" "$work/merged.json" "$work/part.rank0" "$work/part.rank1"
[ "$(jq '.traceEvents | length' "$work/merged.json")" = "$(jq '.traceEvents | length' "$trace")" ] ||
  fail "merge.sh lost events"

# Refusals: exit 2 and a message naming the problem.
echo '{"not": "a trace"}' >"$work/bad.json"
set +e
"$tools/gantt.sh" "$work/bad.json" "$work/bad.png" 2>"$work/bad.err"
status=$?
"$tools/gantt.sh" "$work/missing.json" "$work/bad.png" 2>"$work/missing.err"
missing=$?
set -e
[ "$status" = 2 ] && grep -q "not a trace\|no complete events" "$work/bad.err" || fail "bad trace: exit $status, $(cat "$work/bad.err")"
[ "$missing" = 2 ] && grep -q "cannot read" "$work/missing.err" || fail "missing trace: exit $missing"
echo "gantt_test: ok"
