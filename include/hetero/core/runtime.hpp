/// @file
/// `hetero::runtime`: brings up MPI and Kokkos (only what is not already up), and tells a
/// rank where it stands: world and node-local rank, the device it should use, its cores.
#ifndef HETERO_CORE_RUNTIME_HPP
#define HETERO_CORE_RUNTIME_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <stdlib.h>  // setenv (POSIX)

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetero/core/detail/cpu.hpp"
#include "hetero/core/detail/devices.hpp"
#include "hetero/core/detail/kokkos_compat.hpp"
#include "hetero/core/detail/trace_file.hpp"
#include "hetero/core/detail/wait_registry.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/request_errors.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/mpi/watchdog.hpp"
#include "hetero/core/mpi/world_nodes.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/core/wait_timeout.hpp"

namespace hetero {

/// How `hetero::runtime` brings up what it initialises. Ignored for a library (MPI or Kokkos)
/// that was already initialised by the application.
struct runtime_options {
  /// The MPI thread level to ask for; what MPI provided is `runtime::mpi_thread_level()`.
  thread_level requested_thread_level = thread_level::multiple;
  /// Kokkos host threads; 0 picks this rank's share of the node's cores, unless the command
  /// line (`--kokkos-num-threads`) or the environment (`OMP_NUM_THREADS`,
  /// `KOKKOS_NUM_THREADS`) already says.
  int host_threads = 0;
  /// The device Kokkos should use; -1 picks node-local rank modulo device count.
  int device_id = -1;
  /// The process-wide no-progress timeout of hetero's waits (`hetero::no_timeout`: wait
  /// forever); `hetero::inherit_timeout` (the default): the environment variable
  /// HETERO_WAIT_TIMEOUT, else 30 s (see `hetero::wait_timeout` and docs/faults.md).
  /// `hetero::set_wait_timeout` overrides it.
  timeout wait_timeout = inherit_timeout;
  /// On SIGUSR1, print the hetero waits in progress on this rank to stderr and continue; on
  /// SIGTERM, print them and terminate as before. Not installed for an ignored signal; a
  /// handler already there (MPICH installs one for SIGUSR1) is called after the report.
  bool report_waits_on_signal = true;
  /// End the job, with a report, when a thread has been blocked for twice the wait timeout in
  /// an MPI call that cannot give up (a window's flush or free, a set-up's blocking step): a
  /// thread looks every 100 ms and calls `MPI_Abort` (docs/faults.md). Nothing is watched when
  /// the timeout is 0; one watchdog per process (a nested runtime uses its outer one's).
  bool end_blocked_calls = true;
  /// Write a Chrome trace (Perfetto, chrome://tracing, tools/trace/gantt.sh) of every rank's
  /// tasks, waits, idle time, collectives, split loops' parts, reflects, gmoves and power
  /// settings to this file at the runtime's end, merged by rank 0; when empty, the environment
  /// variable HETERO_TRACE (unset or empty: no trace). The file is created at the start: a path
  /// that cannot be written raises `hetero::io_error` on every rank then (docs/trace.md).
  std::optional<std::string> trace_file{};
};

/// RAII owner of MPI and Kokkos for one process. Initialises MPI (asking for
/// `MPI_THREAD_MULTIPLE`) and Kokkos when they are not already initialised, and finalises, on
/// destruction, only what it initialised; runtimes may nest.
/// @code
/// int main(int argc, char** argv) {
///   hetero::runtime rt(argc, argv);
///   std::printf("rank %d of %d\n", rt.world_rank(), rt.world_size());
/// }
/// @endcode
class runtime {
 public:
  /// Brings up MPI and Kokkos without command-line arguments.
  explicit runtime(runtime_options options = {}) {
    int argc = 0;
    char** argv = nullptr;
    start(argc, argv, options);
  }

  /// Brings up MPI and Kokkos; Kokkos' `--kokkos-*` arguments are honoured and removed from
  /// `argv`, as `Kokkos::initialize` does.
  runtime(int& argc, char**& argv, runtime_options options = {}) { start(argc, argv, options); }

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  runtime(runtime&&) = delete;
  runtime& operator=(runtime&&) = delete;

  ~runtime() { stop(); }

  /// This process's rank in `MPI_COMM_WORLD`.
  [[nodiscard]] int world_rank() const noexcept { return m_world_rank; }
  /// Ranks in `MPI_COMM_WORLD`.
  [[nodiscard]] int world_size() const noexcept { return m_world_size; }
  /// This process's rank among the ranks sharing its node (`MPI_COMM_TYPE_SHARED`).
  [[nodiscard]] int local_rank() const noexcept { return m_local_rank; }
  /// Ranks sharing this node.
  [[nodiscard]] int local_size() const noexcept { return m_local_size; }
  /// Ranks of the job on the machine of this rank, sharing its cores: `local_size()` on a
  /// cluster, more where several of MPI's nodes run on one machine (containers with their own
  /// host names, emulated nodes: docs/nodes.md). hetero's waits judge oversubscription by it.
  [[nodiscard]] int machine_size() const noexcept { return m_machine_size; }
  /// The node-local communicator (owned by the runtime; errors are returned, not fatal).
  [[nodiscard]] MPI_Comm local_comm() const noexcept { return m_local_comm; }
  /// Devices visible to this rank (0 without a device backend).
  [[nodiscard]] int device_count() const noexcept { return m_device_count; }
  /// The device this rank should use: node-local rank modulo device count (-1 without one).
  [[nodiscard]] int device_id() const noexcept { return m_device_id; }
  /// Threads of Kokkos' default host execution space in this rank.
  [[nodiscard]] int host_threads() const { return Kokkos::DefaultHostExecutionSpace().concurrency(); }
  /// The names of the Kokkos execution spaces this build enabled, the default one first.
  [[nodiscard]] std::vector<std::string> kokkos_backends() const { return detail::kokkos_backends(); }
  /// The thread level MPI provided.
  [[nodiscard]] thread_level mpi_thread_level() const noexcept { return m_thread_level; }
  /// Whether this runtime initialised MPI (and so will finalise it).
  [[nodiscard]] bool owns_mpi() const noexcept { return m_owns_mpi; }
  /// Whether this runtime initialised Kokkos (and so will finalise it).
  [[nodiscard]] bool owns_kokkos() const noexcept { return m_owns_kokkos; }

 private:
  void start(int& argc, char**& argv, const runtime_options& options) {
    HETERO_EXPECTS(options.host_threads >= 0, "runtime_options::host_threads is ", options.host_threads,
                   "; allowed: 0 (automatic) or a positive thread count");
    HETERO_EXPECTS(options.device_id >= -1, "runtime_options::device_id is ", options.device_id,
                   "; allowed: -1 (automatic) or a device number >= 0");
    start_wait_timeout(options);
    try {
      start_mpi(argc, argv, options.requested_thread_level);
      m_device_count = detail::device_count();
      if (options.device_id >= 0) {
        HETERO_EXPECTS(options.device_id < m_device_count, "runtime_options::device_id is ", options.device_id,
                       " but this rank sees ", m_device_count, " device(s)");
        m_device_id = options.device_id;
      } else {
        m_device_id = m_device_count > 0 ? m_local_rank % m_device_count : -1;
      }
      start_kokkos(argc, argv, options.host_threads);
      detail::refresh_kokkos_tool();  // a tool is loaded by Kokkos::initialize, if at all
      detail::g_node_ranks.store(m_machine_size, std::memory_order_relaxed);
      detail::g_wait_registry.world_rank.store(m_world_rank, std::memory_order_relaxed);
      if (options.report_waits_on_signal) m_owns_signals = detail::install_wait_report_signals();
      if (options.end_blocked_calls && !g_watchdog_started().exchange(true))
        m_watchdog = std::make_unique<detail::blocked_call_watchdog>(m_thread_level == thread_level::multiple);
      start_trace(options);
    } catch (...) {
      stop();  // a throwing constructor runs no destructor: undo what was brought up
      throw;
    }
  }

  // The environment's value is checked at start even where a stronger source overrides it.
  static void start_wait_timeout(const runtime_options& options) {
    if (const char* text = std::getenv(std::string(wait_timeout_variable).c_str()))
      (void)detail::parse_wait_timeout(text);
    detail::load_wait_timeout_environment();
    if (!options.wait_timeout.inherits() && wait_timeout_source() != wait_timeout_origin::setter)
      detail::store_wait_timeout(detail::policy_seconds(options.wait_timeout, "runtime_options::wait_timeout"),
                                 wait_timeout_origin::runtime_option, "runtime_options::wait_timeout");
  }

  // The trace of `options` or HETERO_TRACE, started by the first runtime that asks for one while
  // no other runtime of the process traces (a later request is ignored while it runs).
  void start_trace(const runtime_options& options) {
    std::string path;
    std::string source;
    if (options.trace_file) {
      path = *options.trace_file;
      source = "runtime_options::trace_file";
    } else if (const char* text = std::getenv(std::string(detail::trace_variable).c_str()); text && *text) {
      path = text;
      source = std::string(detail::trace_variable);
    } else {
      return;
    }
    if (g_trace_started().exchange(true)) return;
    try {
      m_trace = std::make_unique<detail::trace_session>(std::move(path), source);
    } catch (...) {
      g_trace_started().store(false);
      throw;
    }
  }

  // Whether a runtime of this process writes a trace.
  static std::atomic<bool>& g_trace_started() {
    static std::atomic<bool> started{false};
    return started;
  }

  // Whether a runtime of this process runs the watchdog.
  static std::atomic<bool>& g_watchdog_started() {
    static std::atomic<bool> started{false};
    return started;
  }

  // Finalises what this runtime initialised, Kokkos before MPI.
  void stop() noexcept {
    if (m_trace) {
      m_trace->finish();  // before MPI goes: rank 0 gathers the others' events
      m_trace.reset();
      g_trace_started().store(false);
    }
    if (m_watchdog) g_watchdog_started().store(false);
    m_watchdog.reset();
    if (m_owns_signals) detail::remove_wait_report_signals();
    m_owns_signals = false;
    if (m_owns_kokkos && Kokkos::is_initialized()) {
      Kokkos::finalize();
      detail::refresh_kokkos_tool();  // none once Kokkos is down
    }
    if (m_local_comm != MPI_COMM_NULL && !detail::mpi_finalized()) MPI_Comm_free(&m_local_comm);
    if (m_owns_world_handler && !detail::mpi_finalized()) detail::remove_world_error_handler();
    m_owns_world_handler = false;
    if (m_owns_mpi && !detail::mpi_finalized()) MPI_Finalize();
    m_owns_kokkos = m_owns_mpi = false;
  }

  void start_mpi(int& argc, char**& argv, thread_level requested) {
    if (detail::mpi_finalized())
      detail::raise<runtime_error>(
          "MPI was already finalised in this process and cannot be initialised again; "
          "create the hetero::runtime before MPI_Finalize");
    if (detail::mpi_initialized()) {
      m_thread_level = detail::provided_thread_level();
    } else {
      int provided = MPI_THREAD_SINGLE;
      HETERO_MPI_CHECK(MPI_Init_thread, argc > 0 ? &argc : nullptr, argc > 0 ? &argv : nullptr,
                       static_cast<int>(requested), &provided);
      m_owns_mpi = true;
      m_thread_level = static_cast<thread_level>(provided);
    }
    HETERO_MPI_CHECK(MPI_Comm_rank, MPI_COMM_WORLD, &m_world_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, MPI_COMM_WORLD, &m_world_size);
    HETERO_MPI_CHECK(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_world_rank, MPI_INFO_NULL,
                     &m_local_comm);
    HETERO_MPI_CHECK(MPI_Comm_set_errhandler, m_local_comm, MPI_ERRORS_RETURN);
    // MPICH reports errors found while completing a request to MPI_COMM_WORLD: hetero's waits
    // get them back as codes (core/mpi/request_errors.hpp).
    m_owns_world_handler = detail::install_world_error_handler();
    HETERO_MPI_CHECK(MPI_Comm_rank, m_local_comm, &m_local_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, m_local_comm, &m_local_size);
    m_machine_size = std::max(m_local_size, share_nodes_and_machines());
  }

  // One all-gather over the world: each rank's node leader (the world rank of its node's first
  // rank), published for every communicator's set-up (`detail::world_nodes`), and its kernel
  // (`detail::machine_id`). Returns the world's ranks whose kernel is this rank's, this one
  // included; 0 where the kernel cannot be told.
  [[nodiscard]] int share_nodes_and_machines() const {
    const int leader = detail::ranks_in(m_local_comm, MPI_COMM_WORLD).front();
    const std::array<std::uint64_t, 2> mine{detail::machine_id(), static_cast<std::uint64_t>(leader)};
    std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(m_world_size));
    HETERO_MPI_CHECK(MPI_Allgather, mine.data(), 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD);
    std::vector<int> leaders(static_cast<std::size_t>(m_world_size));
    int same_machine = 0;
    for (std::size_t r = 0; r < leaders.size(); ++r) {
      same_machine += all[2 * r] == mine[0] ? 1 : 0;
      leaders[r] = static_cast<int>(all[2 * r + 1]);
    }
    detail::world_nodes::publish(std::move(leaders));
    return mine[0] == 0 ? 0 : same_machine;
  }

  void start_kokkos(int& argc, char**& argv, int host_threads) {
    if (Kokkos::is_initialized()) return;
    if (detail::kokkos_finalized())
      detail::raise<runtime_error>(
          "Kokkos was already finalised in this process and cannot be initialised "
          "again; create the hetero::runtime before Kokkos::finalize");
    // Kokkos parses our additions together with the user's own --kokkos-* arguments; ours are
    // added only where the user (command line or environment) said nothing.
    std::vector<std::string> args;
    args.emplace_back(argc > 0 ? argv[0] : "hetero");
    bool threads_given = std::getenv("OMP_NUM_THREADS") || std::getenv("KOKKOS_NUM_THREADS");
    bool device_given = std::getenv("KOKKOS_DEVICE_ID") != nullptr;
    for (int i = 1; i < argc; ++i) {
      std::string_view a = argv[i];
      if (!a.starts_with("--kokkos-")) continue;
      threads_given = threads_given || a.starts_with("--kokkos-threads") || a.starts_with("--kokkos-num-threads");
      device_given = device_given || a.starts_with("--kokkos-device");
      args.emplace_back(a);
    }
    if (!threads_given)
      args.push_back(std::string(detail::kokkos_threads_flag()) + "=" +
                     std::to_string(host_threads > 0 ? host_threads : detail::cores_per_rank(m_machine_size)));
    if (!device_given && m_device_id >= 0)
      args.push_back(std::string(detail::kokkos_device_flag()) + "=" + std::to_string(m_device_id));

    // OpenMP threads stay unbound unless the user asks (binding several ranks' threads to the
    // same cores would serialise them). libgomp has read its environment already, so this only
    // states its default explicitly, which silences Kokkos' warning about the unset variable.
    if (!std::getenv("OMP_PROC_BIND")) setenv("OMP_PROC_BIND", "false", 0);

    std::vector<char*> kokkos_argv;
    for (auto& a : args) kokkos_argv.push_back(a.data());
    kokkos_argv.push_back(nullptr);
    int kokkos_argc = static_cast<int>(args.size());
    Kokkos::initialize(kokkos_argc, kokkos_argv.data());
    m_owns_kokkos = true;

    // Remove the --kokkos-* arguments from the user's argv, as Kokkos::initialize would.
    int kept = argc > 0 ? 1 : 0;
    for (int i = 1; i < argc; ++i)
      if (!std::string_view(argv[i]).starts_with("--kokkos-")) argv[kept++] = argv[i];
    if (argc > 0) {
      argc = kept;
      argv[argc] = nullptr;
    }
  }

  bool m_owns_mpi = false;
  bool m_owns_kokkos = false;
  bool m_owns_signals = false;
  bool m_owns_world_handler = false;
  std::unique_ptr<detail::blocked_call_watchdog> m_watchdog;  // the process's, if started here
  std::unique_ptr<detail::trace_session> m_trace;             // the process's, if started here
  thread_level m_thread_level = thread_level::single;
  int m_world_rank = 0;
  int m_world_size = 1;
  int m_local_rank = 0;
  int m_local_size = 1;
  int m_machine_size = 1;
  MPI_Comm m_local_comm = MPI_COMM_NULL;
  int m_device_count = 0;
  int m_device_id = -1;
};

}  // namespace hetero

#endif  // HETERO_CORE_RUNTIME_HPP
