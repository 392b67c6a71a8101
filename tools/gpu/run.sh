#!/usr/bin/env bash
# hetero's GPU kit: runs every check and benchmark packed into this folder on the node's GPU,
# with nothing installed on the node but a CUDA driver (and CUDA's cuBLAS and cuSOLVER, which
# the kit does not carry). Made by `./hetero.sh gpu-kit` (tools/gpu/pack_kit.sh).
#
#   ./run.sh [OUT]            unpack, check the libraries, run every check and benchmark; prints
#                             a line per check and a closing "N passed, N failed" line, and
#                             writes summary.json and log.txt into OUT (default ./kit-out)
#   ./run.sh --libraries OUT  only unpack and check that every program's libraries resolve from
#                             the kit (and the node's C library, driver and CUDA libraries),
#                             then start 2 MPI ranks with the kit's mpiexec; no GPU needed
#   ./run.sh --list           the checks, one per line
#
# Exit status: 0 when everything ran and passed; 1 when something failed; 77 when the node has
# no CUDA device (after the library check, which then decides nothing else: it passed).
# Environment: HETERO_KIT_WORK (where the kit unpacks, default /tmp/hetero-kit-<hash>),
# HETERO_KIT_BUDGET (seconds for all checks, default 480: later checks are reported skipped),
# HETERO_KIT_ONLY (a regular expression: run only the checks whose name matches), CUDA_HOME.
set -uo pipefail

kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=all
case "${1:-}" in
  --list)
    grep -vE '^\s*(#|$)' "$kit/checks.txt" | awk '{print $1, $2, "(" $3 " rank(s))"}'
    exit 0
    ;;
  --libraries)
    mode=libraries
    shift
    ;;
  --help | -h)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
out=${1:-$PWD/kit-out}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
log=$out/log.txt
: >"$log"
started=$SECONDS
budget=${HETERO_KIT_BUDGET:-480}

say() { printf '%s\n' "$*" | tee -a "$log"; }

# --- unpack once --------------------------------------------------------------------------------
hash=$(cksum <"$kit/kit.tar.xz" | cut -d' ' -f1)
work=${HETERO_KIT_WORK:-${TMPDIR:-/tmp}/hetero-kit-$hash}
if [ ! -f "$work/.complete" ]; then
  rm -rf "$work" && mkdir -p "$work" || exit 1
  if command -v xz >/dev/null; then
    xz -dc "$kit/kit.tar.xz" | tar -C "$work" -xf - || exit 1
  else # no xz on the node: Python's lzma
    python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])' \
      "$kit/kit.tar.xz" "$work" || exit 1
  fi
  touch "$work/.complete"
fi

# --- the node's CUDA libraries (cuBLAS and friends are not carried) ----------------------------
cuda_libs=""
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  /usr/local/cuda/lib; do
  if [ -e "$d/libcublas.so.13" ]; then
    cuda_libs=$d
    break
  fi
done
if [ -z "$cuda_libs" ]; then # a Python environment's CUDA wheels (nvidia-cublas)
  found=$(find /usr/lib /usr/local/lib /opt -maxdepth 8 -name 'libcublas.so.13' 2>/dev/null | head -n 1)
  [ -n "$found" ] && cuda_libs=$(dirname "$found")
fi

# cuSOLVER (the Cholesky's device tiles) and what it loads, where they are not beside cuBLAS (a
# Python environment keeps each library in a folder of its own).
cuda_more=()
for lib in libcusolver.so.12 libcusparse.so.12 libnvJitLink.so.13; do
  [ -n "$cuda_libs" ] && [ -e "$cuda_libs/$lib" ] && continue
  found=$(find /usr/lib /usr/local/lib /usr/local /opt -maxdepth 8 -name "$lib" 2>/dev/null | head -n 1)
  [ -n "$found" ] && cuda_more+=("$(dirname "$found")")
done
more_path=""
for d in "${cuda_more[@]}"; do more_path+=":$d"; done

export LD_LIBRARY_PATH="$work/lib${cuda_libs:+:$cuda_libs}$more_path"
export PATH="$work/bin:$PATH"
export UCX_MODULE_DIR="$work/lib/ucx"
export HYDRA_LAUNCHER=fork # one node: no ssh
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
unset OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE

# --- results ------------------------------------------------------------------------------------
names=() kinds=() statuses=() seconds=() codes=()
passed=0 failed=0 skipped=0
record() { # record <kind> <name> <PASS|FAIL|SKIP> <seconds> <exit code> [note]
  names+=("$2") kinds+=("$1") statuses+=("$3") seconds+=("$4") codes+=("$5")
  case "$3" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
  esac
  say "$(printf '%-4s %-8s %-34s %7s s%s' "$3" "$1" "$2" "$4" "${6:+  ($6)}")"
}

json_escape() { sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g' | tr -d '\000-\037'; }

write_summary() { # write_summary <device line> <final word>
  {
    printf '{\n  "date": "%s",\n  "host": "%s",\n  "device": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$(hostname | json_escape)" "$(printf '%s' "$1" | json_escape)"
    printf '  "kit": "%s",\n' "$(sed -n 's/^commit //p' "$kit/MANIFEST" 2>/dev/null | json_escape)"
    printf '  "cuda_libraries": "%s",\n  "seconds": %d,\n' "$cuda_libs" $((SECONDS - started))
    printf '  "passed": %d,\n  "failed": %d,\n  "skipped": %d,\n  "result": "%s",\n  "checks": [\n' \
      "$passed" "$failed" "$skipped" "$2"
    local i n=${#names[@]}
    for ((i = 0; i < n; ++i)); do
      printf '    {"kind": "%s", "name": "%s", "status": "%s", "seconds": %s, "exit_code": %s}%s\n' \
        "${kinds[i]}" "${names[i]}" "${statuses[i]}" "${seconds[i]}" "${codes[i]}" "$([ $i -lt $((n - 1)) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } >"$out/summary.json"
}

finish() { # finish <device line> <exit code>
  local word=passed
  [ "$failed" -gt 0 ] && word=failed
  [ "$2" -eq 77 ] && word="no CUDA device"
  write_summary "$1" "$word"
  say "$passed passed, $failed failed${skipped:+, $skipped skipped} ($((SECONDS - started)) s; summary: $out/summary.json)"
  exit "$2"
}

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# --- 1. every program's libraries resolve from the kit ------------------------------------------
# Allowed from outside the kit: the C library and loader, the driver, and CUDA's libraries from
# the node's toolkit (node_libraries.sh, the list pack_kit.sh left out). Anything else from the
# system (an MPI, a Kokkos, a BLAS) means the kit is incomplete and would not run on a bare node.
# shellcheck source=node_libraries.sh
source "$kit/node_libraries.sh"
t0=$EPOCHREALTIME
bad=()
for f in "$work"/bin/* "$work"/lib/ucx/*; do
  [ -f "$f" ] || continue
  head -c 4 "$f" | grep -q 'ELF' || continue
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then
      bad+=("$(basename "$f"): $name not found")
      continue
    fi
    case "$path" in "$work"/lib/*) continue ;; esac
    case "$(node_library "$name")" in
      system) continue ;;
      cuda)
        [ -n "$cuda_libs" ] && case "$path" in "$cuda_libs"/*) continue ;; esac
        for d in "${cuda_more[@]}"; do case "$path" in "$d"/*) continue 2 ;; esac; done
        ;;
    esac
    bad+=("$(basename "$f"): $name from $path")
  done < <(ldd "$f" 2>&1)
done
if [ ${#bad[@]} -eq 0 ]; then
  record setup libraries PASS "$(elapsed "$t0")" 0 "$(ls "$work/bin" | wc -l) programs, $(find "$work/lib" -type f | wc -l) libraries from the kit; CUDA's from ${cuda_libs:-nowhere}"
else
  printf '%s\n' "${bad[@]}" >>"$log"
  record setup libraries FAIL "$(elapsed "$t0")" 1 "${#bad[@]} outside the kit or missing, e.g. ${bad[0]}"
fi

# --- 2. the kit's mpiexec starts 2 ranks (MPICH, UCX and Hydra from the kit alone) --------------
t0=$EPOCHREALTIME
if timeout 60 mpiexec -n 2 kit_mpi_probe </dev/null >>"$log" 2>&1; then
  record setup mpiexec PASS "$(elapsed "$t0")" 0 "2 ranks, kit_mpi_probe"
else
  record setup mpiexec FAIL "$(elapsed "$t0")" $? "kit_mpi_probe on 2 ranks; see log.txt"
fi

# --- 3. a GPU? ----------------------------------------------------------------------------------
device_line=$(kit_gpu_probe 2>>"$log")
probe=$?
if [ $probe -ne 0 ]; then
  say "no CUDA device: the GPU checks did not run (kit_gpu_probe: ${device_line:-no output}, exit $probe)"
  [ "$mode" = libraries ] && finish "none" $([ "$failed" -eq 0 ] && echo 0 || echo 1)
  [ "$failed" -eq 0 ] && finish "none" 77
  finish "none" 1
fi
say "device: $device_line"
[ "$mode" = libraries ] && finish "$device_line" $([ "$failed" -eq 0 ] && echo 0 || echo 1)
command -v nvidia-smi >/dev/null && nvidia-smi >>"$log" 2>&1

# --- 4. the programs carry machine code for this device ----------------------------------------
arch=$(kit_gpu_probe --arch 2>/dev/null)
t0=$EPOCHREALTIME
missing_code=()
for f in "$work"/bin/*; do
  listed=$(fatbin_archs "$f" 2>/dev/null) || continue # no GPU code (the launcher, the probes)
  listed=${listed//$'\n'/ } # "elf sm_90 ptx sm_90"
  [[ " $listed " == *" elf $arch "* ]] || missing_code+=("$(basename "$f") [$listed]")
  if command -v cuobjdump >/dev/null; then # the toolkit's own view, for comparison
    echo "$(basename "$f"): fatbin_archs: $listed; cuobjdump --list-elf: $(cuobjdump --list-elf "$f" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/' | sort -u | tr '\n' ' ')" >>"$log"
  fi
done
if [ ${#missing_code[@]} -eq 0 ]; then
  record setup "machine code for $arch" PASS "$(elapsed "$t0")" 0
else
  record setup "machine code for $arch" FAIL "$(elapsed "$t0")" 1 "${missing_code[*]}"
fi

# --- 5. the device's rates, which bound each benchmark's time (bench/support/bounds.hpp) -------
t0=$EPOCHREALTIME
if rates_line=$(timeout --kill-after=10 120 kit_device_rates "$out/device_rates.txt" 2>>"$log"); then
  export HETERO_DEVICE_RATES="$out/device_rates.txt" # read by the benchmarks (bound_s counters)
  echo "$rates_line" | sed 's/^kit: /       /' | tee -a "$log"
  record setup "device rates" PASS "$(elapsed "$t0")" 0
else
  record setup "device rates" FAIL "$(elapsed "$t0")" $? "kit_device_rates; see log.txt (benchmarks print no bounds)"
fi

# --- 6. the checks and benchmarks ---------------------------------------------------------------
while read -r kind name ranks limit program args; do
  [[ -z "$kind" || "$kind" == \#* ]] && continue
  if [ -n "${HETERO_KIT_ONLY:-}" ] && ! [[ "$name" =~ $HETERO_KIT_ONLY ]]; then continue; fi
  if [ $((SECONDS - started + limit)) -gt "$budget" ] && [ $((SECONDS - started)) -gt $((budget / 2)) ]; then
    record "$kind" "$name" SKIP 0 0 "not started: the kit's $budget s budget would be exceeded"
    continue
  fi
  t0=$EPOCHREALTIME
  # A benchmark writes JSON for bench/report.sh; --kit_report=... is the report's, not the program's.
  report_args=() program_args=()
  for a in $args; do
    case "$a" in
      --kit_report=*) report_args+=("${a#--kit_report=}") ;;
      *) program_args+=("$a") ;;
    esac
  done
  [ "$kind" = bench ] && program_args+=("--benchmark_out=$out/.bench.json" --benchmark_out_format=json)
  printf '\n===== %s %s: mpiexec -n %s %s %s\n' "$kind" "$name" "$ranks" "$program" "${program_args[*]}" >>"$log"
  rm -f "$out/.bench.json"
  timeout --kill-after=10 "$limit" mpiexec -n "$ranks" "$program" "${program_args[@]}" </dev/null >"$out/.current" 2>&1
  code=$?
  cat "$out/.current" >>"$log"
  # Lines a program marks for the summary ("kit: ..."): a tuner's weights, NVML's readings.
  grep '^kit: ' "$out/.current" | sed 's/^kit: /       /' | tee -a "$log"
  if [ "$kind" = bench ] && [ $code -eq 0 ] && [ -s "$out/.bench.json" ]; then
    cp "$out/.bench.json" "$out/bench-$name.json"
    # Each case's median and its ratio to the family's baseline (paired by round, and the worst round).
    bash "$work/share/report.sh" "$out/.bench.json" "${report_args[@]}" 2>&1 | sed 's/^/       /' | tee -a "$log"
    # Where each case's time went, for benchmarks that record steps (bench_io): nothing otherwise.
    bash "$work/share/steps.sh" "$out/.bench.json" 2>&1 | sed 's/^/       /' | tee -a "$log"
  fi
  if [ $code -eq 0 ]; then
    record "$kind" "$name" PASS "$(elapsed "$t0")" 0
  elif [ $code -eq 124 ] || [ $code -eq 137 ]; then
    tail -n 15 "$out/.current"
    record "$kind" "$name" FAIL "$(elapsed "$t0")" $code "timed out after $limit s"
  else
    tail -n 15 "$out/.current"
    record "$kind" "$name" FAIL "$(elapsed "$t0")" $code "exit $code"
  fi
done <"$kit/checks.txt"
rm -f "$out/.current" "$out/.bench.json"
finish "$device_line" $([ "$failed" -eq 0 ] && echo 0 || echo 1)
