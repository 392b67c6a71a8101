#!/usr/bin/env bash
# Hydra's launcher for emulated nodes: mpiexec.hydra -launcher ssh -launcher-exec <this> runs
# `<this> -x <host> <proxy command>` once per host, as it would run ssh. Instead of logging in
# anywhere, this runs the proxy (and so every rank Hydra places on <host>) here, in a UTS
# namespace of its own whose host name is <host>: MPI then sees one node per host name, as on a
# cluster (MPI_COMM_TYPE_SHARED splits by node). Nothing else is isolated: memory, files, cores
# and the network stack are this machine's. Used through tools/nodes/mpiexec_nodes.sh.
set -euo pipefail
[ "${1-}" = -x ] && shift
host=${1:?"node_launcher.sh: Hydra gave no host name"}
shift
case $host in
  *[!A-Za-z0-9.-]*) echo "node_launcher.sh: '$host' is not a host name (letters, digits, '.', '-')" >&2; exit 2 ;;
esac
if [ "$(id -u)" = 0 ]; then
  namespaces=(--uts)
else
  namespaces=(--user --map-root-user --uts)
fi
# The proxy command arrives as ssh would send it, words to be read by a shell.
exec unshare "${namespaces[@]}" -- /bin/sh -c "hostname $host && exec $*"
