// Peak memory per rank of reading a Matrix Market file into a distributed_csr, the two ways:
//   every   every rank reads and parses the whole file, then keeps its rows (before issue 33)
//   one     rank 0 reads, every rank receives its rows (hetero::matrix_market_rows)
// and a check that both give the same rows. Also writes the test file:
//   read_memory write FILE N     a 7-point Poisson matrix on an N^3 grid, Matrix Market text
//   mpiexec -n 4 read_memory every|one FILE
// Prints one line per rank: VmHWM (peak resident set) after the matrix is built, and the time.
#include <hetero/hetero.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

long peak_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = -1;
  while (status >> key) {
    if (key == "VmHWM:") {
      status >> value;
      return value;
    }
    std::getline(status, key);
  }
  return value;
}

void write_poisson(const std::string& path, int n) {
  const auto a = hetero::poisson_3d(n).rows(0, static_cast<std::int64_t>(n) * n * n);
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw hetero::invalid_argument("cannot write " + path);
  std::fprintf(out, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n",
               static_cast<long long>(a.global_rows()), static_cast<long long>(a.cols()),
               static_cast<long long>(a.nonzeros()));
  const auto ptr = a.row_ptr();
  const auto cols = a.col_idx();
  const auto values = a.values();
  for (std::int64_t r = 0; r < a.local_rows(); ++r)
    for (auto k = ptr[static_cast<std::size_t>(r)]; k < ptr[static_cast<std::size_t>(r) + 1]; ++k)
      std::fprintf(out, "%lld %lld %.17g\n", static_cast<long long>(r + 1),
                   static_cast<long long>(cols[static_cast<std::size_t>(k)] + 1),
                   values[static_cast<std::size_t>(k)]);
  std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "write") {
    if (rt.world_rank() == 0) write_poisson(args[1], std::stoi(args[2]));
    return 0;
  }
  if (args.size() != 2 || (args[0] != "every" && args[0] != "one")) {
    if (rt.world_rank() == 0) std::cerr << "usage: read_memory write FILE N | read_memory every|one FILE\n";
    return 2;
  }
  hetero::communicator comm;
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  std::size_t nonzeros = 0;
  if (args[0] == "every") {
    const hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace> a(hetero::read_matrix_market_file(args[1]),
                                                                       comm);
    nonzeros = a.local_nonzeros();
  } else {
    const hetero::distributed_csr<Kokkos::DefaultHostExecutionSpace> a(hetero::matrix_market_rows(args[1], comm),
                                                                       comm);
    nonzeros = a.local_nonzeros();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long peak = peak_kib();
  std::vector<long> peaks = comm.gather(hetero::send_buf(peak));
  std::vector<double> times = comm.gather(hetero::send_buf(seconds));
  std::vector<std::size_t> counts = comm.gather(hetero::send_buf(nonzeros));
  if (rt.world_rank() == 0)
    for (int r = 0; r < comm.size(); ++r)
      std::cout << args[0] << " rank " << r << ": peak " << peaks[static_cast<std::size_t>(r)] / 1024 << " MiB, "
                << counts[static_cast<std::size_t>(r)] << " nonzeros, " << times[static_cast<std::size_t>(r)]
                << " s\n";
  return 0;
}
