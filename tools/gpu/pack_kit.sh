#!/usr/bin/env bash
# Packs hetero's GPU kit: the CUDA build's programs, every shared library they need that a GPU
# node cannot be expected to have (MPICH with UCX and its transport modules, Hydra's mpiexec
# and proxy, Kokkos, OpenBLAS/LAPACKE, hwloc, libgomp, libstdc++, ...), the list of checks and
# run.sh, into one folder that is copied to a GPU node and run there with nothing installed.
#
#   tools/gpu/pack_kit.sh <kit folder> <checks file> <program>...
#
# Left out, because a GPU node has its own: the C library (libc, libm, libdl, libpthread,
# librt, the loader), the driver (libcuda, libnvidia-*), and the large CUDA libraries (cuBLAS,
# cuBLASLt, cuSOLVER, ...: hundreds of MiB) that run.sh finds in the node's CUDA toolkit. The
# CUDA runtime (libcudart, 0.7 MiB) travels: it must match what the programs were built with.
# Programs and libraries travel in one xz-compressed tarball (MPICH alone is 41.5 MiB, 7 MiB
# compressed); run.sh unpacks it once. HETERO_KIT_XZ_PRESET (0-9, default 6) is xz's preset: the
# test command's CUDA stage, whose kit never leaves this machine, packs with 0 (a 224 MiB tarball
# on 2 cores: preset 6 103 s and 37.5 MB, preset 1 17 s and 50.9 MB, preset 0 9.4 s and 55.8 MB).
set -euo pipefail

kit=${1:?usage: $0 <kit folder> <checks file> <program>...}
checks=${2:?usage: $0 <kit folder> <checks file> <program>...}
shift 2
[ $# -gt 0 ] || {
  echo "pack_kit.sh: no programs given" >&2
  exit 1
}
preset=${HETERO_KIT_XZ_PRESET:-6}
[[ $preset =~ ^[0-9]$ ]] || {
  echo "pack_kit.sh: HETERO_KIT_XZ_PRESET=$preset is not an xz preset (allowed: 0 to 9)" >&2
  exit 1
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
ucx_modules=/usr/lib/$multiarch/ucx

# Libraries the node provides (node_library): the C library and loader, the driver, and CUDA's
# own libraries other than the runtime.
# shellcheck source=node_libraries.sh
source "$here/node_libraries.sh"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib/ucx"

mpiexec=$(readlink -f /usr/bin/mpiexec.mpich)
proxy=/usr/bin/hydra_pmi_proxy
for f in "$mpiexec" "$proxy"; do
  [ -x "$f" ] || {
    echo "pack_kit.sh: $f is missing (Debian package mpich)" >&2
    exit 1
  }
done
for p in "$@"; do
  [ -x "$p" ] || {
    echo "pack_kit.sh: program $p does not exist (build it first)" >&2
    exit 1
  }
  cp "$p" "$stage/bin/"
done
cp "$mpiexec" "$stage/bin/mpiexec"
cp "$proxy" "$stage/bin/hydra_pmi_proxy"
# The benchmarks' report (bench/report.sh: medians and paired ratios) and the jq it runs.
jq=$(command -v jq) || {
  echo "pack_kit.sh: jq is missing (Debian package jq)" >&2
  exit 1
}
cp "$jq" "$stage/bin/jq"
mkdir -p "$stage/share"
cp "$here/../../bench/report.sh" "$stage/share/report.sh"
cp "$here/../../bench/steps.sh" "$stage/share/steps.sh" # where a case's time went (bench_io's steps)
# UCX loads its transports (shared memory through CMA, InfiniBand, RDMA CM) at run time from
# UCX_MODULE_DIR; run.sh points it at lib/ucx.
for m in "$ucx_modules"/libuct_*.so.0; do cp "$m" "$stage/lib/ucx/"; done

# Every library the programs, the launcher and the UCX modules load, once, by its soname.
objects=("$stage"/bin/* "$stage"/lib/ucx/*)
missing=()
while read -r name path; do
  [ -n "$(node_library "$name")" ] && continue
  if [ "$path" = "not" ]; then
    missing+=("$name")
    continue
  fi
  [ -e "$stage/lib/$name" ] || cp -L "$path" "$stage/lib/$name"
done < <(for o in "${objects[@]}"; do ldd "$o" 2>/dev/null; done | awk '/=>/ {print $1, $3}' | sort -u)
if [ ${#missing[@]} -gt 0 ]; then
  echo "pack_kit.sh: these libraries cannot be found here: ${missing[*]}" >&2
  exit 1
fi

rm -rf "$kit"
mkdir -p "$kit"
tar -C "$stage" -cf - bin lib share | xz "-$preset" -T0 >"$kit/kit.tar.xz"
cp "$checks" "$kit/checks.txt"
cp "$here/run.sh" "$here/node_libraries.sh" "$kit/"
chmod +x "$kit/run.sh"
{
  echo "# hetero GPU kit, packed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet HEAD 2>/dev/null || echo '+changes')"
  echo "programs: $(cd "$stage/bin" && echo *)"
  echo "libraries: $(cd "$stage/lib" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
  echo "from the node: the C library, the CUDA driver, and CUDA's cuBLAS/cuBLASLt/cuSOLVER/cuSPARSE/nvJitLink"
} >"$kit/MANIFEST"
echo "pack_kit.sh: $kit: $(du -sh "$kit" | cut -f1) ($(find "$stage/bin" -type f | wc -l) programs," \
  "$(find "$stage/lib" -type f | wc -l) libraries, $(du -sh "$stage" | cut -f1) unpacked)"
