// The four tile kernels as task bodies on task data: each is called with the Views of its tiles,
// as a host body (`kernel(views...)`: the CBLAS/LAPACKE kernels of kernels.hpp) or as a device
// body (`kernel(space, views...)`: cuBLAS and cuSOLVER on the instance's stream for a GPU; the
// host kernels on the device copies where a host execution space stands in for the device).
// An update reads `width` tiles of a row as one span: where they lie side by side in memory
// (the tiles of a rank's own row, tiles.hpp) they are one GEMM with K = width * b, else one
// call per tile.
#ifndef HETERO_EXAMPLES_CHOLESKY_TASK_KERNELS_HPP
#define HETERO_EXAMPLES_CHOLESKY_TASK_KERNELS_HPP

#include <hetero/config.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <span>

#include "kernels.hpp"
#if HETERO_HAS_CUDA()
#include "backend/cuda.hpp"
#endif

namespace cholesky {

/// Whether `Space`'s memory is host memory (a host space standing in for a device).
template <class Space>
inline constexpr bool host_memory =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

/// How many of `tiles` lie side by side from the first (each b x b, column-major).
template <class View>
int side_by_side(std::span<const View> tiles) {
  std::size_t n = 1;
  while (n < tiles.size() && tiles[n].data() == tiles[0].data() + n * tiles[0].size()) ++n;
  return static_cast<int>(n);
}

/// Calls `f(first tile, count)` for each run of tiles side by side in `tiles`.
template <class View, class F>
void for_each_run(std::span<const View> tiles, F&& f) {
  while (!tiles.empty()) {
    const int n = side_by_side(tiles);
    f(tiles[0].data(), n);
    tiles = tiles.subspan(static_cast<std::size_t>(n));
  }
}

/// A_jj = L_jj L_jj^T.
struct potrf_task {
  template <class A>
  void operator()(const A& ajj) const {
    potrf(ajj.data(), static_cast<int>(ajj.extent(0)));
  }
  template <class Space, class A>
  void operator()(const Space& space, const A& ajj) const {
    if constexpr (host_memory<Space>) {
      (*this)(ajj);
    } else {
      device_potrf(space, ajj.data(), static_cast<int>(ajj.extent(0)));
    }
  }
};

/// L_ij := A_ij L_jj^-T.
struct trsm_task {
  template <class L, class A>
  void operator()(const L& ljj, const A& aij) const {
    trsm(ljj.data(), aij.data(), static_cast<int>(aij.extent(0)));
  }
  template <class Space, class L, class A>
  void operator()(const Space& space, const L& ljj, const A& aij) const {
    if constexpr (host_memory<Space>) {
      (*this)(ljj, aij);
    } else {
      device_trsm(space, ljj.data(), aij.data(), static_cast<int>(aij.extent(0)));
    }
  }
};

/// A_jj -= Z Z^T for the tiles Z of row j given.
struct syrk_task {
  template <class Z, class A>
  void operator()(std::span<const Z> zj, const A& ajj) const {
    const int b = static_cast<int>(ajj.extent(0));
    for_each_run(zj, [&](const auto* z, int width) { syrk(z, ajj.data(), b, width); });
  }
  template <class Space, class Z, class A>
  void operator()(const Space& space, std::span<const Z> zj, const A& ajj) const {
    if constexpr (host_memory<Space>) {
      (*this)(zj, ajj);
    } else {
      const int b = static_cast<int>(ajj.extent(0));
      for_each_run(zj, [&](const auto* z, int width) { device_syrk(space, z, ajj.data(), b, width); });
    }
  }
};

/// A_ij -= Zi Zj^T for the tiles Zi of row i and Zj of row j given (the same tile columns).
struct gemm_task {
  template <class Z, class A>
  void operator()(std::span<const Z> zi, std::span<const Z> zj, const A& aij) const {
    update(zi, zj, aij,
           [&](const auto* a, const auto* b, int tile, int width) { gemm(a, b, aij.data(), tile, width); });
  }
  template <class Space, class Z, class A>
  void operator()(const Space& space, std::span<const Z> zi, std::span<const Z> zj, const A& aij) const {
    if constexpr (host_memory<Space>) {
      (*this)(zi, zj, aij);
    } else {
      update(zi, zj, aij, [&](const auto* a, const auto* b, int tile, int width) {
        device_gemm(space, a, b, aij.data(), tile, width);
      });
    }
  }

 private:
  // One call per run of tiles side by side in both rows.
  template <class Z, class A, class Call>
  static void update(std::span<const Z> zi, std::span<const Z> zj, const A& aij, Call&& call) {
    const int b = static_cast<int>(aij.extent(0));
    while (!zi.empty()) {
      const int n = std::min(side_by_side(zi), side_by_side(zj));
      call(zi[0].data(), zj[0].data(), b, n);
      zi = zi.subspan(static_cast<std::size_t>(n));
      zj = zj.subspan(static_cast<std::size_t>(n));
    }
  }
};

}  // namespace cholesky

#endif  // HETERO_EXAMPLES_CHOLESKY_TASK_KERNELS_HPP
