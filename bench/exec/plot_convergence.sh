#!/usr/bin/env bash
# Plots the trace written by bench_exec_nbody --exec_trace=FILE: per step, the device and host
# time of the force loop (bars) and the CPU weight (line), for the default tuner and the seed
# paper's 0.01 rule, one panel each (like the paper's Figure 5).
#   bench/exec/plot_convergence.sh <trace> <png>
set -euo pipefail
trace=$1
png=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in model fixed_step; do awk -v t="$t" '$1 == t' "$trace" >"$tmp/$t.dat"; done
gnuplot <<GP
set terminal pngcairo size 1000,760 noenhanced
set output '$png'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7
set boxwidth 0.9
set ylabel 'time [s]'
set y2label 'CPU weight'
set y2range [0:1]
set ytics nomirror
set y2tics
set yrange [0:*]
set key top right
set grid y
set xlabel 'step'
set title 'default (model) tuner, N-body forces from w = 0.2'
plot '$tmp/model.dat' using 3:xtic(int(\$2) % 5 == 0 || int(\$2) == 1 ? stringcolumn(2) : '') title 'device (OpenMP: 1 core in a split, 2 alone)' lc rgb '#c0392b', \
     '' using 4 title 'host (Serial)' lc rgb '#2e86c1', \
     '' using (\$2 - 1):5 axes x1y2 with linespoints lw 2 lc rgb '#27ae60' title 'weight'
set title "seed paper's rule (+-0.01 per step), same run"
plot '$tmp/fixed_step.dat' using 3:xtic(int(\$2) % 5 == 0 || int(\$2) == 1 ? stringcolumn(2) : '') title 'device (OpenMP: 1 core in a split, 2 alone)' lc rgb '#c0392b', \
     '' using 4 title 'host (Serial)' lc rgb '#2e86c1', \
     '' using (\$2 - 1):5 axes x1y2 with linespoints lw 2 lc rgb '#27ae60' title 'weight'
unset multiplot
GP
echo "wrote $png"
