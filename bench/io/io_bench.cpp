// Writing and reading distributed arrays of 64 MiB to 2 GiB with hetero::h5file, beside the same
// bytes written by a plain MPI_File_write_at_all of each rank's contiguous block (the
// baseline: the best MPI-IO a user would write by hand) and by dd (the file system's own
// limit, one process), in one run.
//
//   write/<variant>/<MiB>: create, write, flush to disk (MPI_File_sync / dd conv=fsync), close.
//     The flush is timed: without it a write only copies into the page cache, and the figure
//     would be the speed of memory. baseline_mpiio, hetero_block (rows of 1 KiB doubles in
//     blocks), hetero_cyclic (the same rows dealt round-robin: every rank's part is
//     scattered over the whole file), dd (rank 0 alone, 4 MiB blocks).
//   read/<variant>/<MiB>: open, read, close, of the file just written. With
//     HETERO_IO_DROP_CACHES=1 (root only) the page cache is dropped before each read, so the
//     reads come from the disk; otherwise they come from memory, and the figures say so.
// Files go to HETERO_IO_BENCH_DIR (default: the current folder), one at a time.
#include <hetero/io.hpp>

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_main.hpp"

namespace {

constexpr std::int64_t row_length = 1024;  // doubles per row: 8 KiB rows
using array = hetero::distributed_array<double, 2, Kokkos::HostSpace>;

std::string bench_file(const char* what) {
  const char* dir = std::getenv("HETERO_IO_BENCH_DIR");
  return std::string(dir ? dir : ".") + "/hetero_io_bench_" + what + ".bin";
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

std::int64_t rows_of(const benchmark::State& state) { return state.range(0) * (1 << 20) / 8 / row_length; }

array make_array(std::int64_t rows, bool cyclic) {
  const auto kind = cyclic ? hetero::distribution::cyclic() : hetero::distribution::block();
  array a(hetero::index_space<2>({rows, row_length}, hetero::process_grid<2>({0, 1}),
                                 {kind, hetero::distribution::block()}));
  auto local = a.local_with_shadow();
  Kokkos::parallel_for("fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, local.extent(0)),
                       [=](std::size_t i) {
                         for (std::size_t j = 0; j < local.extent(1); ++j)
                           local(i, j) = static_cast<double>(i * 31 + j);
                       });
  Kokkos::fence();
  return a;
}

// Removes `path` (rank 0) and waits for it: every timed write starts without the old file.
void remove_file(const std::string& path) {
  std::error_code ignored;
  if (world_rank() == 0) std::filesystem::remove(path, ignored);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Drops the page cache before a read where asked (and allowed): the read then meets the disk.
void maybe_drop_caches() {
  const char* drop = std::getenv("HETERO_IO_DROP_CACHES");
  if (drop && std::string(drop) == "1" && world_rank() == 0) {
    ::sync();
    std::ofstream("/proc/sys/vm/drop_caches") << "1\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void set_bytes(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0) * (1 << 20));
}

void write_hetero(benchmark::State& state, bool cyclic) {
  const auto a = make_array(rows_of(state), cyclic);
  const auto path = bench_file("hetero");
  for (auto _ : state) {
    remove_file(path);
    const double start = MPI_Wtime();
    hetero::h5file out(path, hetero::file_mode::create);
    out.write("u", a);
    out.flush();
    out.close();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
  }
  remove_file(path);
  set_bytes(state);
}
void write_hetero_block(benchmark::State& state) { write_hetero(state, false); }
void write_hetero_cyclic(benchmark::State& state) { write_hetero(state, true); }

void read_hetero(benchmark::State& state, bool cyclic) {
  const auto a = make_array(rows_of(state), cyclic);
  const auto path = bench_file("hetero_read");
  {
    hetero::h5file out(path, hetero::file_mode::create);
    out.write("u", a);
  }
  for (auto _ : state) {
    maybe_drop_caches();
    const double start = MPI_Wtime();
    hetero::h5file in(path, hetero::file_mode::read);
    in.read("u", a);
    in.close();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
  }
  remove_file(path);
  set_bytes(state);
}
void read_hetero_block(benchmark::State& state) { read_hetero(state, false); }
void read_hetero_cyclic(benchmark::State& state) { read_hetero(state, true); }

// The hand-written MPI-IO a user would write for the same bytes: each rank's contiguous block at
// its offset, one collective call, MPI_File_sync.
void mpiio(benchmark::State& state, bool write) {
  const auto a = make_array(rows_of(state), false);
  const auto local = a.local_with_shadow();
  const auto [first, last] = a.space().axis(0).block_range(a.space().grid().coords()[0]);
  const MPI_Offset offset = first * row_length * 8;
  const auto count = static_cast<int>((last - first) * row_length);  // < 2^31 doubles per rank here
  const auto path = bench_file(write ? "mpiio" : "mpiio_read");
  auto open = [&](int mode) {
    MPI_File file;
    if (MPI_File_open(MPI_COMM_WORLD, path.c_str(), mode, MPI_INFO_NULL, &file) != MPI_SUCCESS) std::abort();
    return file;
  };
  if (!write) {
    MPI_File file = open(MPI_MODE_CREATE | MPI_MODE_WRONLY);
    MPI_File_write_at_all(file, offset, local.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
  }
  for (auto _ : state) {
    if (write) remove_file(path);
    if (!write) maybe_drop_caches();
    const double start = MPI_Wtime();
    MPI_File file = open(write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY);
    if (write) {
      MPI_File_write_at_all(file, offset, local.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE);
      MPI_File_sync(file);
    } else {
      MPI_File_read_at_all(file, offset, local.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&file);
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
  }
  remove_file(path);
  set_bytes(state);
}
void write_mpiio(benchmark::State& state) { mpiio(state, true); }
void read_mpiio(benchmark::State& state) { mpiio(state, false); }

// dd on rank 0 alone: the file system's own speed for one writer with 4 MiB blocks.
void dd(benchmark::State& state, bool write) {
  const auto path = bench_file(write ? "dd" : "dd_read");
  const long blocks = static_cast<long>(state.range(0) / 4);
  const std::string make =
      "dd if=/dev/zero of=" + path + " bs=4M count=" + std::to_string(blocks) + " conv=fsync status=none";
  if (!write && world_rank() == 0 && std::system(make.c_str()) != 0) std::abort();
  const std::string command = write ? make : "dd if=" + path + " of=/dev/null bs=4M status=none";
  for (auto _ : state) {
    if (write) remove_file(path);
    if (!write) maybe_drop_caches();
    const double start = MPI_Wtime();
    if (world_rank() == 0 && std::system(command.c_str()) != 0) std::abort();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);  // the others wait here
  }
  remove_file(path);
  set_bytes(state);
}
void write_dd(benchmark::State& state) { dd(state, true); }
void read_dd(benchmark::State& state) { dd(state, false); }

void sizes(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);  // rounds repeat it (bench_main.hpp)
  if (hetero::bench::smoke_run()) {
    b->Arg(4);
    return;
  }
  for (std::int64_t mib : {64, 512, 2048}) b->Arg(mib);
}

const int registered[] = {
    hetero::bench::add("write/baseline_mpiio", write_mpiio, sizes),
    hetero::bench::add("write/hetero_block", write_hetero_block, sizes),
    hetero::bench::add("write/hetero_cyclic", write_hetero_cyclic, sizes),
    hetero::bench::add("write/dd", write_dd, sizes),
    hetero::bench::add("read/baseline_mpiio", read_mpiio, sizes),
    hetero::bench::add("read/hetero_block", read_hetero_block, sizes),
    hetero::bench::add("read/hetero_cyclic", read_hetero_cyclic, sizes),
    hetero::bench::add("read/dd", read_dd, sizes),
};

}  // namespace

HETERO_BENCHMARK_MAIN()
