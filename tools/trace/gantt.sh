#!/usr/bin/env bash
# A hetero trace (runtime_options::trace_file / HETERO_TRACE: Chrome trace-event JSON) as a Gantt
# chart: one row per rank and thread, one bar per region (tasks coloured by their label's kind:
# the label up to its first space, digit or parenthesis), waits and idle time in greys, collectives,
# split loops' device and host parts (dark and light green) and distributed-array operations in
# colours of their own. A region inside
# another is drawn thinner, over it.
#   tools/trace/gantt.sh <trace.json> <out.png> [title] [first ms] [last ms]
# Needs jq and gnuplot (./hetero.sh installs both).
set -euo pipefail
trace=${1:?usage: gantt.sh <trace.json> <out.png> [title] [first ms] [last ms]}
png=${2:?usage: gantt.sh <trace.json> <out.png> [title] [first ms] [last ms]}
title=${3:-$(basename "$trace")}
first=${4:-}
last=${5:-}
for tool in jq gnuplot; do
  command -v "$tool" >/dev/null || { echo "gantt.sh: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done
[ -r "$trace" ] || { echo "gantt.sh: cannot read $trace" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pid tid start_ms end_ms key (tab-separated), complete events only.
jq -r '.traceEvents[] | select(.ph == "X")
  | [.pid, .tid, (.ts / 1000), ((.ts + .dur) / 1000),
     (if .cat == "task" then "task " + (.name | sub("[ 0-9(].*$"; ""))
      elif .cat == "exec" then "exec " + (.name | split(":") | last) else .cat end)] | @tsv' "$trace" \
  >"$work/events.tsv" || { echo "gantt.sh: $trace is not a trace (Chrome trace-event JSON)" >&2; exit 2; }
[ -s "$work/events.tsv" ] || { echo "gantt.sh: $trace holds no complete events" >&2; exit 2; }

# Rows: (pid, tid) in order; depth: how many regions of the same row are open at the start.
sort -t$'\t' -k1,1n -k2,2n -k3,3g "$work/events.tsv" | awk -F'\t' -v first="$first" -v last="$last" '
  BEGIN { OFS = "\t" }
  {
    row_key = $1 "/" $2
    if (!(row_key in rows)) { rows[row_key] = n_rows++; label[n_rows - 1] = "rank " $1 " thread " $2; depth = 0 }
    if (row_key != current) { current = row_key; top = 0 }
    while (top > 0 && ends[top] <= $3) top--
    ends[++top] = $4
    if (first != "" && $4 < first) next
    if (last != "" && $3 > last) next
    print rows[row_key], $3, $4, top - 1, $5
  }
  END { for (r = 0; r < n_rows; ++r) print r, label[r] > "'"$work"'/rows.tsv" }' >"$work/bars.tsv"

# One data block per key: tasks first (by kind), then the fixed categories.
keys=$(cut -f5 "$work/bars.tsv" | sort | uniq -c | sort -k1,1nr | awk '{ $1 = ""; sub(/^ /, ""); print }')
: >"$work/blocks.dat"
plot=""
palette=("#1f77b4" "#ff7f0e" "#2ca02c" "#9467bd" "#8c564b" "#e377c2" "#17becf" "#bcbd22" "#d62728" "#7f7f7f")
colour_of() {
  case "$1" in
    idle) echo "#e0e0e0" ;;
    wait) echo "#a0a0a0" ;;
    comm) echo "#d62728" ;;
    distarray) echo "#ff9896" ;;
    "exec device") echo "#2ca02c" ;;
    "exec host") echo "#98df8a" ;;
    power) echo "#000000" ;;
    *) echo "${palette[$2 % ${#palette[@]}]}" ;;
  esac
}
# Outermost regions first, then the ones inside them (thinner, drawn over them): same colour per key.
index=0
for pass in outer inner; do
  k=0
  while IFS= read -r key; do
    [ -n "$key" ] || continue
    awk -F'\t' -v key="$key" -v pass="$pass" '$5 == key && (pass == "outer") == ($4 == 0) { print $1, $2, $3, $4 }' \
      "$work/bars.tsv" >>"$work/blocks.dat"
    printf '0 0 0 9\n\n\n' >>"$work/blocks.dat" # a hidden bar keeps every block non-empty
    colour=$(colour_of "$key" "$k")
    name=$([ "$pass" = outer ] && echo "title '${key//\'/}'" || echo notitle)
    plot+="${plot:+, }'$work/blocks.dat' index $index using ((\$2+\$3)/2):1:((\$3-\$2)/2):(\$4 > 8 ? 0 : 0.38-0.1*\$4) with boxxyerror fs solid 0.9 noborder lc rgb '$colour' $name"
    index=$((index + 1))
    k=$((k + 1))
  done <<<"$keys"
done
rows=$(wc -l <"$work/rows.tsv")
ytics=$(awk -F'\t' '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $2, $1 }' "$work/rows.tsv")
height=$((160 + 38 * rows))
gnuplot <<GNUPLOT
set terminal pngcairo size 1400,$height font ",10"
set output '$png'
set title "${title//\"/}"
set xlabel 'time (ms from the start of the trace)'
set ytics ($ytics)
set yrange [-0.7:$rows - 0.3] reverse
set key outside right top
set grid xtics
${first:+set xrange [$first:${last:-*}]}
plot $plot
GNUPLOT
echo "gantt.sh: $png ($rows rows, $k kinds)"
