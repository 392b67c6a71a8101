#!/usr/bin/env bash
# Plots one Google Benchmark JSON file with gnuplot: one PNG per family, median time per
# variant against the numeric argument (log-log) or as bars when there is no argument.
#   bench/plot.sh <results.json> <plots dir>
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
json=$1
out=$2
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/report.sh" "$json" --tsv >"$tmp/rows.tsv"
stem=$(basename "$json" .json)
for family in $(cut -f1 "$tmp/rows.tsv" | sort -u); do
  png="$out/${stem}_${family//[^A-Za-z0-9_]/_}.png"
  awk -F'\t' -v f="$family" '$1 == f' "$tmp/rows.tsv" >"$tmp/family.tsv"
  unit=$(head -n 1 "$tmp/family.tsv" | cut -f5)
  if cut -f2 "$tmp/family.tsv" | grep -qE '^[0-9]+$'; then
    plots=""
    for variant in $(cut -f3 "$tmp/family.tsv" | sort -u); do
      awk -F'\t' -v v="$variant" '$3 == v { print $2, $4 }' "$tmp/family.tsv" | sort -n >"$tmp/$variant.dat"
      plots+="${plots:+, }'$tmp/$variant.dat' using 1:2 with linespoints title '$variant'"
    done
    gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output '$png'
set title '$family (medians, $stem)'
set logscale xy
set xlabel 'argument'
set ylabel 'median time [$unit]'
set key left top
set grid
plot $plots
GP
  else
    awk -F'\t' '{ print NR - 1, $4, ($2 == "" ? $3 : $3 "/" $2) }' "$tmp/family.tsv" >"$tmp/bars.dat"
    gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output '$png'
set title '$family (medians, $stem)'
set style fill solid 0.6
set boxwidth 0.6
set ylabel 'median time [$unit]'
set yrange [0:*]
set grid y
plot '$tmp/bars.dat' using 1:2:xtic(3) with boxes notitle
GP
  fi
  echo "wrote $png"
done
