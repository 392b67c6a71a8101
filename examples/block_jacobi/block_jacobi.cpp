// block_jacobi: macro-tasks (coarse tasks whose bodies are graphs of finer tasks) on hetero's distributed arrays.
// Each Jacobi sweep of the 2-D Laplace equation is a task graph on every rank: the halo refresh (reflect) is
// adopted as an event, and the rank's rows are cut into domain blocks (one per worker, "core group"), each an
// outer task whose body declares an inner graph of row-chunk kernels. The same sweeps run three ways, from the
// same start:
//   nested   outer block tasks, inner chunk tasks (hetero::subgraph);
//   flat     the same chunk tasks declared directly in the outer graph;
//   serial   one loop over the rank's rows on one core.
// Every grid point must be the same in the three (bitwise); the program exits non-zero if not,
// and prints the time of each.
//   mpiexec -n 2 ./block_jacobi [n = 1024] [sweeps = 50] [blocks per rank = workers]
//                               [chunks per block = 8]
#include <hetero/hetero.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using array = hetero::distributed_array<double, 2>;
using view = decltype(std::declval<const array&>().block_view());
using device = Kokkos::DefaultExecutionSpace;

// The arrays live in host memory: inner kernels run on the worker thread that takes them.
// Otherwise (a GPU build) they are device tasks on the graph's device.
constexpr bool host_data = Kokkos::SpaceAccessibility<Kokkos::HostSpace, array::memory_space>::accessible;
#ifdef KOKKOS_ENABLE_SERIAL
using host_core = Kokkos::Serial;
#else
using host_core = Kokkos::DefaultHostExecutionSpace;
#endif
// What the serial version runs on: one host core, or the device when the data lives there.
using one_core = std::conditional_t<host_data, host_core, device>;

// One Jacobi update of the points a loop visits.
struct sweep {
  view from, to;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    to(i, j) = 0.25 * (from(i - 1, j) + from(i + 1, j) + from(i, j - 1) + from(i, j + 1));
  }
};

// The interior rows [first, last) of the grid, all interior columns.
hetero::index_box<2> rows(std::int64_t first, std::int64_t last, std::int64_t n) {
  return {{first, 1}, {last, n - 1}};
}

// Declares the kernel of one row chunk in `graph` (a task_graph or a subgraph).
template <class Graph, class... Clauses>
void spawn_chunk(Graph& graph, const hetero::index_space<2>& space, hetero::index_box<2> box, sweep kernel,
                 Clauses... clauses) {
  if constexpr (host_data) {
    graph.spawn("rows", clauses..., [&space, box, kernel] {
      hetero::for_each_owned(host_core(), "block_jacobi_rows", space, box, kernel);
    });
  } else {
    graph.spawn("rows", clauses..., hetero::device(), [&space, box, kernel](const device& instance) {
      hetero::for_each_owned(instance, "block_jacobi_rows", space, box, kernel);
    });
  }
}

struct setup {
  std::int64_t n;
  int blocks;
  int chunks;
  std::int64_t first_row;  // this rank's interior rows
  std::int64_t last_row;
};

// The rows [first, last) of piece `k` of `pieces` of [lo, hi).
std::pair<std::int64_t, std::int64_t> piece(std::int64_t lo, std::int64_t hi, int k, int pieces) {
  const std::int64_t size = hi - lo;
  return {lo + size * k / pieces, lo + size * (k + 1) / pieces};
}

void fill(array& a, std::int64_t n) {
  auto v = a.block_view();
  hetero::for_each_owned(
      "block_jacobi_init", a.space(), a.space().box(), KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        const bool edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
        v(i, j) = edge ? static_cast<double>(i * i - j * j) : 0.0;
      });
}

// `sweeps` sweeps, nested (blocks of chunks) or flat (chunks only), declared as one graph and
// waited for once; returns the array holding the last sweep.
array run_graph(hetero::task_graph<>& graph, const array& a, const array& b, const setup& s, int sweeps,
                bool nested) {
  const array buffers[2] = {a, b};
  auto halo = graph.event("halo");
  const int writers = nested ? 1 : s.chunks;  // per block: the block task, or each chunk task
  auto done = graph.events("done", s.blocks, writers);
  std::vector<hetero::event> all_done;
  for (int blk = 0; blk < s.blocks; ++blk)
    for (int w = 0; w < writers; ++w) all_done.push_back(done(blk, w));
  for (int k = 0; k < sweeps; ++k) {
    const array& u = buffers[k % 2];
    const sweep kernel{u.block_view(), buffers[(k + 1) % 2].block_view()};
    const auto& space = u.space();
    // The halo of this sweep's input once every block of the sweep before wrote it (collective:
    // the task runs on every rank, in the same order).
    graph.spawn("reflect", hetero::in(all_done), hetero::out(halo),
                [u] { hetero::reflect(u, {.corners = false}); });
    for (int blk = 0; blk < s.blocks; ++blk) {
      const auto [lo, hi] = piece(s.first_row, s.last_row, blk, s.blocks);
      if (nested) {
        graph.spawn("block", hetero::in(halo), hetero::out(done(blk, 0)),
                    [&space, kernel, lo, hi, &s](hetero::subgraph<>& inner) {
                      for (int c = 0; c < s.chunks; ++c) {
                        const auto [first, last] = piece(lo, hi, c, s.chunks);
                        spawn_chunk(inner, space, rows(first, last, s.n), kernel);
                      }
                    });
      } else {
        for (int c = 0; c < s.chunks; ++c) {
          const auto [first, last] = piece(lo, hi, c, s.chunks);
          spawn_chunk(graph, space, rows(first, last, s.n), kernel, hetero::in(halo), hetero::out(done(blk, c)));
        }
      }
    }
  }
  graph.wait();
  return buffers[sweeps % 2];
}

array run_serial(array u, array next, const setup& s, int sweeps) {
  for (int k = 0; k < sweeps; ++k) {
    hetero::reflect(u, {.corners = false});
    hetero::for_each_owned(one_core(), "block_jacobi_serial", u.space(), rows(s.first_row, s.last_row, s.n),
                           sweep{u.block_view(), next.block_view()});
    std::swap(u, next);
  }
  return u;
}

// The largest difference between `a` and `b` over every rank's points.
double largest_difference(const array& a, const array& b) {
  const auto x = a.block_view();
  const auto y = b.block_view();
  double local = 0;
  hetero::reduce_owned(
      "block_jacobi_compare", a.space(), a.space().box(),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, double& largest) {
        const double d = x(i, j) > y(i, j) ? x(i, j) - y(i, j) : y(i, j) - x(i, j);
        largest = d > largest ? d : largest;
      },
      Kokkos::Max<double>(local));
  return a.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::max{}));
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  hetero::task_graph graph;  // workers: the host threads Kokkos was given
  setup s{};
  s.n = argc > 1 ? std::stoll(argv[1]) : 1024;
  const int sweeps = argc > 2 ? std::stoi(argv[2]) : 50;
  s.blocks = argc > 3 ? std::stoi(argv[3]) : graph.workers();
  s.chunks = argc > 4 ? std::stoi(argv[4]) : 8;
  if (s.n < 3 || sweeps < 1 || s.blocks < 1 || s.chunks < 1) {
    if (rt.world_rank() == 0)
      std::fprintf(stderr, "usage: block_jacobi [n >= 3] [sweeps >= 1] [blocks >= 1] [chunks >= 1]\n");
    return EXIT_FAILURE;
  }

  // Block rows over the ranks, a shadow row above and below.
  hetero::process_grid<2> grid(std::array<int, 2>{rt.world_size(), 1});
  hetero::index_space<2> space({s.n, s.n}, grid);
  hetero::shadow_width<2> shadow;
  shadow.lower[0] = shadow.upper[0] = 1;
  const auto mine = space.local_range(rows(1, s.n - 1, s.n));  // this rank's interior rows, local
  s.first_row = mine.extent(0) > 0 ? space.to_global(grid.rank(), mine.begin)[0] : 1;
  s.last_row = s.first_row + mine.extent(0);

  std::vector<array> arrays;
  for (int a = 0; a < 6; ++a) {
    arrays.emplace_back(space, hetero::array_options<2>{.shadow = shadow, .label = "u" + std::to_string(a)});
    fill(arrays.back(), s.n);
  }
  double seconds[3];
  array result[3] = {arrays[0], arrays[2], arrays[4]};
  for (int version = 0; version < 3; ++version) {
    space.grid().comm().barrier();
    hetero::stopwatch watch;
    array& u = arrays[static_cast<std::size_t>(2 * version)];
    array& next = arrays[static_cast<std::size_t>(2 * version + 1)];
    result[version] =
        version == 2 ? run_serial(u, next, s, sweeps) : run_graph(graph, u, next, s, sweeps, version == 0);
    seconds[version] = watch.seconds();
  }
  const double nested_vs_serial = largest_difference(result[0], result[2]);
  const double flat_vs_serial = largest_difference(result[1], result[2]);
  array start(space, hetero::array_options<2>{.shadow = shadow, .label = "start"});
  fill(start, s.n);
  const double moved = largest_difference(result[2], start);  // the sweeps did change the grid
  const bool ok = nested_vs_serial == 0 && flat_vs_serial == 0 && moved > 0;
  if (rt.world_rank() == 0) {
    std::printf(
        "block_jacobi %lld x %lld, %d sweeps on %d rank(s) x %d worker(s): %d blocks x %d chunks per rank\n",
        static_cast<long long>(s.n), static_cast<long long>(s.n), sweeps, rt.world_size(), graph.workers(),
        s.blocks, s.chunks);
    std::printf(
        "nested %.4f s, flat %.4f s, serial (one core per rank) %.4f s: nested/flat %.3f, serial/nested %.2f\n",
        seconds[0], seconds[1], seconds[2], seconds[0] / seconds[1], seconds[2] / seconds[0]);
    std::printf(
        "largest change from the start %.2e; largest difference to the serial sweeps: nested %.1e, flat "
        "%.1e: %s\n",
        moved, nested_vs_serial, flat_vs_serial, ok ? "identical" : "WRONG");
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
