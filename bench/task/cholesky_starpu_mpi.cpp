// StarPU-MPI's block Cholesky on several ranks: the distributed peer of hetero's 2-rank tasklet
// Cholesky (bench_task_cholesky_mpi), as the seed compared its tasklets with StarPU across
// nodes. The same tiles as examples/cholesky (b x b, tile row i on rank i % P), the same four
// tile kernels (kernels.hpp) and the same two orders as the one-rank StarPU families
// (cholesky_starpu.hpp), submitted with starpu_mpi_task_insert, which moves the tiles between
// ranks. Debian's StarPU-MPI is built on Open MPI, so this is a separate program, compiled and
// launched by cholesky_starpu_mpi.sh; it prints one TSV row per case on rank 0.
//
//   cholesky_starpu_mpi [--n N]... [--precision double|float]...
//                       [--order right|right_priorities|left]... [--workers W] [--tile B] [--rounds R]
//
// Orders: right-looking with every task at StarPU's default priority, the same with the
// critical-path priorities of StarPU's examples, and hetero's left-looking order (no priorities).
//
// Each case runs one factorisation to warm up, then R timed ones (from a barrier to the end of
// starpu_mpi_wait_for_all on every rank); the tiles are filled and registered again before each,
// outside the timing. Where N <= 2048 the last factor is checked by its residual.
#include <mpi.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cholesky_starpu.hpp"

namespace {

/// Submits to StarPU-MPI: the task runs on the owner of the tile it writes, and StarPU-MPI
/// sends the tiles it reads from their owners.
struct mpi_submitter {
  void submit(starpu_codelet* cl, std::vector<starpu_data_descr>& operands, int priority) const {
    const int status = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, operands.data(),
                                              static_cast<int>(operands.size()), STARPU_PRIORITY, priority, 0);
    if (status != 0) throw std::runtime_error("starpu_mpi_task_insert failed with " + std::to_string(status));
  }
  void wait() const { starpu_mpi_wait_for_all(MPI_COMM_WORLD); }
};

struct options {
  std::vector<int> sizes;
  std::vector<std::string> precisions, orders;
  int workers = 1, tile = 128, rounds = 5;
};

[[noreturn]] void usage(const std::string& why) {
  throw std::invalid_argument(why +
                              "; usage: cholesky_starpu_mpi [--n N]... [--precision double|float]... "
                              "[--order right|right_priorities|left]... [--workers W] [--tile B] [--rounds R]");
}

int positive(const std::string& flag, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (*end != '\0' || v < 1 || v > 1 << 20) usage(flag + " takes a positive integer, not '" + value + "'");
  return static_cast<int>(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string flag = argv[a];
    if (a + 1 == argc) usage(flag + " needs a value");
    const char* value = argv[++a];
    if (flag == "--n") {
      o.sizes.push_back(positive(flag, value));
    } else if (flag == "--precision" && (std::string(value) == "double" || std::string(value) == "float")) {
      o.precisions.emplace_back(value);
    } else if (flag == "--order" && (std::string(value) == "right" || std::string(value) == "right_priorities" ||
                                     std::string(value) == "left")) {
      o.orders.emplace_back(value);
    } else if (flag == "--workers") {
      o.workers = positive(flag, value);
    } else if (flag == "--tile") {
      o.tile = positive(flag, value);
    } else if (flag == "--rounds") {
      o.rounds = positive(flag, value);
    } else {
      usage("unknown argument '" + flag + " " + value + "'");
    }
  }
  if (o.sizes.empty()) o.sizes = {4096, 8192};
  if (o.precisions.empty()) o.precisions = {"double", "float"};
  if (o.orders.empty()) o.orders = {"right", "right_priorities", "left"};
  for (const int n : o.sizes)
    if (n % o.tile != 0) usage("--n " + std::to_string(n) + " is not a multiple of the tile size");
  return o;
}

/// This rank's tile rows (i % P == rank), each row's nt tiles side by side as in tiles.hpp.
template <cholesky::real T>
class rows {
 public:
  rows(int nt, int b, int rank, int ranks)
      : m_nt(nt),
        m_b(b),
        m_rank(rank),
        m_ranks(ranks),
        m_data(static_cast<std::size_t>((nt + ranks - 1) / ranks) * nt * b * b) {}

  [[nodiscard]] int owner(int i) const { return i % m_ranks; }
  [[nodiscard]] T* tile(int i, int k) {
    if (owner(i) != m_rank) return nullptr;
    return m_data.data() + (static_cast<std::size_t>(i / m_ranks) * m_nt + k) * m_b * m_b;
  }
  void fill() {
    for (int i = m_rank; i < m_nt; i += m_ranks)
      for (int k = 0; k <= i; ++k)
        cholesky::fill_tile(tile(i, k), i, k, m_b, static_cast<std::int64_t>(m_nt) * m_b);
  }
  /// The factor's residual on rank 0 (-1 elsewhere); collective.
  double residual() {
    const int count = m_nt * m_b * m_b;
    if (m_rank != 0) {
      for (int i = m_rank; i < m_nt; i += m_ranks) MPI_Send(tile(i, 0), count, type(), 0, i, MPI_COMM_WORLD);
      return -1.0;
    }
    std::vector<T> row(static_cast<std::size_t>(count));
    return cholesky::residual<T>(m_nt, m_b, [&](int i) -> const T* {
      if (owner(i) == 0) return tile(i, 0);
      MPI_Recv(row.data(), count, type(), owner(i), i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return row.data();
    });
  }

 private:
  static MPI_Datatype type() { return sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT; }
  int m_nt, m_b, m_rank, m_ranks;
  std::vector<T> m_data;
};

/// One factorisation in `order`; returns its time in seconds (the slowest rank's).
template <cholesky::real T>
double factorize(rows<T>& a, int nt, int b, const std::string& order) {
  a.fill();
  double seconds = 0.0;
  {
    cholesky::starpu::tile_handles<T> handles(nt, b, [&a](int i, int k) { return a.tile(i, k); });
    for (int i = 0; i < nt; ++i)
      for (int k = 0; k <= i; ++k) starpu_mpi_data_register(handles.at(i, k), i * nt + k, a.owner(i));
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    using cholesky::starpu::priority_mode;
    if (order == "right") {
      cholesky::starpu::factorize_right_looking(handles, priority_mode::none, mpi_submitter{});
    } else if (order == "right_priorities") {
      cholesky::starpu::factorize_right_looking(handles, priority_mode::critical_path, mpi_submitter{});
    } else {
      cholesky::starpu::factorize_left_looking(handles, priority_mode::none, mpi_submitter{});
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
  }  // unregistered: every tile is back in this rank's rows
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

template <cholesky::real T>
void run(const options& o, const std::string& order, int n, int rank, int ranks) {
  const int nt = n / o.tile;
  rows<T> a(nt, o.tile, rank, ranks);
  factorize(a, nt, o.tile, order);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < o.rounds; ++r) times.push_back(factorize(a, nt, o.tile, order));
  const double residual = n <= 2048 ? a.residual() : -1.0;
  if (rank != 0) return;
  const double allowed = sizeof(T) == 8 ? 1e-12 : 1e-5;
  if (n <= 2048 && !(residual < allowed))
    throw std::runtime_error("StarPU-MPI's Cholesky factor has residual " + std::to_string(residual) +
                             " at n = " + std::to_string(n) + "; allowed below " + std::to_string(allowed));
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 == 1 ? sorted[sorted.size() / 2]
                                               : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  char checked[32] = "-";
  if (n <= 2048) std::snprintf(checked, sizeof checked, "%.2e", residual);
  std::printf("%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.1f\t%s\n", sizeof(T) == 8 ? "double" : "float", order.c_str(),
              n, o.tile, ranks, o.workers, median * 1e3, sorted.back() * 1e3, cholesky::flops(n) / median * 1e-9,
              checked);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // StarPU-MPI's thread and ours
  int rank = 0, ranks = 1, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  try {
    if (provided < MPI_THREAD_MULTIPLE)
      throw std::runtime_error("the MPI library does not give MPI_THREAD_MULTIPLE");
    const options o = parse(argc, argv);
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = o.workers;
    conf.ncuda = 0;
    conf.nopencl = 0;
    conf.nmic = 0;
    if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, &conf) != 0)
      throw std::runtime_error("starpu_mpi_init_conf failed");
    openblas_set_num_threads(1);
    if (rank == 0)
      std::printf("precision\torder\tn\ttile\tranks\tworkers\tmedian_ms\tworst_ms\tgflops\tresidual\n");
    for (const auto& precision : o.precisions)
      for (const auto& order : o.orders)
        for (const int n : o.sizes) {
          if (precision == "double") {
            run<double>(o, order, n, rank, ranks);
          } else {
            run<float>(o, order, n, rank, ranks);
          }
        }
    starpu_mpi_shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cholesky_starpu_mpi (rank %d): %s\n", rank, e.what());
    status = 1;
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
