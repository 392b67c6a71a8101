#!/usr/bin/env bash
# mpiexec on emulated nodes: MPICH's Hydra places the ranks on hosts node0, node1, ... and
# tools/nodes/node_launcher.sh runs each host's ranks in a UTS namespace with that host name, so
# MPI (and hetero, which asks MPI) sees several nodes on one machine.
#
#   mpiexec_nodes.sh [--per-node K | --nodes A,B,...] -n N [mpiexec options] program [args]
#
#   --per-node K   K ranks per node, the last node taking the rest (default: $HETERO_RANKS_PER_NODE,
#                  else 1: every rank a node of its own)
#   --nodes A,B,.. the ranks per node, node by node (their sum must be N)
#
# As CTest's MPIEXEC_EXECUTABLE it takes `-n N program` like mpiexec. Where the kernel refuses
# the namespaces (no root, no unprivileged user namespaces) it says so and exits 77, which
# hetero's tests report as skipped. What it does not emulate: the network. Messages between
# "nodes" still go through this machine's memory, so timings show algorithms' costs, not a
# network's (docs/nodes.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  echo "usage: mpiexec_nodes.sh [--per-node K | --nodes A,B,...] -n N [mpiexec options] program [args]" >&2
  exit 2
}
per_node=${HETERO_RANKS_PER_NODE:-1}
sizes=""
ranks=""
passed=()
while [ $# -gt 0 ]; do
  case $1 in
    --per-node) per_node=${2:?}; shift 2 ;;
    --per-node=*) per_node=${1#*=}; shift ;;
    --nodes) sizes=${2:?}; shift 2 ;;
    --nodes=*) sizes=${1#*=}; shift ;;
    -n | -np) ranks=${2:?}; shift 2 ;;
    -h | --help) usage ;;
    *) passed+=("$@"); break ;;
  esac
done
[ -n "$ranks" ] || usage
[[ $ranks =~ ^[1-9][0-9]*$ ]] || { echo "mpiexec_nodes.sh: -n wants a rank count, got '$ranks'" >&2; exit 2; }
[ ${#passed[@]} -gt 0 ] || usage

hosts=""
if [ -n "$sizes" ]; then
  total=0
  node=0
  IFS=, read -r -a counts <<<"$sizes"
  for count in "${counts[@]}"; do
    [[ $count =~ ^[1-9][0-9]*$ ]] || { echo "mpiexec_nodes.sh: --nodes wants positive counts, got '$sizes'" >&2; exit 2; }
    hosts+="${hosts:+,}node$node:$count"
    total=$((total + count))
    node=$((node + 1))
  done
  [ "$total" = "$ranks" ] || {
    echo "mpiexec_nodes.sh: --nodes $sizes places $total ranks, but -n asks for $ranks" >&2
    exit 2
  }
else
  [[ $per_node =~ ^[1-9][0-9]*$ ]] || { echo "mpiexec_nodes.sh: --per-node wants a positive count, got '$per_node'" >&2; exit 2; }
  left=$ranks
  node=0
  while [ "$left" -gt 0 ]; do
    count=$((left < per_node ? left : per_node))
    hosts+="${hosts:+,}node$node:$count"
    left=$((left - count))
    node=$((node + 1))
  done
fi

if [ "$(id -u)" = 0 ]; then namespaces=(--uts); else namespaces=(--user --map-root-user --uts); fi
if ! unshare "${namespaces[@]}" -- /bin/sh -c 'hostname hetero-probe' 2>/dev/null; then
  echo "mpiexec_nodes.sh: SKIPPED: this system refuses 'unshare ${namespaces[*]}' and a host name set in it" \
    "(a UTS namespace per emulated node); run as root, or allow unprivileged user namespaces" \
    "(sysctl kernel.unprivileged_userns_clone=1)" >&2
  exit 77
fi
hydra=${HETERO_MPIEXEC_HYDRA:-$(command -v mpiexec.hydra || command -v mpiexec.mpich || true)}
[ -n "$hydra" ] || { echo "mpiexec_nodes.sh: MPICH's mpiexec.hydra not found (set HETERO_MPIEXEC_HYDRA)" >&2; exit 2; }
exec "$hydra" -launcher ssh -launcher-exec "$here/node_launcher.sh" -hosts "$hosts" -n "$ranks" "${passed[@]}"
