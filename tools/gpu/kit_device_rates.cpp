// kit_device_rates: measures, once per kit run, the rates that bound every GPU benchmark
// (bench/support/bounds.hpp turns them into a bound per case):
//   - the device memory's bandwidth: the best of a triad a = b + s c over 3 x 1 GiB as plain
//     Kokkos writes it, the same triad as a CUDA kernel (two elements a thread, a grid the size
//     of the device) and a device-to-device copy of 1 GiB (cudaMemcpy), medians of 20 each;
//   - a kernel launch alone (1,000 empty launches, then one fence) and a launch the host waits
//     for (launch + fence, median of 2,000);
//   - host <-> device copies of 256 MiB, from pinned and from pageable host memory, median of 10;
//   - the FP64 rate: 8 independent FMA chains per thread over a million threads, median of 20;
//   - the FP64 matrix rate cuBLAS reaches (DGEMM, n = 8192, on the tensor cores where the device
//     has them), median of 5: the bound of a matrix product, which no FMA loop reaches.
// Written as "name value" lines (SI units: bytes/s, s, flop/s) to the file named by its argument,
// and printed as one "kit:" line. run.sh runs it before the checks and points the benchmarks at
// the file (HETERO_DEVICE_RATES).
//   kit_device_rates <rates file>
#include <Kokkos_Core.hpp>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

using device = Kokkos::DefaultExecutionSpace;
using device_memory = device::memory_space;
using vector = Kokkos::View<double*, device_memory>;

struct triad {
  vector a, b, c;
  double s;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) = b(i) + s * c(i); }
};

struct nothing {
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t) const {}
};

// Eight independent chains of `steps` FMAs each (16 * steps flops per thread); the sum is stored
// so that no chain can be dropped.
struct fma_chains {
  vector out;
  double x, y;
  int steps;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    double a0 = static_cast<double>(i) * 1e-9, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    double a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    for (int k = 0; k < steps; ++k) {
      a0 = a0 * x + y;
      a1 = a1 * x + y;
      a2 = a2 * x + y;
      a3 = a3 * x + y;
      a4 = a4 * x + y;
      a5 = a5 * x + y;
      a6 = a6 * x + y;
      a7 = a7 * x + y;
    }
    out(i) = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    Kokkos::fence();
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  return median(t);
}

__global__ void cuda_triad(double2* a, const double2* b, const double2* c, double s, std::int64_t pairs) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < pairs;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const double2 x = b[i], y = c[i];
    a[i] = make_double2(x.x + s * y.x, x.y + s * y.y);
  }
}

struct bandwidths {
  double kokkos = 0, cuda = 0, copy = 0;
};

bandwidths memory_bandwidth() {
  const std::int64_t n = std::int64_t{1} << 27;  // 1 GiB per vector
  vector a("a", n), b("b", n), c("c", n);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(c, 2.0);
  const double bytes = 3.0 * 8.0 * static_cast<double>(n);
  bandwidths r;
  const triad t{a, b, c, 3.0};
  Kokkos::parallel_for("triad", Kokkos::RangePolicy<device>(0, n), t);  // warm-up
  r.kokkos = bytes / median_seconds(20, [&] { Kokkos::parallel_for("triad", Kokkos::RangePolicy<device>(0, n), t); });
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const auto launch = [&] {
    cuda_triad<<<sms * 8, 256, 0, device().cuda_stream()>>>(reinterpret_cast<double2*>(a.data()),
                                                            reinterpret_cast<const double2*>(b.data()),
                                                            reinterpret_cast<const double2*>(c.data()), 3.0, n / 2);
  };
  launch();
  r.cuda = bytes / median_seconds(20, launch);
  const auto copy = [&] { cudaMemcpyAsync(a.data(), b.data(), 8 * n, cudaMemcpyDeviceToDevice, device().cuda_stream()); };
  copy();
  r.copy = 2.0 * 8.0 * static_cast<double>(n) / median_seconds(20, copy);
  return r;
}

template <class HostMemory>
void copy_rates(double& to_device, double& to_host) {
  const std::int64_t n = std::int64_t{1} << 25;  // 256 MiB
  vector d("d", n);
  Kokkos::View<double*, HostMemory> h("h", n);
  Kokkos::deep_copy(h, 1.0);
  Kokkos::deep_copy(d, h);  // warm-up (and pages touched)
  to_device = 8.0 * static_cast<double>(n) / median_seconds(10, [&] { Kokkos::deep_copy(d, h); });
  to_host = 8.0 * static_cast<double>(n) / median_seconds(10, [&] { Kokkos::deep_copy(h, d); });
}

void launch_latency(double& launch, double& launch_and_wait) {
  const auto empty = Kokkos::RangePolicy<device>(0, 1);
  for (int i = 0; i < 100; ++i) Kokkos::parallel_for("empty", empty, nothing{});
  Kokkos::fence();
  constexpr int burst = 1000;
  launch = median_seconds(5, [&] {
             for (int i = 0; i < burst; ++i) Kokkos::parallel_for("empty", empty, nothing{});
           }) /
           burst;
  std::vector<double> t;
  for (int r = 0; r < 2000; ++r) {
    Kokkos::Timer timer;
    Kokkos::parallel_for("empty", empty, nothing{});
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  launch_and_wait = median(t);
}

double fp64_rate() {
  const std::int64_t threads = std::int64_t{1} << 20;
  const int steps = 2048;
  vector out("out", threads);
  const fma_chains f{out, 0.999999, 1e-7, steps};
  Kokkos::parallel_for("fma", Kokkos::RangePolicy<device>(0, threads), f);
  const double s = median_seconds(20, [&] { Kokkos::parallel_for("fma", Kokkos::RangePolicy<device>(0, threads), f); });
  return 16.0 * steps * static_cast<double>(threads) / s;
}

// cuBLAS's DGEMM on n x n matrices in the device's memory, on Kokkos' stream; 0 where cuBLAS fails.
double dgemm_rate() {
  const int n = 8192;
  vector a("a", std::int64_t{n} * n), b("b", std::int64_t{n} * n), c("c", std::int64_t{n} * n);
  Kokkos::deep_copy(a, 1e-3);
  Kokkos::deep_copy(b, 2e-3);
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 0;
  cublasSetStream(handle, device().cuda_stream());
  const double one = 1, zero = 0;
  bool ok = true;
  const auto gemm = [&] {
    ok = ok && cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), n, b.data(), n, &zero, c.data(),
                           n) == CUBLAS_STATUS_SUCCESS;
  };
  gemm();
  const double s = median_seconds(5, gemm);
  cublasDestroy(handle);
  return ok ? 2.0 * n * static_cast<double>(n) * n / s : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kit_device_rates <rates file>\n");
    return 2;
  }
  Kokkos::initialize(argc, argv);
  int status = 0;
  {
    double h2d_pinned = 0, d2h_pinned = 0, h2d_pageable = 0, d2h_pageable = 0, launch = 0, launch_and_wait = 0;
    const bandwidths measured = memory_bandwidth();
    const double bandwidth = std::max({measured.kokkos, measured.cuda, measured.copy});
    copy_rates<Kokkos::CudaHostPinnedSpace>(h2d_pinned, d2h_pinned);
    copy_rates<Kokkos::HostSpace>(h2d_pageable, d2h_pageable);
    launch_latency(launch, launch_and_wait);
    const double fp64 = fp64_rate();
    const double fp64_matrix = dgemm_rate();
    std::ofstream out(argv[1]);
    out << "# kit_device_rates: SI units (bytes/s, s, flop/s)\n"
        << "triad_bytes_per_s " << bandwidth << "\nkokkos_triad_bytes_per_s " << measured.kokkos
        << "\ncuda_triad_bytes_per_s " << measured.cuda << "\ncopy_bytes_per_s " << measured.copy << "\nlaunch_s " << launch << "\nlaunch_and_wait_s " << launch_and_wait
        << "\nh2d_pinned_bytes_per_s " << h2d_pinned << "\nd2h_pinned_bytes_per_s " << d2h_pinned
        << "\nh2d_pageable_bytes_per_s " << h2d_pageable << "\nd2h_pageable_bytes_per_s " << d2h_pageable
        << "\nfp64_flops_per_s " << fp64
        << "\nfp64_matrix_flops_per_s " << fp64_matrix << "\n";
    if (!out) {
      std::fprintf(stderr, "kit_device_rates: cannot write %s\n", argv[1]);
      status = 1;
    }
    std::printf(
        "kit: device rates: memory %.0f GB/s (triad: Kokkos %.0f, CUDA %.0f; copy %.0f); launch %.2f us, launch + wait %.2f us; host->device %.1f GB/s pinned, "
        "%.1f pageable; device->host %.1f GB/s pinned, %.1f pageable; FP64 %.2f TFLOP/s (FMA), %.2f (cuBLAS DGEMM)\n",
        bandwidth / 1e9, measured.kokkos / 1e9, measured.cuda / 1e9, measured.copy / 1e9, launch * 1e6, launch_and_wait * 1e6, h2d_pinned / 1e9, h2d_pageable / 1e9, d2h_pinned / 1e9,
        d2h_pageable / 1e9, fp64 / 1e12, fp64_matrix / 1e12);
  }
  Kokkos::finalize();
  return status;
}
