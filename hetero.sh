#!/usr/bin/env bash
# hetero's one entry point: installs what is missing, builds, and runs.
#
#   ./hetero.sh demo            the main job: build and run the examples on 2 MPI ranks
#   ./hetero.sh test            clean build, every test (ctest), the CUDA stage (compiled, and
#                               the GPU kit packed and checked without a GPU);
#                               non-zero exit on any failure
#   ./hetero.sh bench [--plots] build and run the benchmarks (JSON under build/bench/,
#                               PNG plots under docs/bench/ with --plots)
#   ./hetero.sh gpu-kit         build the GPU kit (build/gpu-kit): the GPU tests, examples and
#                               benchmarks for a CUDA GPU with every library they need, and a
#                               run.sh that runs them on a GPU node (docs/build.md, "On a GPU node")
#   ./hetero.sh cuda-stage      only the test command's CUDA stage (build/test-cuda): every target
#                               compiled and linked for CUDA, the GPU kit packed and checked
#   ./hetero.sh deps            only install the dependencies (apt packages, Kokkos)
#
# Environment:
#   Kokkos_ROOT        a Kokkos install to use (must have a parallel host backend)
#   Kokkos_CUDA_ROOT   a Kokkos with CUDA for the CUDA stage (default: Kokkos 3.4 built here
#                      from Debian's source with CUDA 13 from CUDA_HOME)
#   CUDA_HOME          the CUDA toolkit (default /usr/local/cuda); without nvcc there the CUDA
#                      stage is skipped and says so
#   HETERO_CUDA_ARCH   the GPU architecture of the CUDA Kokkos built here: sm_90 (Hopper: H100,
#                      H200; the default) or sm_80 (Ampere: A100)
#   HETERO_CACHE_DIR   where the Kokkos built here is cached (default ~/.cache/hetero)
#   HETERO_BUILD_DIR   build folder (default ./build)
#   HETERO_JOBS        parallel build jobs (default: number of cores)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_dir=${HETERO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hetero}
build_dir=${HETERO_BUILD_DIR:-$top/build}
jobs=${HETERO_JOBS:-$(nproc 2>/dev/null || echo 2)}
kokkos_version=3.4.01 # what Debian bookworm's trilinos 13.2 source carries
kokkos_prefix=$cache_dir/kokkos-$kokkos_version-openmp-serial-cxx20
kokkos_source=$cache_dir/kokkos-$kokkos_version-src # Debian's packages/kokkos, extracted once
cuda_home=${CUDA_HOME:-/usr/local/cuda}
# The GPU architecture of the CUDA Kokkos built here: Hopper (H100, H200) unless asked otherwise.
case "${HETERO_CUDA_ARCH:-sm_90}" in
  sm_90 | hopper) cuda_arch=sm_90 kokkos_cuda_arch=HOPPER90 ;;
  sm_80 | ampere) cuda_arch=sm_80 kokkos_cuda_arch=AMPERE80 ;;
  *)
    printf '[hetero] error: HETERO_CUDA_ARCH=%s is not supported (allowed: sm_90 or hopper, the default; sm_80 or ampere)\n' \
      "$HETERO_CUDA_ARCH" >&2
    exit 1
    ;;
esac
kokkos_cuda_prefix=$cache_dir/kokkos-$kokkos_version-cuda-$cuda_arch-openmp-serial-cxx20

say() { printf '\033[1m[hetero]\033[0m %s\n' "$*" >&2; }
die() {
  printf '\033[1;31m[hetero] error:\033[0m %s\n' "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo "$@"
  else
    die "installing system packages needs root, and this user ($(id -un)) is not root and has no" \
      "password-less sudo. Either run as root, or install these packages yourself: $*"
  fi
}

# --- apt packages ---------------------------------------------------------------------------

apt_packages=(
  build-essential cmake ninja-build pkg-config git
  mpich libmpich-dev
  libhdf5-mpich-dev hdf5-tools
  libopenblas-dev liblapacke-dev
  libbenchmark-dev
  zlib1g-dev
  libtbb-dev
  libstarpu-dev
  gnuplot-nox jq
  clang-format doxygen
  hwloc libhwloc-dev
  dpkg-dev xz-utils
)

is_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

apt_updated=0
apt_update() {
  if [ $apt_updated -eq 0 ]; then
    say "refreshing the apt package lists"
    as_root apt-get update -qq >/dev/null || die "apt-get update failed: the Debian package registry must be reachable"
    apt_updated=1
  fi
}

apt_install() {
  apt_update
  say "installing: $*"
  local log
  log=$(mktemp)
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1 || {
    cat "$log" >&2
    die "apt-get install $* failed (apt's output above)"
  }
  rm -f "$log"
}

# The system's Debian mirror, so that added entries (backports, deb-src) use the same one.
debian_mirror() {
  local uri
  uri=$(grep -hE '^URIs:.*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1 | awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -hE '^deb .*debian/? bookworm ' /etc/apt/sources.list 2>/dev/null | head -n 1 | awk '{print $2}')
  echo "${uri:-http://deb.debian.org/debian}"
}

ensure_apt_packages() {
  command -v dpkg-query >/dev/null || die "this script needs a Debian system (dpkg-query not found)"
  local missing=() p
  for p in "${apt_packages[@]}"; do is_installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

# Catch2 v3 comes from bookworm-backports; bookworm itself only has the old 2.13.
ensure_catch2() {
  local v
  v=$(dpkg-query -W -f='${Version}' libcatch2-dev 2>/dev/null || true)
  case "$v" in 3.*) return ;; esac
  local list=/etc/apt/sources.list.d/hetero-bookworm-backports.sources
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding bookworm-backports to apt's sources (for Catch2 v3)"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$(debian_mirror)" | as_root tee "$list" >/dev/null
    apt_updated=0
  fi
  apt_update
  say "installing Catch2 v3 from bookworm-backports"
  apt_install -t bookworm-backports libcatch2-dev
}

# --- Kokkos ---------------------------------------------------------------------------------

# Prints the Kokkos_DEVICES of the Kokkos that CMake finds with the given prefix (may be empty),
# or nothing when none is found.
kokkos_devices() {
  local probe_build
  probe_build=$(mktemp -d)
  local args=(-S "$top/cmake/probe_kokkos" -B "$probe_build" -Wno-dev)
  [ -n "${1:-}" ] && args+=("-DKokkos_ROOT=$1")
  if cmake "${args[@]}" >"$probe_build/log" 2>&1; then
    sed -n 's/^-- hetero-probe: devices=//p' "$probe_build/log"
  fi
  rm -rf "$probe_build"
}

has_parallel_host() { echo "$1" | grep -qiE '(^|;)(OPENMP|THREADS|HPX)(;|$)'; }

# Extracts packages/kokkos of Debian's trilinos source package into $kokkos_source (once: both
# the OpenMP and the CUDA Kokkos are built from it).
ensure_kokkos_source() {
  [ -f "$kokkos_source/.hetero-complete" ] && return
  local work="$cache_dir/kokkos-download"
  say "fetching Kokkos $kokkos_version from Debian's trilinos source package (once; cached in $kokkos_source)"
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding a deb-src entry that mirrors the system's Debian entry (for 'apt-get source trilinos')"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$(debian_mirror)" | as_root tee /etc/apt/sources.list.d/hetero-bookworm-src.sources >/dev/null
    apt_updated=0
  fi
  apt_update
  rm -rf "$work" "$kokkos_source" && mkdir -p "$work"
  (cd "$work" && apt-get source --download-only trilinos >"$work/download.log" 2>&1) \
    || die "apt-get source --download-only trilinos failed; see $work/download.log"
  local orig
  orig=$(ls "$work"/trilinos_*.orig.tar.* 2>/dev/null | head -n 1)
  [ -n "$orig" ] || die "the trilinos source download has no orig tarball (see $work/download.log)"
  say "extracting packages/kokkos from $(basename "$orig")"
  tar -xf "$orig" -C "$work" --wildcards '*/packages/kokkos/*' || die "could not extract Kokkos from $orig"
  mv "$(ls -d "$work"/*/packages/kokkos | head -n 1)" "$kokkos_source"
  touch "$kokkos_source/.hetero-complete"
  rm -rf "$work"
}

build_kokkos() {
  ensure_kokkos_source
  local work="$cache_dir/kokkos-build"
  say "building Kokkos $kokkos_version (OpenMP + Serial, C++20, shared) from Debian's trilinos source"
  say "  into $kokkos_prefix (cached; later runs reuse it)"
  rm -rf "$work" && mkdir -p "$work"
  cmake -S "$kokkos_source" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$kokkos_prefix" -DCMAKE_CXX_STANDARD=20 -DBUILD_SHARED_LIBS=ON \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-w" >"$work/configure.log" 2>&1 \
    || die "configuring Kokkos failed; see $work/configure.log"
  cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 || die "building Kokkos failed; see $work/build.log"
  cmake --install "$work/build" >"$work/install.log" 2>&1 || die "installing Kokkos failed; see $work/install.log"
  touch "$kokkos_prefix/.hetero-complete"
  rm -rf "$work"
}

# The same Kokkos with CUDA (plus OpenMP and Serial on the host), for the CUDA stage: the source
# adapted to CUDA 13 and C++20, and taught Hopper, by cmake/kokkos/kokkos-3.4-cuda13.sh, built
# with its nvcc_wrapper for $cuda_arch (HETERO_CUDA_ARCH: sm_90, the default, or sm_80).
build_kokkos_cuda() {
  ensure_kokkos_source
  local work="$cache_dir/kokkos-cuda-build"
  say "building Kokkos $kokkos_version with CUDA ($("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $cuda_arch) + OpenMP + Serial"
  say "  into $kokkos_cuda_prefix (cached; later runs reuse it)"
  rm -rf "$work" && mkdir -p "$work"
  cp -r "$kokkos_source" "$work/src"
  "$top/cmake/kokkos/kokkos-3.4-cuda13.sh" "$work/src" "$cuda_arch" || die "adapting Kokkos $kokkos_version to CUDA 13 failed (above)"
  PATH="$cuda_home/bin:$PATH" cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$work/src/bin/nvcc_wrapper" -DCMAKE_INSTALL_PREFIX="$kokkos_cuda_prefix" \
    -DCMAKE_CXX_STANDARD=20 -DCMAKE_CXX_EXTENSIONS=OFF -DBUILD_SHARED_LIBS=ON -DKokkos_ENABLE_CUDA=ON \
    -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$kokkos_cuda_arch=ON" -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_TESTS=OFF -DCUDAToolkit_ROOT="$cuda_home" >"$work/configure.log" 2>&1 \
    || die "configuring Kokkos with CUDA failed; see $work/configure.log"
  PATH="$cuda_home/bin:$PATH" cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 \
    || die "building Kokkos with CUDA failed; see $work/build.log"
  cmake --install "$work/build" >"$work/install.log" 2>&1 || die "installing Kokkos with CUDA failed; see $work/install.log"
  touch "$kokkos_cuda_prefix/.hetero-complete"
  rm -rf "$work"
}

# Sets kokkos_root to the Kokkos to build against (empty: CMake's own search finds it).
ensure_kokkos() {
  local devices
  if [ -n "${Kokkos_ROOT:-}" ]; then
    devices=$(kokkos_devices "$Kokkos_ROOT")
    if [ -z "$devices" ]; then
      die "Kokkos_ROOT=$Kokkos_ROOT holds no Kokkos CMake package (KokkosConfig.cmake not found)"
    elif has_parallel_host "$devices"; then
      say "using Kokkos from Kokkos_ROOT=$Kokkos_ROOT (devices: $devices)"
      kokkos_root=$Kokkos_ROOT
      return
    fi
    say "Kokkos_ROOT=$Kokkos_ROOT has no parallel host backend (devices: $devices); building one instead"
  elif [ ! -f "$kokkos_prefix/.hetero-complete" ]; then
    devices=$(kokkos_devices "")
    if [ -n "$devices" ] && has_parallel_host "$devices"; then
      say "using the Kokkos CMake finds on this system (devices: $devices)"
      kokkos_root=""
      return
    elif [ -n "$devices" ]; then
      say "the Kokkos found on this system has no parallel host backend (devices: $devices)"
    fi
  fi
  if [ -f "$kokkos_prefix/.hetero-complete" ]; then
    say "using cached Kokkos $kokkos_version in $kokkos_prefix"
  else
    build_kokkos
  fi
  kokkos_root=$kokkos_prefix
}

# Sets kokkos_cuda_root to a Kokkos with CUDA for the CUDA stage: Kokkos_CUDA_ROOT when given,
# else the one built here from Debian's source; empty (stage skipped, said so) without nvcc.
ensure_kokkos_cuda() {
  kokkos_cuda_root=""
  if [ -n "${Kokkos_CUDA_ROOT:-}" ]; then
    local devices
    devices=$(kokkos_devices "$Kokkos_CUDA_ROOT")
    echo "$devices" | grep -qiE '(^|;)CUDA(;|$)' \
      || die "Kokkos_CUDA_ROOT=$Kokkos_CUDA_ROOT is not a Kokkos with CUDA (devices: ${devices:-none found})"
    [ -x "$Kokkos_CUDA_ROOT/bin/nvcc_wrapper" ] || die "Kokkos_CUDA_ROOT=$Kokkos_CUDA_ROOT has no bin/nvcc_wrapper"
    say "CUDA stage: using Kokkos from Kokkos_CUDA_ROOT=$Kokkos_CUDA_ROOT (devices: $devices)"
    kokkos_cuda_root=$Kokkos_CUDA_ROOT
    return
  fi
  if [ ! -x "$cuda_home/bin/nvcc" ]; then
    say "CUDA stage SKIPPED: no nvcc at $cuda_home/bin/nvcc (set CUDA_HOME to a CUDA toolkit, or Kokkos_CUDA_ROOT" \
      "to a Kokkos built with CUDA)"
    return
  fi
  if [ -f "$kokkos_cuda_prefix/.hetero-complete" ]; then
    say "using cached Kokkos $kokkos_version with CUDA in $kokkos_cuda_prefix"
  else
    build_kokkos_cuda
  fi
  kokkos_cuda_root=$kokkos_cuda_prefix
}

# PETSc, the peer of the CG benchmark (bench/linalg/petsc_cg.sh): Debian builds it on Open MPI,
# whose alternatives (priority 50) would take the unversioned mpicc/mpicxx/mpiexec and the mpi.h
# include folder from MPICH (40). hetero builds with MPICH by its own paths anyway (mpich_args);
# for the rest of the system, the MPI alternatives are fixed at what they are before PETSc comes.
ensure_petsc() {
  is_installed petsc-dev && return
  local group value
  for group in mpi mpirun "mpi-$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"; do
    value=$(update-alternatives --query "$group" 2>/dev/null | sed -n 's/^Value: //p')
    if [ -n "$value" ]; then
      say "keeping the MPI alternative '$group' at $value while PETSc (Open MPI) is installed"
      as_root update-alternatives --set "$group" "$value" >/dev/null
    fi
  done
  apt_install petsc-dev
}

ensure_deps() {
  ensure_apt_packages
  ensure_catch2
  ensure_petsc
  ensure_kokkos
}

# --- build and run --------------------------------------------------------------------------

# hetero builds and runs with MPICH, named by its own paths: another MPI on the machine (Open
# MPI, which PETSc pulls in for the benchmarks) may take over the unversioned mpicxx and
# mpiexec alternatives. The core_mpi_library test checks the result.
mpich_cxx=/usr/bin/mpicxx.mpich
mpich_exec=/usr/bin/mpiexec.mpich
mpich_args() {
  [ -x "$mpich_cxx" ] && [ -x "$mpich_exec" ] || die "MPICH's $mpich_cxx and $mpich_exec are missing (apt package mpich)"
  echo "-DMPI_CXX_COMPILER=$mpich_cxx" "-DMPIEXEC_EXECUTABLE=$mpich_exec" "-DHETERO_EXPECTED_MPI=MPICH"
}
export HETERO_MPIEXEC=$mpich_exec # for examples/demo.sh and bench/run.sh

configure() { # configure <build dir> <extra cmake args...>
  local dir=$1
  shift
  local args=(-S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=${HETERO_BUILD_TYPE:-Release})
  read -r -a mpich <<<"$(mpich_args)"
  args+=("${mpich[@]}")
  [ -n "$kokkos_root" ] && args+=("-DKokkos_ROOT=$kokkos_root")
  say "configuring $dir"
  cmake "${args[@]}" "$@" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log" >&2
    die "CMake configuration failed (log above)"
  }
}

build() { # build <build dir> [targets...]
  local dir=$1
  shift
  say "building $dir${*:+ ($*)}"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" -j "$jobs" "${targets[@]}" || die "the build failed (compiler output above)"
}

# GCC's garbage collector, for the test command's builds: the first collection at 1 GiB instead
# of GCC's 128 MiB. A template-heavy unit otherwise spends about a tenth of its time collecting
# (barrier_test.cpp: median 24.6 s of CPU, 22.0 s with these; allreduce_test.cpp 119 -> 95 s,
# its peak memory 1.7 -> 2.3 GiB; the CUDA stage's hello.cpp 58 -> 52 s). Only where the compiler
# is GCC (other compilers do not know these parameters).
gcc_gc_params=(--param=ggc-min-expand=100 --param=ggc-min-heapsize=1048576)
is_gcc() { "$1" --version 2>/dev/null | grep -q 'Free Software Foundation'; } # is_gcc <compiler>

# Three clean builds. The main build runs every test (style, headers, package included), the MPI
# tests and examples of 2 to 5 ranks once more on emulated nodes (docs/nodes.md): its examples and
# benchmarks are optimised programs, its test programs run under AddressSanitizer +
# UndefinedBehaviorSanitizer. The CUDA stage compiles and links every device code path for a GPU
# (see cuda_stage). A ThreadSanitizer build runs the tests labelled `tsan` (the threaded
# schedulers).
#
# The three run one after the other. The CUDA stage once ran beside the main build and tests at
# the scheduler's idle priority (SCHED_IDLE): its configure step got no CPU until the main build
# had ended, and beside the tests it took the idle time but the tests took a third longer (1071
# -> 1438 s; likely their ranks, which sleep and wake often, sharing caches and memory bandwidth
# with nvcc), about as much as it saved; CI's run grew from 3888 to 4438 s.
cmd_test() {
  ensure_deps
  local t0=$SECONDS
  # The test programs: ASan + UBSan at -O0 with line tables (-g1, reports keep file:line) and
  # assertions on (-UNDEBUG). They check every access and operation at -O0 as at -O1 (the
  # optimiser only removes some), and -O0 halves their build (allreduce_test.cpp: 29 s of CPU
  # against 58 s at -O1); the CG tests, compute-bound, keep -O1 (tests/linalg/CMakeLists.txt).
  # One build for the tests and the sanitizers, not two: a separate sanitizer build and its run
  # took about a quarter of the whole command on a 2-core machine (23 of 84 minutes), and the
  # tests are bound by MPI's latency, not by the sanitizers (io_h5file_test.np5: 50.7 s under
  # ASan + UBSan, 50.1 s in the optimised build). The examples, benchmarks and tools at -O1: the
  # tests run them on small inputs (about 100 s of the tests' time in all), and -O1 takes a
  # fifth less compile time than -O2 (examples/cg/cg.cpp: 41 s of CPU against 52 s at -O2, 31 s
  # at -O0, where the examples' and benchmarks' runs would be several times slower); the demo,
  # bench/ and ./hetero.sh gpu-kit build them at -O3. UBSan's `null` check is left out: it
  # instruments every pointer and reference use and costs an eighth of a test program's compile
  # (gather_test.cpp 30.7 s, 26.8 s without), while a null pointer read or written still ends the
  # test with ASan's SEGV report and its stack; only a null that is never dereferenced (a
  # reference bound to *nullptr, a member call on null that reads nothing) goes unreported.
  local test_flags=("-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DHETERO_SANITIZE=address;undefined"
    -DHETERO_SANITIZE_SKIP=null -DHETERO_SANITIZE_SCOPE=tests "-DHETERO_TEST_COMPILE_OPTIONS=-O0;-g1;-UNDEBUG")
  local tsan_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")
  if is_gcc "${CXX:-c++}"; then
    test_flags+=("-DCMAKE_CXX_FLAGS=${gcc_gc_params[*]}")
    tsan_flags+=("-DCMAKE_CXX_FLAGS=${gcc_gc_params[*]}")
  fi
  rm -rf "$build_dir/test" "$build_dir/test-cuda" "$build_dir/test-asan" "$build_dir/test-tsan" "$build_dir/test-cuda.log"
  mkdir -p "$build_dir"
  configure "$build_dir/test" -DHETERO_WARNINGS_AS_ERRORS=ON -DHETERO_BUILD_BENCHMARKS=ON "${test_flags[@]}"
  build "$build_dir/test"
  say "running the tests (examples and benchmarks optimised, test programs under ASan + UBSan)"
  # hwloc's PCI plugin (libhwloc-plugins, pulled in by StarPU) leaks 1016 bytes and is unloaded
  # before LeakSanitizer reports, so no suppression can name it; MPICH needs no PCI topology here.
  (cd "$build_dir/test" && HWLOC_COMPONENTS=-pci ctest --output-on-failure -j "$jobs") \
    || die "some tests failed (ctest output above)"

  cuda_stage

  # This build compiles three test programs only; tests/task's 18 files as one unit took 133 s,
  # alone on a core for most of the build's 174 s (2026-12-07; 112 s with units of eight), so its
  # files go in two units here.
  HETERO_BUILD_TYPE=RelWithDebInfo configure "$build_dir/test-tsan" "${tsan_flags[@]}" \
    -DHETERO_WARNINGS_AS_ERRORS=ON -DHETERO_SANITIZE=thread -DHETERO_BUILD_BENCHMARKS=OFF -DHETERO_BUILD_EXAMPLES=OFF \
    -DHETERO_TEST_NODES=OFF -DHETERO_TEST_UNITY_BATCH=9
  # Only the executables of the tests labelled tsan are built (ctest knows them once configured).
  local tsan_targets
  tsan_targets=$(cd "$build_dir/test-tsan" && ctest -N -L tsan --show-only=json-v1 \
    | jq -r '.tests[].command[] | select(test("/tests/"))' | xargs -r -n 1 basename | sort -u)
  if [ -n "$tsan_targets" ]; then
    # shellcheck disable=SC2086
    build "$build_dir/test-tsan" $tsan_targets
    say "running the tests labelled tsan under ThreadSanitizer"
    # UCX (MPICH's transport) hooks mmap/madvise; its hook crashes under TSan when a thread
    # exits, so the hooks are off (shared memory transports do not need them).
    (cd "$build_dir/test-tsan" && UCX_MEM_MMAP_HOOK_MODE=none TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
      ctest --output-on-failure -j "$jobs" -L tsan) || die "some tests failed under ThreadSanitizer (ctest output above)"
  fi
  say "all tests passed in $((SECONDS - t0)) s (three builds: main with ASan+UBSan tests, CUDA with the GPU kit, TSan)"
}

# Configures a build against the CUDA Kokkos in <dir>, its GPU kit packed into <kit dir>:
# configure_cuda <dir> <kit dir> <extra cmake args...>
configure_cuda() {
  local dir=$1 kit=$2
  shift 2
  rm -rf "$dir"
  say "configuring $dir (CUDA: $kokkos_cuda_root/bin/nvcc_wrapper)"
  read -r -a mpich <<<"$(mpich_args)"
  PATH="$cuda_home/bin:$PATH" cmake -S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${mpich[@]}" \
    -DKokkos_ROOT="$kokkos_cuda_root" -DCMAKE_CXX_COMPILER="$kokkos_cuda_root/bin/nvcc_wrapper" \
    -DCMAKE_CXX_EXTENSIONS=OFF -DCUDAToolkit_ROOT="$cuda_home" -DHETERO_WARNINGS_AS_ERRORS=ON \
    -DHETERO_BUILD_BENCHMARKS=ON -DHETERO_CHECK_HEADERS=OFF -DHETERO_GPU_KIT_DIR="$kit" "$@" >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log" >&2
    die "CMake configuration of $dir failed (log above)"
  }
}

# The CUDA stage: with nvcc_wrapper and a CUDA Kokkos, compiles and links the target
# hetero_cuda_stage (every public header in one translation unit, one translation unit per module
# instantiating its templates with Kokkos::Cuda and CudaSpace (tests/cuda), and every example)
# and the GPU kit (tools/gpu: the GPU tests, examples and benchmarks with every library they
# need). Nothing runs on a GPU here: the checks are that the machine code is for the architecture
# asked for (an sm_80 build cannot start on an H100), that every kit program's libraries resolve
# from the kit alone, and the kit's run.sh, which says "no CUDA device" (reported skipped) where
# there is none. nvcc's own warnings are errors too (NVCC_APPEND_FLAGS).
cuda_stage() {
  local t0=$SECONDS
  ensure_kokkos_cuda
  [ -n "$kokkos_cuda_root" ] || return 0
  local dir="$build_dir/test-cuda"
  # Host code at -O0: this stage's programs never run on a GPU (./hetero.sh gpu-kit builds the
  # kit that does, at -O3); nvcc's -O sets the host compiler's level only, the device code is
  # optimised either way. With GCC's collector set as for the main build (gcc_gc_params), a
  # unit takes about 30% less than at -O1 (hello.cpp, alone on the machine: 58-60 s at -O1,
  # 52-54 s at -O0, 43 s at -O0 with the collector set).
  local host_flags=(-O0 -DNDEBUG) p
  if is_gcc "${NVCC_WRAPPER_DEFAULT_COMPILER:-g++}"; then # nvcc_wrapper's host compiler
    for p in "${gcc_gc_params[@]}"; do host_flags+=(-Xcompiler "$p"); done
  fi
  # Its kit never leaves this machine: packed with xz's fastest preset (9 s, not 103 s; 56 MB, not
  # 37 MB: tools/gpu/pack_kit.sh); ./hetero.sh gpu-kit packs the kit that travels, with preset 6.
  configure_cuda "$dir" "$dir/gpu-kit" "-DCMAKE_CXX_FLAGS_RELEASE=${host_flags[*]}" -DHETERO_GPU_KIT_XZ_PRESET=0
  local units
  units=$(cd "$dir" && ninja -t commands hetero_cuda_stage hetero_gpu_kit | grep -c -- ' -c ')
  say "CUDA stage: compiling $units translation units for $cuda_arch and linking them, packing the GPU kit"
  PATH="$cuda_home/bin:$PATH" NVCC_APPEND_FLAGS="-Werror all-warnings" \
    cmake --build "$dir" -j "$jobs" --target hetero_cuda_stage hetero_gpu_kit || die "the CUDA stage failed (compiler output above)"
  say "CUDA stage: the misuses that must not compile, a user project built against the installed package, the GPU kit"
  (cd "$dir" && PATH="$cuda_home/bin:$PATH" NVCC_APPEND_FLAGS="-Werror all-warnings" \
    ctest --output-on-failure -j "$jobs" -L 'compile_fail|package|gpu_kit') || die "the CUDA stage's checks failed (above)"
  say "CUDA stage passed: $units translation units compiled and linked, the kit packed ($(du -sh "$dir/gpu-kit" | cut -f1)), and the checks above, in $((SECONDS - t0)) s"
}

# The GPU kit (tools/gpu): builds the GPU tests, examples and benchmarks against the CUDA Kokkos
# and packs them with every library a GPU node lacks into $build_dir/gpu-kit. Needs no GPU.
cmd_gpu_kit() {
  ensure_deps
  [ -x "$cuda_home/bin/nvcc" ] || [ -n "${Kokkos_CUDA_ROOT:-}" ] ||
    die "the GPU kit needs the CUDA toolkit: no nvcc at $cuda_home/bin/nvcc (set CUDA_HOME, or Kokkos_CUDA_ROOT)"
  ensure_kokkos_cuda
  local dir="$build_dir/gpu-kit-build" kit="$build_dir/gpu-kit"
  mkdir -p "$build_dir"
  configure_cuda "$dir" "$kit"
  say "building and packing the GPU kit ($cuda_arch)"
  PATH="$cuda_home/bin:$PATH" cmake --build "$dir" -j "$jobs" --target hetero_gpu_kit || die "building the GPU kit failed (above)"
  bash "$kit/run.sh" --libraries "$dir/kit-libraries" || die "the GPU kit's library check failed (above)"
  say "GPU kit ready: $kit ($(du -sh "$kit" | cut -f1)). On a GPU node, with only the NVIDIA driver and CUDA 13:"
  say "  copy the folder there and run: bash gpu-kit/run.sh <results folder>   (summary.json and log.txt)"
}

# The CUDA stage alone (the test command runs it after its main tests): build/test-cuda.
cmd_cuda_stage() {
  ensure_deps
  mkdir -p "$build_dir"
  cuda_stage
}

cmd_demo() {
  ensure_deps
  mkdir -p "$build_dir"
  configure "$build_dir/demo" -DHETERO_BUILD_TESTS=OFF -DHETERO_BUILD_BENCHMARKS=OFF -DHETERO_BUILD_TOOLS=OFF
  build "$build_dir/demo"
  "$top/examples/demo.sh" "$build_dir/demo"
}

cmd_bench() {
  local plots=0
  for a in "$@"; do
    case "$a" in
      --plots) plots=1 ;;
      *) die "unknown bench option '$a' (allowed: --plots)" ;;
    esac
  done
  ensure_deps
  mkdir -p "$build_dir"
  configure "$build_dir/bench" -DHETERO_BUILD_TESTS=OFF -DHETERO_BUILD_EXAMPLES=OFF -DHETERO_BUILD_BENCHMARKS=ON
  build "$build_dir/bench"
  HETERO_PLOTS=$plots "$top/bench/run.sh" "$build_dir/bench" "$build_dir/bench/results" "$top/docs/bench"
}

case "${1:-}" in
  demo) cmd_demo ;;
  test) cmd_test ;;
  bench)
    shift
    cmd_bench "$@"
    ;;
  gpu-kit) cmd_gpu_kit ;;
  cuda-stage) cmd_cuda_stage ;;
  deps)
    ensure_deps
    say "dependencies ready${kokkos_root:+ (Kokkos_ROOT=$kokkos_root)}"
    ;;
  *)
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "${1:-}" ] || die "unknown command '$1' (allowed: demo, test, bench, gpu-kit, cuda-stage, deps)"
    exit 2
    ;;
esac
