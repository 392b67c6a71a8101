#!/usr/bin/env bash
# The emulated-node launcher: places ranks on the nodes asked for, as MPI sees them (hello prints
# each rank's node-local rank and count), refuses layouts that do not add up, and runs without
# root through a user namespace (tried as user nobody when this runs as root).
#   nodes_test.sh <mpiexec_nodes.sh> <hello>
set -uo pipefail
wrapper=$1 hello=$2
failed=0
fail() { echo "FAILED: $*"; failed=1; }

out=$("$wrapper" --nodes 2,2,1 -n 5 "$hello" 1000 2>&1)
rc=$?
[ $rc = 77 ] && { echo "$out"; exit 77; }
echo "$out"
[ $rc = 0 ] || fail "hello on nodes 2,2,1 exited with $rc"
for expected in "rank 0 of 5: node-local rank 0 of 2" "rank 1 of 5: node-local rank 1 of 2" \
  "rank 2 of 5: node-local rank 0 of 2" "rank 3 of 5: node-local rank 1 of 2" "rank 4 of 5: node-local rank 0 of 1"; do
  grep -qF "$expected" <<<"$out" || fail "no line '$expected'"
done

out=$("$wrapper" --per-node 2 -n 3 "$hello" 1000 2>&1)
grep -qF "rank 2 of 3: node-local rank 0 of 1" <<<"$out" || fail "--per-node 2 -n 3 did not put rank 2 alone: $out"

out=$("$wrapper" --nodes 2,2 -n 3 "$hello" 2>&1)
rc=$?
# shellcheck disable=SC2015 # either failing is a failure
[ $rc = 2 ] && grep -qF -- "--nodes 2,2 places 4 ranks, but -n asks for 3" <<<"$out" ||
  fail "a layout of 4 ranks for -n 3 gave exit $rc and: $out"
out=$("$wrapper" --per-node 0 -n 3 "$hello" 2>&1)
rc=$?
# shellcheck disable=SC2015 # either failing is a failure
[ $rc = 2 ] && grep -qF "wants a positive count, got '0'" <<<"$out" || fail "--per-node 0 gave exit $rc and: $out"

if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
  # Without root: the launcher maps the user to root in a user namespace of its own. (hostname,
  # not hello: the libraries the build links may sit where that user cannot read.)
  out=$(cd /tmp && runuser -u nobody -- env HOME=/tmp "$wrapper" -n 2 hostname 2>&1)
  rc=$?
  if [ $rc = 77 ]; then
    echo "unprivileged run SKIPPED here: $out"
  else
    [ "$(sort <<<"$out" | tr '\n' ' ')" = "node0 node1 " ] || fail "as nobody (exit $rc): $out"
  fi
fi
[ $failed = 0 ] && echo "nodes_test: all checks passed"
exit $failed
