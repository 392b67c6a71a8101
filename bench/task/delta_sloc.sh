#!/usr/bin/env bash
# Delta-SLOC of the Cholesky versions against the serial one (the seed's Table 2): source lines
# without comments and blank lines, and the lines modified, added and deleted from the serial
# code (a changed line counts as modified; a hunk that changes a lines into b counts
# min(a, b) modified and the rest as added or deleted).
#   bench/task/delta_sloc.sh
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples/cholesky" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Code lines only: drops // comments, blank lines, indentation and the include guards (whose
# names differ from file to file).
code() {
  sed -e 's|//.*$||' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$1" |
    grep -vE '^$|^#(ifndef|define|endif)( HETERO_EXAMPLES_CHOLESKY_[A-Z_]*_HPP)?$' || true
}

code "$dir/cholesky_serial.hpp" >"$tmp/serial"
printf '%-26s %6s %9s %6s %8s\n' version SLOC modified added deleted
printf '%-26s %6d %9s %6s %8s\n' "serial (cholesky_serial)" "$(wc -l <"$tmp/serial")" - - -
for version in omp tasklet data; do
  code "$dir/cholesky_$version.hpp" >"$tmp/$version"
  { diff "$tmp/serial" "$tmp/$version" || true; } | awk -v name="$version (cholesky_$version)" -v sloc="$(wc -l <"$tmp/$version")" '
    /^[0-9]/ {
      split($0, parts, /[acd]/)
      op = substr($0, length(parts[1]) + 1, 1)
      n1 = split(parts[1], l, ","); a = (n1 == 2) ? l[2] - l[1] + 1 : 1
      n2 = split(parts[2], r, ","); b = (n2 == 2) ? r[2] - r[1] + 1 : 1
      if (op == "a") added += b
      else if (op == "d") deleted += a
      else { m = (a < b) ? a : b; modified += m; added += b - m; deleted += a - m }
    }
    END { printf "%-26s %6d %9d %6d %8d\n", name, sloc, modified, added, deleted }'
done
