// Writing and reading distributed arrays of 64 MiB to 2 GiB with hetero::h5file, beside the same
// bytes written by a plain MPI_File_write_at_all of each rank's contiguous block (the
// baseline: the best MPI-IO a user would write by hand) and by dd (the file system's own
// limit, one process), in one run.
//
//   write/<variant>/<MiB>: create, write, flush to disk (MPI_File_sync / dd conv=fsync), close.
//     The flush is timed: without it a write only copies into the page cache, and the figure
//     would be the speed of memory. baseline_mpiio, hetero_block (rows of 1 KiB doubles in
//     blocks), hetero_cyclic (the same rows dealt round-robin: every rank's part is
//     scattered over the whole file), hetero_block_halo (block, with a shadow row above and
//     below each rank's block, as a stencil's field has), hetero_async (block, written by
//     write_async and waited for: its copy of the block included), dd (rank 0 alone, 4 MiB
//     blocks).
//   read/<variant>/<MiB>: open, read, close, of the file just written. With
//     HETERO_IO_DROP_CACHES=1 (root only) the page cache is dropped before each read, so the
//     reads come from the disk; otherwise they come from memory, and the figures say so.
//   write_device/<variant>/<MiB>, read_device/<variant>/<MiB>: the same with the array in GPU
//     memory (builds whose default memory space the host cannot address: CUDA), hetero_block
//     against baseline_mpiio of a host copy (the block copied to the host, then written; read,
//     then copied to the GPU), the copies timed on both sides.
// Every write and read case also records where its time went, as counters step_<name> (ms, the
// slowest rank's): hetero's from its io regions (hetero::region: open, stage, checksum,
// create_dataset, data, attributes, flush, close, and write_async's copy), the baseline's from
// its own calls under the same names (open, stage, data, flush, close). bench/steps.sh prints
// their medians. Files go to HETERO_IO_BENCH_DIR (default: the current folder), one at a time.
// A read whose page cache could not be dropped says so once on standard error and in its
// counter cache_dropped (0).
#include <hetero/io.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_main.hpp"

namespace {

constexpr std::int64_t row_length = 1024;  // doubles per row: 8 KiB rows
using array = hetero::distributed_array<double, 2, Kokkos::HostSpace>;
using device_memory = Kokkos::DefaultExecutionSpace::memory_space;
constexpr bool has_device_memory = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, device_memory>::accessible;

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

// With `halo`, a shadow row above and below each block (a stencil's field): the block is then
// not the whole of its storage.
template <class Memory = Kokkos::HostSpace>
hetero::distributed_array<double, 2, Memory> make_array(std::int64_t rows, bool cyclic, bool halo = false) {
  const auto kind = cyclic ? hetero::distribution::cyclic() : hetero::distribution::block();
  hetero::index_space<2> space({rows, row_length}, hetero::process_grid<2>({0, 1}),
                               {kind, hetero::distribution::block()});
  hetero::shadow_width<2> shadow;
  if (halo) shadow.lower[0] = shadow.upper[0] = 1;
  if constexpr (!std::is_same_v<Memory, Kokkos::HostSpace>) {
    const auto host = make_array(rows, cyclic, halo);
    hetero::distributed_array<double, 2, Memory> a(space, {.shadow = shadow});
    Kokkos::deep_copy(a.local_with_shadow(), host.local_with_shadow());
    return a;
  } else {
    array a(space, {.shadow = shadow});
    auto local = a.local_with_shadow();
    Kokkos::parallel_for("fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, local.extent(0)),
                         [=](std::size_t i) {
                           for (std::size_t j = 0; j < local.extent(1); ++j)
                             local(i, j) = static_cast<double>(i * 31 + j);
                         });
    Kokkos::fence();
    return a;
  }
}

// Removes `path` (rank 0) and waits for it: every timed write starts without the old file.
void remove_file(const std::string& path) {
  std::error_code ignored;
  if (world_rank() == 0) std::filesystem::remove(path, ignored);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Drops the page cache before a read where asked (and allowed): the read then meets the disk.
// Returns whether it was dropped (on every rank).
bool maybe_drop_caches() {
  const char* drop = std::getenv("HETERO_IO_DROP_CACHES");
  int dropped = 0;
  if (drop && std::string(drop) == "1" && world_rank() == 0) {
    ::sync();
    std::ofstream caches("/proc/sys/vm/drop_caches");
    caches << "1\n";
    caches.close();
    dropped = caches ? 1 : 0;
    static bool told = false;
    if (!dropped && !std::exchange(told, true))
      std::fprintf(stderr,
                   "bench_io: the page cache could not be dropped (/proc/sys/vm/drop_caches is not "
                   "writable): reads come from memory\n");
  }
  MPI_Bcast(&dropped, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return dropped == 1;
}
void drop_before_read(benchmark::State& state) { state.counters["cache_dropped"] = maybe_drop_caches() ? 1 : 0; }

// The steps a write or a read is made of, as counters step_<name>.
constexpr std::array<std::string_view, 9> step_names = {
    "open", "stage", "checksum", "create_dataset", "data", "attributes", "flush", "close", "copy"};

// This rank's seconds in each step of one write or read: hetero's io regions (an io region's
// label, spaces as underscores, is its step; the regions of each thread nest: write >
// checksum, data..., and write_async's data and attributes are the I/O thread's), or the
// baseline's calls timed by hand (`add`).
class steps final : public hetero::observer {
 public:
  void region_begin(std::string_view module, std::string_view label, std::string_view) noexcept override {
    const std::lock_guard lock(m_mutex);
    m_open[std::this_thread::get_id()].push_back({module == "io" ? step_of(label) : -1, clock::now()});
  }
  void region_end() noexcept override {
    const std::lock_guard lock(m_mutex);
    auto& open = m_open[std::this_thread::get_id()];
    if (open.empty()) return;
    const auto [step, start] = open.back();
    open.pop_back();
    if (step >= 0)
      m_seconds[static_cast<std::size_t>(step)] += std::chrono::duration<double>(clock::now() - start).count();
  }
  [[nodiscard]] hetero::observer_events events() const noexcept override {
    return hetero::observer_events::regions;
  }

  void add(std::string_view name, double seconds) {
    const std::lock_guard lock(m_mutex);
    m_seconds[static_cast<std::size_t>(step_of(name))] += seconds;
  }
  // The slowest rank's milliseconds in each step as the iteration's counters; starts anew.
  void report(benchmark::State& state) {
    std::array<double, step_names.size()> slowest{};
    {
      const std::lock_guard lock(m_mutex);
      MPI_Allreduce(m_seconds.data(), slowest.data(), static_cast<int>(slowest.size()), MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      m_seconds.fill(0);
    }
    for (std::size_t i = 0; i < step_names.size(); ++i)
      state.counters["step_" + std::string(step_names[i])] = 1e3 * slowest[i];
  }

 private:
  using clock = std::chrono::steady_clock;
  static int step_of(std::string_view label) {
    std::string name(label);
    std::replace(name.begin(), name.end(), ' ', '_');
    const auto at = std::find(step_names.begin(), step_names.end(), name);
    return at == step_names.end() ? -1 : static_cast<int>(at - step_names.begin());
  }
  std::mutex m_mutex;
  // The regions each thread entered, innermost last.
  std::map<std::thread::id, std::vector<std::pair<int, clock::time_point>>> m_open;
  std::array<double, step_names.size()> m_seconds{};
};

// Runs `call`, adding its time to step `name` of `s`.
template <class Call>
void timed(steps& s, std::string_view name, Call&& call) {
  const double start = MPI_Wtime();
  call();
  s.add(name, MPI_Wtime() - start);
}

void set_bytes(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0) * (1 << 20));
}

// With `async`, write_async and a wait for it: the copy of the block, the write on the I/O
// thread and the flush, against the synchronous write's time (the copy is what it costs to
// return at once).
template <class Memory = Kokkos::HostSpace>
void write_hetero(benchmark::State& state, bool cyclic, bool halo = false, bool async = false) {
  const auto a = make_array<Memory>(rows_of(state), cyclic, halo);
  const auto path = bench_file("hetero");
  steps s;
  const hetero::scoped_observer listening(s);
  for (auto _ : state) {
    remove_file(path);
    const double start = MPI_Wtime();
    hetero::h5file out(path, hetero::file_mode::create);
    if (async)
      out.write_async("u", a).wait();
    else
      out.write("u", a);
    out.flush();
    out.close();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
    s.report(state);
  }
  remove_file(path);
  set_bytes(state);
}
void write_hetero_block(benchmark::State& state) { write_hetero(state, false); }
void write_hetero_cyclic(benchmark::State& state) { write_hetero(state, true); }
void write_hetero_halo(benchmark::State& state) { write_hetero(state, false, true); }
void write_hetero_async(benchmark::State& state) { write_hetero(state, false, false, true); }

template <class Memory = Kokkos::HostSpace>
void read_hetero(benchmark::State& state, bool cyclic, bool halo = false) {
  const auto a = make_array<Memory>(rows_of(state), cyclic, halo);
  const auto path = bench_file("hetero_read");
  {
    hetero::h5file out(path, hetero::file_mode::create);
    out.write("u", a);
  }
  steps s;
  const hetero::scoped_observer listening(s);
  for (auto _ : state) {
    drop_before_read(state);
    const double start = MPI_Wtime();
    hetero::h5file in(path, hetero::file_mode::read);
    in.read("u", a);
    in.close();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
    s.report(state);
  }
  remove_file(path);
  set_bytes(state);
}
void read_hetero_block(benchmark::State& state) { read_hetero(state, false); }
void read_hetero_cyclic(benchmark::State& state) { read_hetero(state, true); }
void read_hetero_halo(benchmark::State& state) { read_hetero(state, false, true); }

// The hand-written MPI-IO a user would write for the same bytes: each rank's contiguous block at
// its offset, one collective call, MPI_File_sync. An array in GPU memory is copied to a host
// buffer before the write and from it after the read, inside the timing.
template <class Memory = Kokkos::HostSpace>
void mpiio(benchmark::State& state, bool write) {
  const auto a = make_array<Memory>(rows_of(state), false);
  const auto local = a.local_with_shadow();
  const auto staging = Kokkos::create_mirror_view(local);  // local itself in host memory
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
    Kokkos::deep_copy(staging, local);
    MPI_File file = open(MPI_MODE_CREATE | MPI_MODE_WRONLY);
    MPI_File_write_at_all(file, offset, staging.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&file);
  }
  steps s;
  for (auto _ : state) {
    if (write) remove_file(path);
    if (!write) drop_before_read(state);
    const double start = MPI_Wtime();
    MPI_File file = MPI_FILE_NULL;
    timed(s, "open", [&] { file = open(write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY); });
    if (write) {
      timed(s, "stage", [&] { Kokkos::deep_copy(staging, local); });
      timed(s, "data",
            [&] { MPI_File_write_at_all(file, offset, staging.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE); });
      timed(s, "flush", [&] { MPI_File_sync(file); });
    } else {
      timed(s, "data",
            [&] { MPI_File_read_at_all(file, offset, staging.data(), count, MPI_DOUBLE, MPI_STATUS_IGNORE); });
      timed(s, "stage", [&] { Kokkos::deep_copy(local, staging); });
    }
    timed(s, "close", [&] { MPI_File_close(&file); });
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);
    s.report(state);
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
    if (!write) drop_before_read(state);
    const double start = MPI_Wtime();
    if (world_rank() == 0 && std::system(command.c_str()) != 0) std::abort();
    hetero::bench::set_iteration_time(state, MPI_Wtime() - start);  // the others wait here
  }
  remove_file(path);
  set_bytes(state);
}
void write_dd(benchmark::State& state) { dd(state, true); }
void read_dd(benchmark::State& state) { dd(state, false); }

// The same with the array in GPU memory.
void write_device_mpiio(benchmark::State& state) { mpiio<device_memory>(state, true); }
void write_device_hetero(benchmark::State& state) { write_hetero<device_memory>(state, false); }
void read_device_mpiio(benchmark::State& state) { mpiio<device_memory>(state, false); }
void read_device_hetero(benchmark::State& state) { read_hetero<device_memory>(state, false); }

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
    hetero::bench::add("write/hetero_block_halo", write_hetero_halo, sizes),
    hetero::bench::add("write/hetero_async", write_hetero_async, sizes),
    hetero::bench::add("write/dd", write_dd, sizes),
    hetero::bench::add("read/baseline_mpiio", read_mpiio, sizes),
    hetero::bench::add("read/hetero_block", read_hetero_block, sizes),
    hetero::bench::add("read/hetero_cyclic", read_hetero_cyclic, sizes),
    hetero::bench::add("read/hetero_block_halo", read_hetero_halo, sizes),
    hetero::bench::add("read/dd", read_dd, sizes),
};
// Only where there is GPU memory: a host build has no such case to skip.
const int registered_device[] = {
    has_device_memory ? hetero::bench::add("write_device/baseline_mpiio", write_device_mpiio, sizes) : 0,
    has_device_memory ? hetero::bench::add("write_device/hetero_block", write_device_hetero, sizes) : 0,
    has_device_memory ? hetero::bench::add("read_device/baseline_mpiio", read_device_mpiio, sizes) : 0,
    has_device_memory ? hetero::bench::add("read_device/hetero_block", read_device_hetero, sizes) : 0,
};

}  // namespace

HETERO_BENCHMARK_MAIN()
