#!/usr/bin/env bash
# Turns a bench_comm_collectives JSON file into a per-call table: for each collective and
# per-rank message size, the median latency of MPI's call and of hetero's, hetero's bandwidth
# (bytes per rank / latency), the ratio of the medians hetero / MPI (below 1: hetero is faster)
# and the paired ratio (median over rounds of the two calls' ratio in the same round). With
# --mpi-path: the same for the mpi_path_* families instead (hetero forced onto MPI's call).
#   bench/comm/latency_table.sh <results.json> [--markdown] [--mpi-path]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
md="" mpi_path=""
for a in "${@:2}"; do
  case $a in
    --markdown) md=$a ;;
    --mpi-path) mpi_path=1 ;;
    *) echo "latency_table.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
"$here/../report.sh" "$1" --tsv | awk -F'\t' -v md="$md" -v mpi_path="$mpi_path" '
  {
    if (($1 ~ /^mpi_path_/) != (mpi_path != "")) next
    sub(/^mpi_path_/, "", $1)
    split($1, name, "_x"); calls = name[2] + 0; if (calls == 0) calls = 1
    key = name[1] "\t" $2
    us = $4 / calls; if ($5 == "ns") us /= 1000; if ($5 == "ms") us *= 1000
    if ($3 ~ /^baseline/) mpi[key] = us; else { ours[key] = us; paired[key] = $7 }
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  }
  END {
    if (md == "--markdown") {
      print "| collective | bytes | MPI [us] | hetero [us] | hetero [GB/s] | hetero / MPI | paired |"
      print "|---|---:|---:|---:|---:|---:|---:|"
    } else {
      printf "%-11s %9s %12s %12s %14s %13s %7s\n", "collective", "bytes", "MPI [us]", "hetero [us]", "hetero [GB/s]", "hetero / MPI", "paired"
    }
    for (i = 1; i <= n; ++i) {
      split(order[i], k, "\t"); bytes = (k[2] == "" ? 0 : k[2])
      bw = (bytes > 0 && ours[order[i]] > 0) ? sprintf("%.3f", bytes / ours[order[i]] / 1000) : "-"
      ratio = (mpi[order[i]] > 0) ? sprintf("%.3f", ours[order[i]] / mpi[order[i]]) : "-"
      if (md == "--markdown")
        printf "| %s | %s | %.3f | %.3f | %s | %s | %s |\n", k[1], bytes, mpi[order[i]], ours[order[i]], bw, ratio, paired[order[i]]
      else
        printf "%-11s %9s %12.3f %12.3f %14s %13s %7s\n", k[1], bytes, mpi[order[i]], ours[order[i]], bw, ratio, paired[order[i]]
    }
  }'
