// exec with a CUDA device side: mirrored arrays hold two allocations (CudaSpace and host) and
// move rows between them; parallel_for/parallel_reduce bodies run on Kokkos::Cuda with device
// views (as hetero::loop_view) and on the host with host views; split_for hands the device half
// its CudaSpace view.
#include <hetero/exec.hpp>

#include <cstdint>
#include <type_traits>

#include "instantiate.hpp"

namespace {

using array = hetero::mirrored_array<double*, cuda_check::device, cuda_check::host>;
using rows3 = hetero::mirrored_array<double* [3], cuda_check::device, cuda_check::host>;
using policy = hetero::split_policy<cuda_check::device, cuda_check::host>;

static_assert(!hetero::shares_memory<cuda_check::device, cuda_check::host>,
              "a CUDA device and the host do not share memory: mirrored arrays hold two allocations");
static_assert(std::is_same_v<array::device_view_type::memory_space, Kokkos::CudaSpace>);
static_assert(hetero::is_gpu_space<cuda_check::device> && !hetero::is_gpu_space<cuda_check::host>);

// A functor with a templated operator(): the other documented form of a body.
struct axpy {
  double a;
  template <class X, class Y>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const X& x, const Y& y) const {
    y(i) += a * x(i);
  }
};

}  // namespace

void cuda_check::exec() {
  const std::int64_t n = 1000;
  array x("x", n), y("y", n);
  rows3 table("table", n);
  x.sync_device(0, n / 2);
  x.modify_device();
  x.sync_host();
  hetero::reset_weight("scale", 0.25);
  hetero::parallel_for(
      "scale", policy(0, n), hetero::access(hetero::reads(x), hetero::reads_all(table), hetero::writes(y)),
      KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> xv, hetero::loop_view<const double* [3]> tv,
                    hetero::loop_view<double*> yv) { yv(i) = 2 * xv(i) + tv(i, 2); });
  hetero::parallel_for("axpy", policy(0, n), hetero::access(hetero::reads(x), hetero::updates(y)), axpy{0.5});
  hetero::parallel_for("plain", n, KOKKOS_LAMBDA(std::int64_t){});
  double sum = 0, largest = 0;
  hetero::parallel_reduce(
      "sum", policy(0, n), hetero::access(hetero::reads(y)),
      KOKKOS_LAMBDA(std::int64_t i, hetero::loop_view<const double*> yv, double& s) { s += yv(i); }, sum);
  hetero::parallel_reduce(
      "max", policy(0, n), KOKKOS_LAMBDA(std::int64_t i, double& m) { m = i > m ? double(i) : m; },
      Kokkos::Max<double>(largest));
  hetero::split_for("chunks", policy(0, n), hetero::access(hetero::reads(x), hetero::writes(y)),
                    [](const auto& space, std::int64_t begin, std::int64_t end, const auto& xv, const auto& yv) {
                      using space_t = std::remove_cvref_t<decltype(space)>;
                      using memory = typename std::remove_cvref_t<decltype(xv)>::memory_space;
                      static_assert(std::is_same_v<memory, typename space_t::memory_space>,
                                    "each side of split_for gets the views of its own memory");
                      Kokkos::deep_copy(space, Kokkos::subview(yv, std::pair(begin, end)),
                                        Kokkos::subview(xv, std::pair(begin, end)));
                    });
  y.sync_host();
}
