// comm on GPU buffers (CudaSpace Views), on 1 and 2 ranks sharing the GPU: every collective and
// its non-blocking form, on each device_buffer_path (automatic, which must stage where MPI is
// not CUDA-aware; staged through pinned host buffers; direct, which such an MPI cannot take and
// which must then be refused by name), with random counts, roots and
// forced algorithms, and reductions combined by device kernels (built-in operations and a
// user's functor). Every element is compared with a serial reference computed on the host from
// every rank's inputs, never with MPI's own result.
#include <hetero/comm.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "comm_test_support.hpp"
#include "gpu_support.hpp"

using namespace hetero;
using namespace hetero::testing;

namespace {

struct path_case {
  const char* name;
  device_buffer_path path;
};
// The paths GPU buffers can take with this MPI: direct only where it takes device pointers.
std::vector<path_case> usable_paths() {
  std::vector<path_case> p{{"automatic", device_buffer_path::automatic}, {"staged", device_buffer_path::staged}};
  if (mpi_gpu_support(gpu_kind::cuda) == gpu_support::yes) p.push_back({"direct", device_buffer_path::direct});
  return p;
}

communicator& comm_for(device_buffer_path path) {
  static std::unique_ptr<std::vector<communicator>> comms;
  auto& all = until_finalize(comms, [] {
    std::vector<communicator> c;
    for (const auto path : {device_buffer_path::automatic, device_buffer_path::staged, device_buffer_path::direct})
      c.emplace_back(options_with(path, true, std::size_t{1} << 16));
    return c;
  });
  return all[static_cast<std::size_t>(path == device_buffer_path::automatic ? 0
                                      : path == device_buffer_path::staged  ? 1
                                                                            : 2)];
}

template <class T>
using dview = Kokkos::View<T*, gpu_test::device_memory>;

// A forced algorithm for collective `c` that can run at `bytes`, or automatic.
comm_algorithm pick_algorithm(std::mt19937_64& gen, const communicator& comm, collective c, std::size_t bytes,
                              bool commutative = true, bool regroups_exactly = true) {
  const auto all = algorithms_of(c);
  const comm_algorithm a = all[gen() % all.size()];
  return runnable(comm, c, a, bytes, commutative, regroups_exactly) ? a : comm_algorithm::automatic;
}

template <class T, class Op>
std::vector<T> fold(std::uint64_t stream, int ranks, std::size_t n, Op op) {
  std::vector<T> r = values_of<T>(stream, 0, n);
  for (int q = 1; q < ranks; ++q) {
    const auto v = values_of<T>(stream, q, n);
    for (std::size_t i = 0; i < n; ++i) r[i] = op(r[i], v[i]);
  }
  return r;
}

template <class T, class Op, class Fold>
void reductions(communicator& comm, std::uint64_t stream, Op hetero_op, Fold fold_op, bool commutative = true) {
  auto gen = rng(stream);
  const int p = comm.size(), me = comm.rank();
  for (int trial = 0; trial < 8; ++trial) {
    const std::size_t n = random_count(gen, sizeof(T));
    const int root_rank = static_cast<int>(gen() % static_cast<std::uint64_t>(p));
    // A built-in operation on integers regroups exactly (dissemination may run it).
    const auto a =
        pick_algorithm(gen, comm, collective::allreduce, n * sizeof(T), commutative, std::is_integral_v<T>);
    const auto b = pick_algorithm(gen, comm, collective::reduce, n * sizeof(T), commutative);
    const std::uint64_t s = stream * 100 + static_cast<std::uint64_t>(trial);
    const auto expected = fold<T>(s, p, n, fold_op);
    const auto x = gpu_test::to_device(values_of<T>(s, me, n), "x");
    dview<T> y("y", n), z("z", n), w("w", n);
    INFO("trial " << trial << ", n " << n << ", allreduce " << to_string(a) << ", reduce " << to_string(b)
                  << " at root " << root_rank);
    comm.allreduce(send_buf(x), recv_buf(y), hetero_op, force_algorithm(a));
    check_equal(as_span(gpu_test::to_host(y)), as_span(expected), "allreduce");
    auto in_place = gpu_test::to_device(values_of<T>(s, me, n), "in_place");
    comm.allreduce(send_recv_buf(in_place), hetero_op);
    check_equal(as_span(gpu_test::to_host(in_place)), as_span(expected), "allreduce in place");
    comm.reduce(send_buf(x), recv_buf(z), hetero_op, root(root_rank), force_algorithm(b));
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(z)), as_span(expected), "reduce");
    auto r1 = comm.iallreduce(send_buf(x), recv_buf(w), hetero_op);
    dview<T> v("v", n);
    auto r2 = comm.ireduce(send_buf(x), recv_buf(v), hetero_op, root(root_rank));
    r2.wait();
    r1.wait();
    check_equal(as_span(gpu_test::to_host(w)), as_span(expected), "iallreduce");
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(v)), as_span(expected), "ireduce");
  }
}

// Broadcast, gather, scatter, allgather and their v- and non-blocking forms.
template <class T>
void movements(communicator& comm, std::uint64_t stream) {
  auto gen = rng(stream);
  const int p = comm.size(), me = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t n = random_count(gen, sizeof(T) * up);
    const int root_rank = static_cast<int>(gen() % up);
    const std::uint64_t s = stream * 100 + static_cast<std::uint64_t>(trial);
    INFO("trial " << trial << ", n " << n << ", root " << root_rank);
    // Every rank's block and their concatenation in rank order.
    std::vector<T> all;
    for (int q = 0; q < p; ++q) {
      const auto v = values_of<T>(s, q, n);
      all.insert(all.end(), v.begin(), v.end());
    }
    const auto mine = values_of<T>(s, me, n);
    const auto root_block = values_of<T>(s, root_rank, n);
    const std::vector<T> block_of_mine(
        all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(me)),
        all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(me + 1)));

    auto b = gpu_test::to_device(mine, "b");
    const auto ab = pick_algorithm(gen, comm, collective::broadcast, n * sizeof(T));
    comm.broadcast(send_recv_buf(b), root(root_rank), force_algorithm(ab));
    check_equal(as_span(gpu_test::to_host(b)), as_span(root_block), "broadcast");

    const auto x = gpu_test::to_device(mine, "x");
    dview<T> gathered("gathered", n * up), everyone("everyone", n * up), piece("piece", n);
    comm.gather(send_buf(x), recv_buf(gathered), root(root_rank),
                force_algorithm(pick_algorithm(gen, comm, collective::gather, n * up * sizeof(T))));
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(gathered)), as_span(all), "gather");
    comm.allgather(send_buf(x), recv_buf(everyone),
                   force_algorithm(pick_algorithm(gen, comm, collective::allgather, n * up * sizeof(T))));
    check_equal(as_span(gpu_test::to_host(everyone)), as_span(all), "allgather");
    const auto source = gpu_test::to_device(all, "source");  // significant on the root only
    comm.scatter(send_buf(source), recv_buf(piece), root(root_rank),
                 force_algorithm(pick_algorithm(gen, comm, collective::scatter, n * up * sizeof(T))));
    check_equal(as_span(gpu_test::to_host(piece)), as_span(block_of_mine), "scatter");

    // The v-forms: random counts and displacements with gaps, blocks in reverse rank order.
    const v_layout l = random_layout(s, p, sizeof(T));
    std::vector<T> v_all(l.extent, T{});
    for (int q = 0; q < p; ++q) {
      const auto v = values_of<T>(s + 7, q, static_cast<std::size_t>(l.counts[static_cast<std::size_t>(q)]));
      std::copy(v.begin(), v.end(), v_all.begin() + l.displs[static_cast<std::size_t>(q)]);
    }
    const auto my_count = static_cast<std::size_t>(l.counts[static_cast<std::size_t>(me)]);
    const auto my_values = values_of<T>(s + 7, me, my_count);
    const auto xv = gpu_test::to_device(my_values, "xv");
    dview<T> gv = gpu_test::to_device(std::vector<T>(l.extent, T{}), "gv");
    dview<T> agv = gpu_test::to_device(std::vector<T>(l.extent, T{}), "agv");
    comm.gatherv(send_buf(xv), recv_buf(gv), recv_counts(l.counts), recv_displs(l.displs), root(root_rank));
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(gv)), as_span(v_all), "gatherv");
    comm.allgatherv(send_buf(xv), recv_buf(agv), recv_counts(l.counts), recv_displs(l.displs));
    check_equal(as_span(gpu_test::to_host(agv)), as_span(v_all), "allgatherv");
    const auto v_source = gpu_test::to_device(v_all, "v_source");
    dview<T> sv("sv", my_count);
    comm.scatterv(send_buf(v_source), send_counts(l.counts), send_displs(l.displs), recv_buf(sv), root(root_rank));
    check_equal(as_span(gpu_test::to_host(sv)), as_span(my_values), "scatterv");

    // Non-blocking forms, all in flight together, waited in reverse order.
    auto ib = gpu_test::to_device(mine, "ib");
    dview<T> ig("ig", n * up), iag("iag", n * up), is("is", n), isv("isv", my_count);
    dview<T> igv = gpu_test::to_device(std::vector<T>(l.extent, T{}), "igv");
    dview<T> iagv = gpu_test::to_device(std::vector<T>(l.extent, T{}), "iagv");
    std::vector<collective_request> pending;
    pending.push_back(comm.ibroadcast(send_recv_buf(ib), root(root_rank)));
    pending.push_back(comm.igather(send_buf(x), recv_buf(ig), root(root_rank)));
    pending.push_back(comm.iallgather(send_buf(x), recv_buf(iag)));
    pending.push_back(comm.iscatter(send_buf(source), recv_buf(is), root(root_rank)));
    pending.push_back(
        comm.igatherv(send_buf(xv), recv_buf(igv), recv_counts(l.counts), recv_displs(l.displs), root(root_rank)));
    pending.push_back(
        comm.iallgatherv(send_buf(xv), recv_buf(iagv), recv_counts(l.counts), recv_displs(l.displs)));
    pending.push_back(comm.iscatterv(send_buf(v_source), send_counts(l.counts), send_displs(l.displs),
                                     recv_buf(isv), root(root_rank)));
    for (auto r = pending.rbegin(); r != pending.rend(); ++r) r->wait();
    check_equal(as_span(gpu_test::to_host(ib)), as_span(root_block), "ibroadcast");
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(ig)), as_span(all), "igather");
    check_equal(as_span(gpu_test::to_host(iag)), as_span(all), "iallgather");
    check_equal(as_span(gpu_test::to_host(is)), as_span(block_of_mine), "iscatter");
    if (me == root_rank) check_equal(as_span(gpu_test::to_host(igv)), as_span(v_all), "igatherv");
    check_equal(as_span(gpu_test::to_host(iagv)), as_span(v_all), "iallgatherv");
    check_equal(as_span(gpu_test::to_host(isv)), as_span(my_values), "iscatterv");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("reductions of GPU buffers equal a serial fold on every buffer path", "[gpu][comm][reduce]",
                   double, int, long long) {
  for (const auto& [name, path] : usable_paths()) {
    INFO("device_buffer_path " << name);
    communicator& comm = comm_for(path);
    reductions<TestType>(comm, 1, op(ops::sum{}), [](TestType a, TestType b) { return a + b; });
    reductions<TestType>(comm, 2, op(ops::max{}), [](TestType a, TestType b) { return a > b ? a : b; });
    reductions<TestType>(comm, 3, op(ops::min{}), [](TestType a, TestType b) { return a < b ? a : b; });
  }
}

TEST_CASE("user operations on GPU buffers run in device kernels and keep rank order", "[gpu][comm][reduce]") {
  for (const auto& [name, path] : usable_paths()) {
    INFO("device_buffer_path " << name);
    communicator& comm = comm_for(path);
    reductions<pair_value>(comm, 4, op(pair_max{}, ops::commutative), pair_max{});
    reductions<matrix2>(comm, 5, op(matrix_product{}, ops::non_commutative), matrix_product{}, false);
  }
}

TEMPLATE_TEST_CASE("broadcast, gather, scatter, allgather and their v- and non-blocking forms on GPU buffers",
                   "[gpu][comm]", double, int, pair_value) {
  for (const auto& [name, path] : usable_paths()) {
    INFO("device_buffer_path " << name);
    movements<TestType>(comm_for(path), 6);
  }
}

TEST_CASE("reduce combining on the GPU (linear_device) of staged buffers longer than a staging chunk",
          "[gpu][comm][reduce]") {
  // Found by the third GPU run: the root took each rank's vector as one message while the
  // others sent it in staging chunks (n > 8192 doubles with 64 KiB chunks).
  static std::unique_ptr<communicator> small_chunks;
  communicator& comm = until_finalize(
      small_chunks, [] { return communicator(options_with(device_buffer_path::staged, true, 256)); });
  const int p = comm.size(), me = comm.rank();
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{32}, std::size_t{33}, std::size_t{1000}}) {
    for (int root_rank = 0; root_rank < p; ++root_rank) {
      INFO("n " << n << " (32 doubles a chunk), root " << root_rank);
      const auto expected = fold<double>(40 + n, p, n, [](double a, double b) { return a + b; });
      const auto x = gpu_test::to_device(values_of<double>(40 + n, me, n), "x");
      dview<double> y("y", n);
      comm.reduce(send_buf(x), recv_buf(y), op(ops::sum{}), root(root_rank),
                  force_algorithm(comm_algorithm::linear_device));
      if (me == root_rank) check_equal(as_span(gpu_test::to_host(y)), as_span(expected), "reduce, linear_device");
    }
  }
}

TEST_CASE("automatic stages GPU buffers where MPI is not CUDA-aware; direct is then refused by name",
          "[gpu][comm]") {
  const bool aware = mpi_gpu_support(gpu_kind::cuda) == gpu_support::yes;
  INFO("CUDA-aware MPI: " << to_string(mpi_gpu_support(gpu_kind::cuda)));
  CHECK(detail::route_of<gpu_test::device_memory>(device_buffer_path::automatic, "test") ==
        (aware ? detail::buffer_route::direct : detail::buffer_route::staged));
  CHECK(detail::route_of<gpu_test::managed_memory>(device_buffer_path::automatic, "test") ==
        detail::buffer_route::host);
  if (aware) SKIP("this MPI takes CUDA pointers: direct is allowed and tested above");
  communicator& comm = comm_for(device_buffer_path::direct);
  dview<double> x("x", 10), y("y", 10);
  // Refused before any communication, on every rank alike: no rank is left waiting.
  CHECK_THROWS_AS(comm.allreduce(send_buf(x), recv_buf(y), op(ops::sum{})), backend_error);
  CHECK_THROWS_WITH(comm.broadcast(send_recv_buf(x), root(0)),
                    Catch::Matchers::ContainsSubstring("not GPU-aware") &&
                        Catch::Matchers::ContainsSubstring("use automatic or staged"));
  comm.barrier();
}
