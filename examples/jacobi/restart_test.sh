#!/bin/bash
# jacobi stopped and restarted: one uninterrupted run on 2 ranks; then a run on 3 ranks (rows)
# that checkpoints every 100 sweeps and stops after 450; a run from sweep 0 into the same
# checkpoints, refused; then a restart on 2 ranks (grid) from the newest checkpoint (sweep 400)
# that converges, checks the exact solution and writes the field. The restarted run must need the same number of sweeps as the uninterrupted one: Jacobi
# is deterministic, so a checkpoint that lost or changed anything would show here.
set -u
mpiexec=$1 jacobi=$2 work=$3
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
straight=$("$mpiexec" -n 2 "$jacobi" 32 grid 1e-9) || fail "the uninterrupted run failed: $straight"
echo "$straight"
"$mpiexec" -n 3 "$jacobi" 32 rows 1e-9 --checkpoint "$work/jacobi" --every 100 --stop-after 450 || fail "the first part failed"
ls "$work"
# A run from sweep 0 into the same checkpoints is refused before its first sweep.
refused=$("$mpiexec" -n 2 "$jacobi" 32 grid 1e-9 --checkpoint "$work/jacobi" 2>&1) \
  && fail "a run from sweep 0 beside another run's checkpoints ran: $refused"
grep -q "checkpoints of another run are at $work/jacobi (the newest: $work/jacobi.000400.h5): pass --restart" \
  <<<"$refused" || fail "not refused with its message: $refused"
restarted=$("$mpiexec" -n 2 "$jacobi" 32 grid 1e-9 --checkpoint "$work/jacobi" --restart --write "$work/u.h5") \
  || fail "the restarted run failed: $restarted"
echo "$restarted"
grep -q "restarted from $work/jacobi.000400.h5: sweep 400" <<<"$restarted" || fail "not restarted from sweep 400"
total() { sed -n 's/^\([0-9]*\) sweeps (.*/\1/p' <<<"$1"; }
[ -n "$(total "$straight")" ] && [ "$(total "$straight")" = "$(total "$restarted")" ] \
  || fail "the restarted run took $(total "$restarted") sweeps in all, the uninterrupted one $(total "$straight")"
[ -s "$work/u.h5" ] || fail "no field written"
echo "passed: $(total "$restarted") sweeps either way"
