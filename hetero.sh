#!/usr/bin/env bash
# hetero's one entry point: installs what is missing, builds, and runs.
#
#   ./hetero.sh demo            the main job: build and run the examples on 2 MPI ranks
#   ./hetero.sh test            clean build, every test (ctest), non-zero exit on any failure
#   ./hetero.sh bench [--plots] build and run the benchmarks (JSON under build/bench/,
#                               PNG plots under docs/bench/ with --plots)
#   ./hetero.sh deps            only install the dependencies (apt packages, Kokkos)
#
# Environment:
#   Kokkos_ROOT        a Kokkos install to use (must have a parallel host backend)
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
  libopenblas-dev liblapacke-dev
  libbenchmark-dev
  zlib1g-dev
  libtbb-dev
  gnuplot-nox jq
  clang-format
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

build_kokkos() {
  local work="$cache_dir/kokkos-src"
  say "building Kokkos $kokkos_version (OpenMP + Serial, C++20, shared) from Debian's trilinos source"
  say "  into $kokkos_prefix (cached; later runs reuse it)"
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding a deb-src entry that mirrors the system's Debian entry (for 'apt-get source trilinos')"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$(debian_mirror)" | as_root tee /etc/apt/sources.list.d/hetero-bookworm-src.sources >/dev/null
    apt_updated=0
  fi
  apt_update
  rm -rf "$work" && mkdir -p "$work"
  (cd "$work" && apt-get source --download-only trilinos >"$work/download.log" 2>&1) \
    || die "apt-get source --download-only trilinos failed; see $work/download.log"
  local orig
  orig=$(ls "$work"/trilinos_*.orig.tar.* 2>/dev/null | head -n 1)
  [ -n "$orig" ] || die "the trilinos source download has no orig tarball (see $work/download.log)"
  say "extracting packages/kokkos from $(basename "$orig")"
  tar -xf "$orig" -C "$work" --wildcards '*/packages/kokkos/*' || die "could not extract Kokkos from $orig"
  local src
  src=$(ls -d "$work"/*/packages/kokkos | head -n 1)
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$kokkos_prefix" -DCMAKE_CXX_STANDARD=20 -DBUILD_SHARED_LIBS=ON \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-w" >"$work/configure.log" 2>&1 \
    || die "configuring Kokkos failed; see $work/configure.log"
  cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 || die "building Kokkos failed; see $work/build.log"
  cmake --install "$work/build" >"$work/install.log" 2>&1 || die "installing Kokkos failed; see $work/install.log"
  touch "$kokkos_prefix/.hetero-complete"
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

ensure_deps() {
  ensure_apt_packages
  ensure_catch2
  ensure_kokkos
}

# --- build and run --------------------------------------------------------------------------

configure() { # configure <build dir> <extra cmake args...>
  local dir=$1
  shift
  local args=(-S "$top" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=${HETERO_BUILD_TYPE:-Release})
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

# Three clean builds: the release build runs every test (style, headers, package included); the
# sanitizer build (ASan + UBSan) runs the tests again, style and package excepted; a
# ThreadSanitizer build runs the tests labelled `tsan` (the threaded schedulers).
cmd_test() {
  ensure_deps
  local t0=$SECONDS
  # The sanitizer builds use -O1 with line tables only (no NDEBUG, so assertions stay on): the
  # sanitizers' recommended level, and 2.6x quicker to compile here than RelWithDebInfo's -O2 -g
  # (tests/comm/allreduce_test.cpp under ASan: 47 s against 121 s). Reports keep file:line.
  local sanitizer_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")
  rm -rf "$build_dir/test" "$build_dir/test-asan" "$build_dir/test-tsan"
  mkdir -p "$build_dir"
  configure "$build_dir/test" -DHETERO_WARNINGS_AS_ERRORS=ON -DHETERO_BUILD_BENCHMARKS=ON
  build "$build_dir/test"
  say "running the tests (release build)"
  (cd "$build_dir/test" && ctest --output-on-failure -j "$jobs") || die "some tests failed (ctest output above)"

  HETERO_BUILD_TYPE=RelWithDebInfo configure "$build_dir/test-asan" "${sanitizer_flags[@]}" \
    -DHETERO_WARNINGS_AS_ERRORS=ON "-DHETERO_SANITIZE=address;undefined" -DHETERO_BUILD_BENCHMARKS=OFF \
    -DHETERO_BUILD_EXAMPLES=OFF -DHETERO_CHECK_HEADERS=OFF
  build "$build_dir/test-asan"
  say "running the tests again under AddressSanitizer + UndefinedBehaviorSanitizer"
  # hwloc's PCI plugin (libhwloc-plugins, pulled in by StarPU) leaks 1016 bytes and is unloaded
  # before LeakSanitizer reports, so no suppression can name it; MPICH needs no PCI topology here.
  (cd "$build_dir/test-asan" && HWLOC_COMPONENTS=-pci ctest --output-on-failure -j "$jobs" -LE 'style|package') \
    || die "some tests failed under the sanitizers (ctest output above)"

  HETERO_BUILD_TYPE=RelWithDebInfo configure "$build_dir/test-tsan" "${sanitizer_flags[@]}" \
    -DHETERO_WARNINGS_AS_ERRORS=ON -DHETERO_SANITIZE=thread -DHETERO_BUILD_BENCHMARKS=OFF -DHETERO_BUILD_EXAMPLES=OFF
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
  say "all tests passed in $((SECONDS - t0)) s (three builds, build and run)"
}

cmd_demo() {
  ensure_deps
  mkdir -p "$build_dir"
  configure "$build_dir/demo" -DHETERO_BUILD_TESTS=OFF -DHETERO_BUILD_BENCHMARKS=OFF
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
  deps)
    ensure_deps
    say "dependencies ready${kokkos_root:+ (Kokkos_ROOT=$kokkos_root)}"
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "${1:-}" ] || die "unknown command '$1' (allowed: demo, test, bench, deps)"
    exit 2
    ;;
esac
