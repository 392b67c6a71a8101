#!/usr/bin/env bash
# Plots the per-call latency ratio hetero / MPI of every collective against the per-rank message
# size (from a bench_comm_collectives JSON file, through latency_table.sh), with the targets 1.0
# and 1.1 drawn in; and hetero's and MPI's latency of allreduce, broadcast and the barrier.
#   bench/comm/latency_plot.sh <results.json> <ratio.png> <latency.png>
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/latency_table.sh" "$1" | awk 'NR > 1 && $2 > 0 { print > ("'"$tmp"'/" $1 ".dat") }
                                     NR > 1 && $1 == "barrier" { print > ("'"$tmp"'/barrier.txt") }'
ratio_plots="" latency_plots=""
for f in "$tmp"/*.dat; do
  c=$(basename "$f" .dat)
  ratio_plots+="${ratio_plots:+, }'$f' using 2:6 with linespoints title '$c'"
  case $c in allreduce | broadcast)
    latency_plots+="${latency_plots:+, }'$f' using 2:3 with linespoints title '$c MPI', '$f' using 2:4 with linespoints title '$c hetero'"
    ;;
  esac
done
barrier=$(awk '{ printf "barrier: MPI %.3f us, hetero %.3f us", $3, $4 }' "$tmp/barrier.txt" 2>/dev/null || true)
gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$2'
set title 'hetero / MPI per-call latency, 2 ranks, medians ($(basename "$1"))'
set logscale x
set xrange [5:13000000]
set xtics ('8 B' 8, '128 B' 128, '1 KiB' 1024, '8 KiB' 8192, '128 KiB' 131072, '1 MiB' 1048576, '8 MiB' 8388608)
set xlabel 'bytes per rank'
set ylabel 'hetero / MPI (below 1: hetero faster)'
set yrange [0:1.4]
set key outside right
set grid
plot $ratio_plots, 1.0 with lines dashtype 2 lc rgb 'black' title 'MPI', 1.1 with lines dashtype 3 lc rgb 'red' title '1.1x'
set output '$3'
set title 'per-call latency, 2 ranks, medians; $barrier'
set logscale xy
set format y '%g'
set yrange [*:*]
set ylabel 'microseconds per call'
plot $latency_plots
GP
echo "wrote $2 and $3"
