#!/usr/bin/env bash
# Many ranks on emulated nodes: every example and (with --tests) every MPI test that CTest runs
# on 2 ranks, run again on N ranks in nodes of K (default: 16 ranks in nodes of 4, then 32 in
# nodes of 8), with the default wait timeout. Outside the test command: on a machine of few
# cores these runs are heavily oversubscribed and take minutes. Prints one line per run and a
# summary; exits non-zero when any run failed.
#
#   tools/nodes/scale.sh <build dir> [--tests] [--only <regex>] [--limit <seconds>] [N:K ...]
#
# --limit: seconds one run may take before it counts as failed (default 900).
# The commands are the ones CTest registered for 2 ranks (`ctest --show-only=json-v1`), with
# `mpiexec -n 2` replaced by tools/nodes/mpiexec_nodes.sh --per-node K -n N. Tests that are not
# yet expected to hold across nodes (their emulated-node run is registered disabled,
# docs/nodes.md) are left out and listed. Each run gets the test's ENVIRONMENT and working
# directory, counts as passed by failing where CTest expects it to fail (WILL_FAIL), and runs
# with HETERO_TEST_TIME_SCALE (printed; set it to override): the wait limits that tests set
# themselves (the fault tests' 1 s) and the runs they time, that many times longer. Everything
# else waits with hetero's default timeout.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?"usage: scale.sh <build dir> [--tests] [--only <regex>] [--limit <seconds>] [N:K ...]"}
shift
labels="example"
only="."
limit=900
layouts=()
while [ $# -gt 0 ]; do
  case $1 in
    --tests) labels="example|mpi"; shift ;;
    --only) only=${2:?}; shift 2 ;;
    --limit) limit=${2:?}; shift 2 ;;
    *:*) layouts+=("$1"); shift ;;
    *) echo "scale.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#layouts[@]} -gt 0 ] || layouts=(16:4 32:8)
command -v jq >/dev/null || { echo "scale.sh: needs jq" >&2; exit 2; }

json=$(cd "$build" && ctest -N -L "$labels" --show-only=json-v1) || exit 2
# The np2 tests whose emulated-node run is registered disabled (docs/nodes.md)
mapfile -t pending < <(jq -r '.tests[] | select(.name | test("\\.np2\\.nodes"))
  | select(any(.properties[]?; .name == "DISABLED" and .value == true)) | .name | sub("\\.nodes.*"; "")' <<<"$json")
# For the other np2 runs on one node, fields apart by \x1d: the name, whether CTest expects it to
# fail (WILL_FAIL), its working directory, its ENVIRONMENT, then the command's words after
# `mpiexec -n 2`; the words of a list apart by \x1f.
mapfile -t runs < <(jq -r --args '$ARGS.positional as $pending
  | .tests[] | select(.name | endswith(".np2")) | select(.name as $n | $pending | index($n) | not)
  | [.name,
     (any(.properties[]?; .name == "WILL_FAIL" and .value == true) | tostring),
     ([.properties[]? | select(.name == "WORKING_DIRECTORY") | .value] | first // ""),
     ([.properties[]? | select(.name == "ENVIRONMENT") | .value[]] | join("\u001f")),
     (.command[3:] | join("\u001f"))] | join("\u001d")' "${pending[@]}" <<<"$json")
[ ${#pending[@]} -gt 0 ] && echo "left out (not yet expected to hold across nodes): ${pending[*]}"

failed=0
total=0
cores=$(nproc)
for layout in "${layouts[@]}"; do
  n=${layout%%:*} k=${layout##*:}
  # The tests' own short wait limits and timed runs, this many times longer (tests/support/world.hpp):
  # half the ranks per core, at least 1 (4 for 16 ranks on 2 cores).
  scale=${HETERO_TEST_TIME_SCALE:-$((n / (2 * cores) > 1 ? n / (2 * cores) : 1))}
  echo "$n ranks in nodes of $k on $cores cores: HETERO_TEST_TIME_SCALE=$scale"
  for run in "${runs[@]}"; do
    IFS=$'\x1d' read -r name will_fail directory environment command <<<"$run"
    [[ $name =~ $only ]] || continue
    IFS=$'\x1f' read -r -a words <<<"$command"
    IFS=$'\x1f' read -r -a variables <<<"$environment"
    start=$(date +%s.%N)
    (cd "${directory:-$build}" && env OMP_WAIT_POLICY=passive "${variables[@]}" HETERO_TEST_TIME_SCALE="$scale" \
      timeout "$limit" "$here/mpiexec_nodes.sh" --per-node "$k" -n "$n" "${words[@]}") >"/tmp/scale.${name}.${n}.log" 2>&1
    rc=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    total=$((total + 1))
    # A test CTest expects to fail (it checks that a failure is reported) passes by failing, as there.
    if [ "$will_fail" = true ] && [ $rc != 0 ] && [ $rc != 124 ]; then
      printf '%-40s %3d ranks, nodes of %d: ok (failed, as expected) in %.1f s\n' "$name" "$n" "$k" "$seconds"
    elif [ "$will_fail" != true ] && [ $rc = 0 ]; then
      printf '%-40s %3d ranks, nodes of %d: ok in %.1f s\n' "$name" "$n" "$k" "$seconds"
    else
      failed=$((failed + 1))
      printf '%-40s %3d ranks, nodes of %d: FAILED (exit %d) in %.1f s; log /tmp/scale.%s.%d.log\n' \
        "$name" "$n" "$k" "$rc" "$seconds" "$name" "$n"
    fi
  done
done
echo "scale.sh: $((total - failed)) of $total runs passed"
[ $failed = 0 ]
