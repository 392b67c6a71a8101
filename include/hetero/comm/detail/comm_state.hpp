/// @file
/// What a communicator owns: its duplicated MPI communicator (errors returned, not fatal), the
/// node communicator and shared-memory channel, scratch and staging buffers, the tuning table
/// and the wait policy. Made once; the public `communicator` is a cheap handle to it.
#ifndef HETERO_COMM_DETAIL_COMM_STATE_HPP
#define HETERO_COMM_DETAIL_COMM_STATE_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/scratch.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/comm/options.hpp"
#include "hetero/comm/tuning.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/staging.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/mpi/world_nodes.hpp"

namespace hetero::detail {

class comm_state {
 public:
  comm_state(MPI_Comm base, const communicator_options& options) : m_options(options) {
    if (!mpi_initialized() || mpi_finalized())
      raise<runtime_error>("a hetero::communicator needs MPI to be running: create a hetero::runtime first");
    HETERO_EXPECTS(base != MPI_COMM_NULL, "communicator: the MPI communicator to wrap is MPI_COMM_NULL");
    HETERO_EXPECTS(options.shm_slot_bytes >= shm_inline_bytes && options.shm_slot_bytes <= (std::size_t{1} << 30),
                   "communicator_options::shm_slot_bytes is ", options.shm_slot_bytes,
                   "; allowed: ", shm_inline_bytes, " to 1 GiB");
    HETERO_EXPECTS(options.staging_chunk_bytes >= 64, "communicator_options::staging_chunk_bytes is ",
                   options.staging_chunk_bytes, "; allowed: 64 or more");
    // The set-up's own waits (a rank that never constructs it is a deadlock_error after the
    // timeout): the set-up's blocking steps below cannot wait for a rank that never comes.
    constexpr std::string_view timeout_option = "communicator_options::wait_timeout";
    const double timeout = policy_seconds(options.wait_timeout, timeout_option);
    const wait_policy setup = make_wait_policy(base, timeout, timeout_option);
    m_comm_owner = duplicate_on_arrival(base, setup, "hetero::communicator construction");
    m_comm = m_comm_owner.get();
    m_rank = m_comm_owner.rank();
    m_size = m_comm_owner.size();
    // A step that throws on one rank only (the shared-memory window's allocation) leaves the
    // others blocked in the next: watched, so they end with a report past the limit.
    const blocking_call blocked(setup,
                                "hetero::communicator construction (node split, shared-memory window, tuning)",
                                wait_kind::collective);
    // The nodes: from the world's, which the runtime found (no communication), else by a node
    // split; a node communicator only where the ranks span several nodes.
    std::vector<int> leader_of = world_nodes::leaders_of(m_comm);
    if (leader_of.empty()) {
      m_node_comm = owned_comm::split_shared(m_comm);
      leader_of = node_leaders_by_split();
    }
    find_nodes(leader_of);
    const bool node_windows = options.shared_memory && m_nodes > 1 && m_nodes < m_size;
    if (node_windows && m_node_comm.get() == MPI_COMM_NULL) m_node_comm = owned_comm::split_shared(m_comm);
    if (m_nodes > 1 && m_node_comm.get() != MPI_COMM_NULL && m_node_comm.size() != m_node_size)
      raise<runtime_error>("hetero::communicator construction: MPI's node split has ", m_node_comm.size(),
                           " ranks on this node, the nodes hetero::runtime found ", m_node_size);
    const MPI_Comm node_comm = m_nodes == 1 ? m_comm : m_node_comm.get();
    // Oversubscribed by the ranks sharing the machine's cores, which may be more than this
    // communicator's on the node (other communicators' ranks, other nodes of one machine):
    // make_wait_policy takes the larger.
    m_policy = make_wait_policy(m_size, m_rank, m_node_size, timeout, timeout_option);
    if (options.shared_memory && m_node_size == m_size)
      m_shm = std::make_unique<shm_channel>(node_comm, options.shm_slot_bytes, m_policy);
    // Ranks on several nodes, some sharing one: each node's window carries the agreement on the
    // arguments (and the small payloads with it) to and from its leader (node_agreement.hpp).
    if (node_windows) {
      m_node_shm = std::make_unique<shm_channel>(node_comm, options.shm_slot_bytes, m_policy);
      // And the leaders' own communicator for the data between nodes (node_collectives.hpp).
      m_leader_comm = owned_comm::split(m_comm, leads_node() ? 0 : MPI_UNDEFINED, m_rank);
    }
    load_tuning();
  }

  comm_state(const comm_state&) = delete;
  comm_state& operator=(const comm_state&) = delete;
  /// A communicator that gave up waiting keeps its MPI communicator until the process ends:
  /// messages of the abandoned call may still arrive, and a freed communicator's context could
  /// be reused by the next one made, where they would match its calls.
  ~comm_state() {
    if (m_broken.empty()) return;
    keep_for_mpi(std::make_unique<owned_comm>(std::move(m_comm_owner)));
    if (m_leader_comm.get() != MPI_COMM_NULL) keep_for_mpi(std::make_unique<owned_comm>(std::move(m_leader_comm)));
  }

  [[nodiscard]] MPI_Comm comm() const noexcept { return m_comm; }
  [[nodiscard]] int rank() const noexcept { return m_rank; }
  [[nodiscard]] int size() const noexcept { return m_size; }
  [[nodiscard]] int nodes() const noexcept { return m_nodes; }
  [[nodiscard]] int node_size() const noexcept { return m_node_size; }
  [[nodiscard]] shm_channel* shm() noexcept { return m_shm.get(); }
  /// This node's window where the ranks span several nodes and some share one (else null).
  [[nodiscard]] shm_channel* node_shm() noexcept { return m_node_shm.get(); }
  /// The ranks of this node by node rank (ascending: the node's split keeps the ranks' order);
  /// the first leads the node.
  [[nodiscard]] const std::vector<int>& node_members() const noexcept { return m_node_members; }
  /// Each node's leader (its lowest rank), ascending.
  [[nodiscard]] const std::vector<int>& leaders() const noexcept { return m_leaders; }
  /// The node of rank `r`: its leader's index in `leaders()`.
  [[nodiscard]] int node_of(int r) const noexcept { return m_node_of[static_cast<std::size_t>(r)]; }
  /// True when every node holds consecutive ranks, the nodes in rank order (so that folding each
  /// node's ranks in order, then the nodes in order, is folding the ranks in order).
  [[nodiscard]] bool nodes_in_rank_order() const noexcept {
    return std::is_sorted(m_node_of.begin(), m_node_of.end());
  }
  /// True on the rank that leads its node.
  [[nodiscard]] bool leads_node() const noexcept { return m_node_members.front() == m_rank; }
  /// The leaders' communicator (ranks as in `leaders()`) on the leaders of a node-aware
  /// communicator (`node_shm()`), else MPI_COMM_NULL.
  [[nodiscard]] MPI_Comm leader_comm() const noexcept { return m_leader_comm.get(); }
  /// Ranks of the largest node.
  [[nodiscard]] int largest_node() const noexcept { return m_largest_node; }
  [[nodiscard]] const communicator_options& options() const noexcept { return m_options; }
  [[nodiscard]] const wait_policy& policy() const noexcept { return m_policy; }
  [[nodiscard]] const comm_tuning& tuning() const noexcept { return m_tuning; }

  /// Raises `runtime_error` when an earlier call on this communicator gave up waiting or failed
  /// with messages in flight: its ranks may be out of step (a late rank, or a message of the
  /// abandoned call, would match the next call).
  void check_usable(std::string_view what) const {
    if (!m_broken.empty())
      raise<runtime_error>("hetero::communicator::", what, ": this communicator is out of step since ", m_broken,
                           " on this rank; it cannot be used again: create a new communicator (collectively) or "
                           "end the program");
  }
  /// Whether an earlier call put the communicator out of step (`mark_out_of_step`).
  [[nodiscard]] bool out_of_step() const noexcept { return !m_broken.empty(); }
  /// Marks the communicator out of step after the call `what` ended as `how` said (by default:
  /// it gave up waiting). The first mark is the one reported.
  void mark_out_of_step(std::string_view what, std::string_view how = "raised hetero::deadlock_error") {
    if (m_broken.empty()) m_broken = "hetero::communicator::" + std::string(what) + " " + std::string(how);
  }
  [[nodiscard]] const std::string& tuning_source() const noexcept { return m_tuning_source; }

  /// True while a blocking call runs whose status step on shared memory saw every rank arrive
  /// with accepted arguments (`all_present_scope`): MPI's own call cannot then wait for a rank
  /// that never comes, so it runs blocking, without the timeout's polling.
  [[nodiscard]] bool all_present() const noexcept { return m_all_present; }
  void set_all_present(bool present) noexcept { m_all_present = present; }
  /// Notes that the current call's agreement by message (`agree`) heard from every rank with
  /// accepted arguments: the agreement was a barrier (which a barrier needs no more than). Each
  /// call forgets an earlier call's note first.
  void note_agreement() noexcept { m_agreed = true; }
  void forget_agreement() noexcept {
    m_agreed = false;
    m_inline_first = nullptr;
  }
  [[nodiscard]] bool agreed() const noexcept { return m_agreed; }

  /// The agreement's buffer (`agreement_exchange`): at least `bytes`, kept from call to call.
  std::byte* agreement_buffer(std::size_t bytes) {
    if (bytes > m_agreement_bytes) {
      m_agreement = std::unique_ptr<std::byte[]>(new std::byte[bytes]);  // not zeroed: written before read
      m_agreement_bytes = bytes;
    }
    return m_agreement.get();
  }
  /// Gives the agreement's buffer to MPI after a wait on it gave up (a late rank's message may
  /// still land in it).
  void abandon_agreement_buffer() {
    if (m_agreement) keep_for_mpi(std::move(m_agreement));
    m_agreement_bytes = 0;
  }
  /// Notes that every rank's payload of the current call came with its record: rank r's at
  /// `first + r * stride`, in the agreement buffer (see `agreement_exchange`).
  void note_inline_payloads(const std::byte* first, std::size_t stride) noexcept {
    m_inline_first = first;
    m_inline_stride = stride;
  }
  /// Rank 0's payload and the stride between ranks' payloads, if the current call's payloads
  /// came inline (else null); forgets them.
  std::pair<const std::byte*, std::size_t> take_inline_payloads() noexcept {
    return {std::exchange(m_inline_first, nullptr), m_inline_stride};
  }

  /// The tag of the next non-blocking reduction's settling messages (see `request_settle`):
  /// every rank starts those reductions in the same order, so their numbers agree.
  int next_settle_tag() noexcept {
    const int tag = settle_tag_base + static_cast<int>(m_settles % settle_tags);
    ++m_settles;
    return tag;
  }
  /// Tags of the settling messages: above every algorithm's (1000 + collective) and the argument
  /// agreement's (999, agreement_record.hpp), below the 32767 every MPI allows.
  static constexpr int settle_tag_base = 16384;
  static constexpr unsigned settle_tags = 16384;
  /// The non-blocking reductions whose settling has not started (`request_settle`, held weakly).
  std::vector<std::weak_ptr<void>>& unsettled() noexcept { return m_unsettled; }

  /// Growable host scratch buffer number `i` (0 to 3), for the algorithms.
  host_scratch& scratch(int i) { return m_scratch[static_cast<std::size_t>(i)]; }
  /// Host staging buffers: two for data going out, two for data coming in (double buffered).
  host_scratch& staging_out(std::size_t i) { return m_staging[i % 2]; }
  host_scratch& staging_in(std::size_t i) { return m_staging[2 + i % 2]; }
  /// Scratch in any memory space (direct route).
  space_scratch& device_scratch() noexcept { return m_space_scratch; }
  /// Reusable lists of counts and displacements (0 to 3) and of MPI's int counts (0 and 1):
  /// v-collectives allocate nothing per call once these have grown.
  std::vector<std::size_t>& size_list(int i) { return m_size_lists[static_cast<std::size_t>(i)]; }
  std::vector<int>& int_list(int i) { return m_int_lists[static_cast<std::size_t>(i)]; }

  /// The route for a buffer in `MemorySpace` (the same on every rank for host buffers; device
  /// buffers fall back to staging wherever the chosen algorithm needs the host).
  template <class MemorySpace>
  [[nodiscard]] buffer_route route(std::string_view what) const {
    return route_of<MemorySpace>(m_options.device_path, what);
  }

 private:
  // Each rank's node leader as MPI's split by shared memory shows it: this node's first rank
  // (MPI's group translation, no message), shared by one 4-byte all-gather.
  [[nodiscard]] std::vector<int> node_leaders_by_split() const {
    int mine = ranks_in(m_node_comm.get(), m_comm).front();
    std::vector<int> leader_of(static_cast<std::size_t>(m_size));
    HETERO_MPI_CHECK(MPI_Allgather, &mine, 1, MPI_INT, leader_of.data(), 1, MPI_INT, m_comm);
    return leader_of;
  }

  // The nodes from each rank's node leader (its node's lowest rank): this node's ranks, the
  // leaders, each rank's node and the largest node's size.
  void find_nodes(const std::vector<int>& leader_of) {
    const int mine = leader_of[static_cast<std::size_t>(m_rank)];
    m_node_members.clear();
    for (int r = 0; r < m_size; ++r)
      if (leader_of[static_cast<std::size_t>(r)] == mine) m_node_members.push_back(r);
    m_node_size = static_cast<int>(m_node_members.size());
    std::vector<int> ranks_of(static_cast<std::size_t>(m_size), 0);
    for (int r = 0; r < m_size; ++r) {
      const int leader = leader_of[static_cast<std::size_t>(r)];
      if (leader == r) m_leaders.push_back(r);
      m_largest_node = std::max(m_largest_node, ++ranks_of[static_cast<std::size_t>(leader)]);
    }
    m_nodes = static_cast<int>(m_leaders.size());
    m_node_of.assign(static_cast<std::size_t>(m_size), 0);
    for (std::size_t r = 0; r < m_node_of.size(); ++r)
      m_node_of[r] =
          static_cast<int>(std::lower_bound(m_leaders.begin(), m_leaders.end(), leader_of[r]) - m_leaders.begin());
  }

  // Rank 0 reads the file; every rank parses the same text, so all choose alike.
  void load_tuning() {
    if (m_options.tuning) {
      m_tuning = *m_options.tuning;
      m_tuning_source = "communicator_options::tuning";
    } else {
      std::string path = m_options.tuning_file;
      if (path.empty())
        if (const char* env = std::getenv("HETERO_COMM_TUNING")) path = env;
      if (path.empty()) {
        m_tuning = comm_tuning::defaults(m_size, m_node_shm != nullptr);
        m_tuning_source = "built-in defaults";
        return;
      }
      std::string text;
      int status = 0;  // 0: read, 1: failed (text holds the message)
      if (m_rank == 0) {
        try {
          text = comm_tuning::load(path).to_text();
        } catch (const error& e) {
          status = 1;
          text = e.what();
        }
      }
      long long length = static_cast<long long>(text.size());
      HETERO_MPI_CHECK(MPI_Bcast, &status, 1, MPI_INT, 0, m_comm);
      HETERO_MPI_CHECK(MPI_Bcast, &length, 1, MPI_LONG_LONG, 0, m_comm);
      text.resize(static_cast<std::size_t>(length));
      HETERO_MPI_CHECK(MPI_Bcast, text.data(), mpi_count(length, "tuning text"), MPI_CHAR, 0, m_comm);
      if (status != 0) throw io_error(text, path);  // on every rank: rank 0's message
      m_tuning = comm_tuning::parse(text, path);
      m_tuning_source = "file " + path;
    }
    if (!m_tuning.fits(m_size, m_nodes)) {
      m_tuning_source = "built-in defaults (" + m_tuning_source + " was measured on " +
                        std::to_string(m_tuning.ranks()) + " ranks on " + std::to_string(m_tuning.nodes()) +
                        " node(s); this communicator has " + std::to_string(m_size) + " on " +
                        std::to_string(m_nodes) + ")";
      m_tuning = comm_tuning::defaults(m_size, m_node_shm != nullptr);
    }
  }

  communicator_options m_options;
  owned_comm m_comm_owner;
  MPI_Comm m_comm = MPI_COMM_NULL;  // m_comm_owner's
  owned_comm m_node_comm;
  int m_rank = 0;
  int m_size = 1;
  int m_node_size = 1;
  int m_nodes = 1;
  wait_policy m_policy;
  std::unique_ptr<shm_channel> m_shm;
  std::unique_ptr<shm_channel> m_node_shm;  // see node_shm()
  std::vector<int> m_node_members;          // see node_members()
  std::vector<int> m_leaders;               // see leaders()
  std::vector<int> m_node_of;               // see node_of()
  owned_comm m_leader_comm;                 // see leader_comm()
  int m_largest_node = 1;
  comm_tuning m_tuning;
  std::string m_tuning_source;
  std::string m_broken;                      // the call that gave up waiting (empty: in step)
  bool m_all_present = false;                // see all_present()
  bool m_agreed = false;                     // see note_agreement()
  std::unique_ptr<std::byte[]> m_agreement;  // see agreement_buffer()
  std::size_t m_agreement_bytes = 0;
  const std::byte* m_inline_first = nullptr;  // see note_inline_payloads()
  std::size_t m_inline_stride = 0;
  unsigned long long m_settles = 0;  // non-blocking reductions with a user operation started
  std::vector<std::weak_ptr<void>> m_unsettled;
  std::array<host_scratch, 4> m_scratch;
  std::array<host_scratch, 4> m_staging;
  space_scratch m_space_scratch;
  std::array<std::vector<std::size_t>, 4> m_size_lists;
  std::array<std::vector<int>, 2> m_int_lists;
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_COMM_STATE_HPP
