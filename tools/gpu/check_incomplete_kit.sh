#!/usr/bin/env bash
# The test gpu_kit.libraries_incomplete: a kit missing one of its libraries must fail run.sh's
# library check, naming the library and where the system would have supplied it instead.
#   check_incomplete_kit.sh <kit folder> <scratch folder>
set -euo pipefail
kit=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch/work"
xz -dc "$kit/kit.tar.xz" | tar -C "$scratch/work" -xf -
touch "$scratch/work/.complete"
rm "$scratch/work/lib/libmpich.so.12"
if HETERO_KIT_WORK="$scratch/work" bash "$kit/run.sh" --libraries "$scratch/out" >"$scratch/log" 2>&1; then
  echo "gpu_kit.libraries_incomplete: run.sh passed a kit without libmpich.so.12" >&2
  exit 1
fi
grep -E "^FAIL setup +libraries .*libmpich\.so\.12 (from|not found)" "$scratch/log" || {
  echo "gpu_kit.libraries_incomplete: run.sh failed, but not by naming libmpich.so.12:" >&2
  cat "$scratch/log" >&2
  exit 1
}
