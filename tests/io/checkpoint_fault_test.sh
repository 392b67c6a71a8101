#!/bin/bash
# Checkpoints under real faults, each in jobs of their own (checkpoint_fault.cpp does the work):
#   killed <mpiexec> <program> <folder>: a 3-rank job whose last rank is killed (SIGKILL) in the
#     middle of checkpoint 2 ends; a new job on 2 ranks restores checkpoint 1, every element.
#   full <mpiexec> <program> <folder>: a 2-rank job on a 4 MiB tmpfs (a mount namespace of its
#     own) commits checkpoint 1, then writes a checkpoint 2 of 8 MiB: every rank gets io_error
#     and checkpoint 1 stays current and whole. Where mount namespaces or tmpfs mounts are
#     refused (no root, a container), this part is reported as skipped (exit 77), not passed.
set -u
mode=$1 mpiexec=$2 program=$3 work=$4
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
salt=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
echo "values salted $salt (fresh each run)"

case $mode in
killed)
  "$mpiexec" -n 3 "$program" die "$work/run" "$salt"
  rc=$?
  echo "the job with the killed rank exited $rc; its folder:"
  ls -l "$work"
  [ $rc -ne 0 ] || fail "the job with a killed rank exited 0"
  [ -f "$work/run.000001.h5" ] || fail "checkpoint 1 is gone"
  [ ! -e "$work/run.000002.h5" ] || fail "checkpoint 2 became current although a rank died writing it"
  [ -f "$work/run.000002.h5.partial" ] || fail "no partial checkpoint 2: the kill did not come in the middle of it"
  "$mpiexec" -n 2 "$program" restore "$work/run" "$salt" 1 || fail "the restart did not restore checkpoint 1 whole"
  ;;
full)
  if ! unshare --mount true 2>/dev/null; then
    echo "SKIPPED: this user may not make a mount namespace (unshare --mount), so no small tmpfs"
    exit 77
  fi
  unshare --mount bash -c "mount -t tmpfs -o size=4m hetero-full '$work' || exit 77
    '$mpiexec' -n 2 '$program' fill '$work/run' '$salt'"
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "SKIPPED: a tmpfs cannot be mounted here"
    exit 77
  fi
  [ $rc -eq 0 ] || fail "the full file system was not handled (exit $rc)"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo "passed"
