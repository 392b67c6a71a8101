#!/usr/bin/env bash
# Merges per-rank trace files (<path>.rank<R>, written where a run ended by an exception or after
# MPI_Finalize, docs/trace.md) into one Chrome trace.
#   tools/trace/merge.sh <out.json> <trace.rank0> <trace.rank1> ...
set -euo pipefail
out=${1:?usage: merge.sh <out.json> <per-rank trace>...}
shift
[ $# -gt 0 ] || { echo "merge.sh: no per-rank traces given" >&2; exit 2; }
jq -s '{displayTimeUnit: "ms", traceEvents: (map(.traceEvents) | add)}' "$@" >"$out"
echo "merge.sh: $out ($# ranks)"
