/// @file
/// The MPI side of a task graph: notifications of remote writes (out events naming remote
/// ranks), operations adopted from outside the graph, the end-of-wait synchronisation, and the
/// deadlock reports. Nothing here blocks: receives are pre-posted and completed with
/// MPI_Testsome by whichever idle thread holds the progress baton (a try-lock), so a worker is
/// never stuck in MPI.
#ifndef HETERO_TASK_DETAIL_REMOTE_HPP
#define HETERO_TASK_DETAIL_REMOTE_HPP

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/task/detail/data_transfer.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/node_copies.hpp"

namespace hetero::detail {

/// One small message: a notification or a step of the end-of-wait barrier.
struct remote_message {
  static constexpr std::uint64_t notify = 1;
  static constexpr std::uint64_t barrier = 2;
  static constexpr std::uint64_t tile_ready =
      3;  ///< a, b: tile id, version; c: slab number + 1 (0: by MPI), d: nonce
  static constexpr std::uint64_t tile_written = 4;  ///< a, b: tile id, version
  static constexpr std::uint64_t tile_copied = 5;   ///< a, b: tile id, version (the reader released it)
  /// a: the wait epoch: the reader's run ended; it released every version it pulled in it
  static constexpr std::uint64_t pulls_released = 6;
  static constexpr std::uint64_t by_mpi_flag = 2;     ///< tile_written: sent through MPI instead, receive it
  static constexpr std::uint64_t cancelled_flag = 1;  ///< the writer was cancelled (a task failed)
  /// tile_written: the version is in the owner's memory, where the reader reads it (a pull);
  /// the owner's move ends with the reader's tile_copied or pulls_released.
  static constexpr std::uint64_t pull_flag = 4;
  std::uint64_t type = 0;
  std::uint64_t a = 0, b = 0, c = 0, d = 0;  ///< notify: the remote_key; barrier: epoch, round
  std::uint64_t flags = 0;
  std::uint64_t graph = 0;  ///< the sending graph's instance (see remote_channel)
};

/// The next task graph instance number of this process (see remote_channel's constructor).
inline std::atomic<std::uint64_t> g_next_graph_instance{1};

/// Calls from the progress baton holder for each satisfied wait: `n` received one more message
/// (`last` when it was the last one expected); `cancelled` when the writer was cancelled.
template <class F>
concept arrival_handler = std::invocable<F&, node*, bool, bool>;

/// MPI notifications, adopted operations, the end-of-wait barrier and deadlock reports of one
/// task graph, on a private duplicate of its communicator.
class remote_channel {
  static constexpr int tag_small = 1;
  static constexpr int tag_report = 2;
  static constexpr int posted_receives = 32;
  static constexpr int report_capacity = 4096;

  struct send_slot {
    remote_message message;
    std::string text;
  };
  struct inbox_entry {
    node* waiting = nullptr;
    int expected = 0;
    int arrived = 0;
    bool cancelled = false;
  };

 public:
  /// The graph's channel on a duplicate of `comm`; its set-up waits (every rank must construct
  /// the graph) give up after `policy`'s timeout with a `deadlock_error`. `policy` is `comm`'s
  /// (its ranks are the duplicate's).
  remote_channel(MPI_Comm comm, const wait_policy& policy) : m_policy(policy) {
    int size = 1;
    HETERO_MPI_CHECK(MPI_Comm_size, comm, &size);
    m_owned = size > 1 ? duplicate_on_arrival(comm, policy, "hetero::task_graph construction")
                       : owned_comm::duplicate(comm);
    m_comm = m_owned.get();
    m_policy.comm = m_comm;  // a wait that gives up keeps the duplicate its requests are on
    m_rank = m_owned.rank();
    m_size = m_owned.size();
    m_requests.fill(MPI_REQUEST_NULL);
    if (m_size > 1) {
      // MPI reuses a freed communicator's context, so messages a graph's peers sent after it
      // was destroyed (a rank that left early, a report sent to it) would reach the next graph
      // on the same ranks. Every message carries an instance number the ranks agree on here,
      // larger than any of their earlier graphs'; others are dropped on arrival.
      const std::uint64_t mine = g_next_graph_instance.load(std::memory_order_relaxed);
      m_instance = allreduce_max<1>({mine}, m_comm, m_policy, "hetero::task_graph construction (instance number)",
                                    wait_kind::task)[0];
      std::uint64_t next = g_next_graph_instance.load(std::memory_order_relaxed);
      while (next <= m_instance && !g_next_graph_instance.compare_exchange_weak(next, m_instance + 1)) {
      }
      for (int i = 0; i < posted_receives; ++i) post_small(i);
      post_report();
    }
  }
  remote_channel(const remote_channel&) = delete;
  remote_channel& operator=(const remote_channel&) = delete;

  ~remote_channel() {
    if (mpi_finalized()) return;  // MPI is gone: nothing can be cancelled or freed any more
    (void)cancel_transfers();
    for (auto& r : m_requests) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    // Sends are small (eager) and complete locally; a send still incomplete after a second
    // belongs to a broken run: its buffer is leaked rather than freed under MPI's feet.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!m_send_requests.empty() && std::chrono::steady_clock::now() < give_up) test_sends();
    for (auto& slot : m_send_slots)
      if (std::find(m_pending_slots.begin(), m_pending_slots.end(), slot.get()) != m_pending_slots.end())
        (void)slot.release();
  }

  [[nodiscard]] int rank() const noexcept { return m_rank; }
  [[nodiscard]] int size() const noexcept { return m_size; }
  [[nodiscard]] MPI_Comm comm() const noexcept { return m_comm; }
  /// How the graph's collective waits wait (its no-progress timeout).
  [[nodiscard]] const wait_policy& policy() const noexcept { return m_policy; }
  /// Whether anything waits for MPI or an adopted operation (progress is worth calling).
  /// (Sequentially consistent with the registrations below: progress_duty::unclaimed.)
  [[nodiscard]] bool active() const noexcept { return m_active.load(std::memory_order_seq_cst) > 0; }
  /// Messages received and operations completed so far (the watchdog's progress stamp).
  [[nodiscard]] std::uint64_t arrivals() const noexcept { return m_arrivals.load(std::memory_order_relaxed); }

  /// Declaring thread: `n` waits for `expected` messages named `key`. Returns how many are
  /// still to come (earlier ones may have arrived already) and whether one was cancelled.
  std::pair<int, bool> register_receive(node* n, const remote_key& key, int expected) {
    std::lock_guard lock(m_mutex);
    auto [it, inserted] = m_inbox.try_emplace(key);
    inbox_entry& e = it->second;
    e.waiting = n;
    e.expected = expected;
    const int remaining = std::max(0, expected - e.arrived);
    const bool cancelled = e.cancelled;
    if (remaining == 0) {
      m_inbox.erase(it);
    } else {
      m_active.fetch_add(1, std::memory_order_seq_cst);
    }
    return {remaining, cancelled};
  }

  /// Messages received so far for `key` (for the deadlock report).
  [[nodiscard]] int received(const remote_key& key) {
    std::lock_guard lock(m_mutex);
    auto it = m_inbox.find(key);
    return it == m_inbox.end() ? 0 : it->second.arrived;
  }

  /// Declaring thread: polls `n->poll` until it says the adopted operation completed.
  void add_external(node* n) {
    std::lock_guard lock(m_mutex);
    m_externals.push_back(n);
    m_active.fetch_add(1, std::memory_order_seq_cst);
  }

  /// Any thread: the move of a tile `n` stands for was posted as `request` (a receive or a
  /// send); `n` arrives when it completes, found with the others by one MPI_Testsome per round.
  /// A null request (the post failed) arrives at the next round. A receive of a tile of `bytes`
  /// that ends with fewer arrives cancelled: its owner could not send it (`send_cancelled`).
  void add_transfer(node* n, MPI_Request request, bool receive, bool cancelled = false, std::size_t bytes = 0) {
    std::lock_guard lock(m_transfer_mutex);
    m_posted_transfers.push_back({n, request, receive, cancelled, bytes});
    m_transfers_in_flight.fetch_add(1, std::memory_order_release);
    m_active.fetch_add(1, std::memory_order_seq_cst);
  }

  /// Any thread: this rank reads `move`'s version of a tile of `move.peer`, a rank of its node,
  /// into its copy (at `move.into`) in shared slab `slab` of the slabs named with `nonce`
  /// (node_copies.hpp); `done` arrives once the owner wrote it there (or sent it through MPI,
  /// where it cannot open the slab), and then `*copied` counts it if it came the first way.
  /// Tells the owner that the copy may be written now.
  void expect_tile(const tile_move& move, node* done, std::uint64_t nonce, std::uint64_t slab,
                   std::atomic<std::uint64_t>* copied) {
    std::lock_guard lock(m_mutex);
    const move_key key = key_of(move);
    m_tile_waits[key] = {done, move, nonce, slab, copied};
    m_active.fetch_add(1, std::memory_order_seq_cst);
    try {
      post_send({remote_message::tile_ready, move.id, move.version, slab + 1, nonce, 0}, move.peer);
    } catch (...) {  // the move ends here, failed
      m_tile_waits.erase(key);
      m_active.fetch_sub(1, std::memory_order_release);
      add_transfer(done, MPI_REQUEST_NULL, true);
      throw;
    }
  }

  /// Any thread: this rank reads `move`'s version of a tile of `move.peer`, a rank of its node
  /// whose memory this process maps (`task_graph::tiles`' `peer_view_of`), in place: no message
  /// asks for it. `done` arrives once the owner said the version is there (`offer_tile`;
  /// perhaps before this call), `*pulled` then holding it; once the tasks here that read it
  /// finished, this rank answers (`tile_copied`, or `release_pulls` at the end of the run),
  /// which ends the owner's move. `*counted` and `*taken` count it.
  void expect_tile_pull(const tile_move& move, node* done, std::atomic<std::uint64_t>* pulled,
                        std::atomic<std::uint64_t>* counted, std::atomic<std::uint64_t>* taken) {
    std::lock_guard lock(m_mutex);
    const move_key key = key_of(move);
    auto early = m_offers.find(key);
    if (early == m_offers.end()) {
      m_tile_waits[key] = {done, move, 0, 0, counted, pulled, taken};
      m_active.fetch_add(1, std::memory_order_seq_cst);
      return;
    }
    const bool cancelled = early->second;
    m_offers.erase(early);
    slab_fence();  // the owner's writes (before its message) before this rank's reads
    if (!cancelled) {
      pulled->store(move.version, std::memory_order_release);
      counted->fetch_add(1, std::memory_order_relaxed);
      taken->fetch_add(1, std::memory_order_relaxed);
    }
    add_transfer(done, MPI_REQUEST_NULL, true, cancelled);  // arrives at the next round
  }

  /// Any thread: this rank could not post its receive of a version of a tile that `peer` sends
  /// it with `tag` on `comm` through MPI. The message that comes anyway (the tile, or the owner's
  /// empty one where its send failed too) is received into a buffer thrown away, so that no later
  /// receive of the tile from `peer` (the next version's, or the next run's) takes it; `done`
  /// arrives with it, cancelled. Where even this cannot be posted, `done` arrives at the next
  /// round and the message stays unmatched (MPI itself failing twice).
  void drain_tile(node* done, int peer, int tag, std::size_t bytes, MPI_Comm comm) noexcept {
    MPI_Request request = MPI_REQUEST_NULL;
    try {
      std::lock_guard lock(m_mutex);
      m_drains.push_back(std::make_unique<std::byte[]>(bytes));
      request = post_transfer(true, m_drains.back().get(), bytes, peer, tag, comm);
    } catch (...) {  // the first error is the one raised
    }
    add_transfer(done, request, true, true, bytes);
  }

  /// Any thread: this rank owns `move`'s tile, whose version is at `from` (null: it could not be
  /// made current, and the move ends cancelled on both ranks), and `move.peer` of its node
  /// reads it there itself (`expect_tile_pull`): the reader is told at once; `done` arrives with
  /// its answer, and until then no writer of the tile runs here.
  void offer_tile(const tile_move& move, node* done, const void* from) {
    std::lock_guard lock(m_mutex);
    slab_fence();  // this rank's writes of the version before the message
    const std::uint64_t flags = remote_message::pull_flag | (from ? 0 : remote_message::cancelled_flag);
    try {
      post_send({remote_message::tile_written, move.id, move.version, 0, 0, flags}, move.peer);
    } catch (...) {
      add_transfer(done, MPI_REQUEST_NULL, false, true);
      throw;
    }
    if (!from) {
      add_transfer(done, MPI_REQUEST_NULL, false, true);
      return;
    }
    m_pulls[key_of(move)] = {done, m_epoch};
    m_active.fetch_add(1, std::memory_order_seq_cst);
  }

  /// Any thread: the tasks here that read version `version` of tile `id` in the memory of its
  /// owner `owner` (`expect_tile_pull`) finished; tells the owner, whose move of it then ends.
  /// Sent at once where no other thread holds the progress baton, else by the next round of
  /// progress.
  void tile_copied(int owner, std::uint64_t id, std::uint64_t version) {
    m_active.fetch_add(1, std::memory_order_seq_cst);  // until sent: progress keeps running
    {
      std::lock_guard lock(m_answer_mutex);
      m_answers.push_back({owner, id, version});
    }
    m_answers_queued.store(true, std::memory_order_release);
    // Never from inside a round today (arrivals only make tasks ready); were a task ever finished
    // there, the round in progress would send the answer next.
    if (t_progressing == this) return;
    std::unique_lock lock(m_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const progressing here(this);
    send_answers();
  }

  /// Declaring thread, this rank's run ended (nothing runs): tells `owner` that every version
  /// of its tiles pulled here in this run is released (one message for all of them).
  void release_pulls(int owner) {
    std::lock_guard lock(m_mutex);
    post_send({remote_message::pulls_released, m_epoch, 0, 0, 0, 0}, owner);
  }

  /// Declaring thread: sends the answers still queued (the graph goes away).
  void flush_answers() {
    std::lock_guard lock(m_mutex);
    const progressing here(this);
    send_answers();
  }

  /// Any thread: this rank cannot take `move`'s tile (its copy could not be made ready); `done`
  /// arrives cancelled, and the owner is told, so that its move ends cancelled too.
  void refuse_tile(const tile_move& move, node* done) {
    add_transfer(done, MPI_REQUEST_NULL, true);
    ready_by_mpi(move, true);
  }

  /// Any thread: the same, into this process's memory at `buffer` through MPI (the node's
  /// shared memory had no room); the owner is told to send.
  void expect_tile_by_mpi(const tile_move& move, node* done, void* buffer) {
    MPI_Request request = MPI_REQUEST_NULL;
    try {
      request = post_transfer(true, buffer, move.bytes, move.peer, tile_tag(move.id), move.comm);
    } catch (...) {
      refuse_tile(move, done);
      throw;
    }
    add_transfer(done, request, true, false, move.bytes);
    ready_by_mpi(move, false);
  }

  /// Any thread: this rank owns `move`'s tile (its version at `from`; null: it could not be
  /// made current, and the move ends cancelled on both ranks) and `move.peer` of its node reads
  /// it. Once the reader said where, the next round of progress copies it into the reader's
  /// shared slab (or sends it through MPI) and `done` arrives.
  void push_tile(const tile_move& move, node* done, const void* from) {
    if (!from) add_transfer(done, MPI_REQUEST_NULL, false);  // arrives at the next round
    std::lock_guard lock(m_mutex);
    tile_push& p = m_pushes[key_of(move)];
    p.move = move;
    p.done = from ? done : nullptr;
    p.from = from;
    p.posted = true;
    m_active.fetch_add(1, std::memory_order_seq_cst);
    m_pushes_ready = m_pushes_ready || p.ready;
  }

  /// Declaring thread, at the end of `wait()` (no move is in flight): the readers' slabs that
  /// this graph run did not write are let go (a slab its reader dropped would otherwise stay in
  /// memory); the others stay mapped for the next run. So do the buffers of tiles received only
  /// to match their send.
  void forget_peer_slabs() {
    std::lock_guard lock(m_mutex);
    m_drains.clear();
    m_offers.clear();  // offers of moves that ended cancelled before their receive was declared
    for (auto it = m_peer_slabs.begin(); it != m_peer_slabs.end();) {
      if (!std::exchange(it->second.written, false)) {
        it = m_peer_slabs.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// What `cancel_transfers` found still posted.
  struct cut_transfers {
    bool sends_left = false;  ///< a send left to MPI: its buffer must outlive the graph
    bool any = false;         ///< a receive or a send: peers may still send on the communicator
  };

  /// The graph goes away (its workers stopped): tile receives still pending are cancelled,
  /// sends get a second to complete and are then left to MPI.
  cut_transfers cancel_transfers() {
    if (mpi_finalized()) return {};
    std::lock_guard lock(m_mutex);
    take_posted_transfers();
    cut_transfers cut;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (std::size_t i = 0; i < m_transfer_requests.size(); ++i) {
      MPI_Request& r = m_transfer_requests[i];
      if (r == MPI_REQUEST_NULL) continue;
      cut.any = true;
      if (m_transfers[i].receive) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        continue;
      }
      int done = 0;
      while (!done && std::chrono::steady_clock::now() < give_up) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (!done) {
        MPI_Request_free(&r);
        cut.sends_left = true;
      }
    }
    m_transfers.clear();
    m_transfer_requests.clear();
    m_pushes.clear();
    m_pulls.clear();
    m_offers.clear();
    m_tile_waits.clear();
    m_peer_slabs.clear();
    m_drains.clear();  // their receives cancelled above
    return cut;
  }

  /// Finishing thread: tells the targets of `n`'s remote writes that they happened.
  /// A send that fails does not keep the others from their notification (they would wait for
  /// it until the no-progress timeout); the first failure is rethrown after the last send.
  void send_notifications(const node& n, std::uint64_t plan, std::uint64_t run, bool cancelled) {
    std::lock_guard lock(m_mutex);
    std::exception_ptr failed;
    for (const notification& note : n.extra.notifications) {
      note.targets.for_each(m_size, [&](int target) {
        remote_message m{remote_message::notify,
                         note.event->global_id(),
                         note.generation,
                         plan,
                         run,
                         cancelled ? remote_message::cancelled_flag : 0};
        try {
          post_send(m, target);
        } catch (...) {
          if (!failed) failed = std::current_exception();
        }
      });
    }
    if (failed) std::rethrow_exception(failed);
  }

  /// Declaring thread: starts the end-of-wait barrier (dissemination over point-to-point
  /// messages, so that a broken run can still cancel its receives). `failed` is OR-ed over all
  /// ranks and returned by `barrier_done`.
  void start_barrier(bool failed) {
    std::lock_guard lock(m_mutex);
    ++m_epoch;
    m_round = 0;
    m_rounds = 0;
    while ((1 << m_rounds) < m_size) ++m_rounds;
    m_barrier_flags = failed ? 1 : 0;
    m_barrier_sent = false;
    m_barrier_done.store(m_rounds == 0, std::memory_order_release);
    if (m_rounds > 0) {
      m_active.fetch_add(1, std::memory_order_seq_cst);
      advance_barrier();
    }
  }

  /// Whether the barrier finished; `failed` then says whether any rank reported a failure.
  bool barrier_done(bool& failed) {
    if (!m_barrier_done.load(std::memory_order_acquire)) return false;
    std::lock_guard lock(m_mutex);
    failed = m_barrier_flags != 0;
    return true;
  }

  /// Sends this rank's deadlock report to every other rank (once per graph).
  void send_report(const std::string& report) {
    std::lock_guard lock(m_mutex);
    if (m_report_sent) return;
    m_report_sent = true;
    for (int r = 0; r < m_size; ++r) {
      if (r == m_rank) continue;
      start_send([&](send_slot& slot, MPI_Request& req) {
        slot.text.assign(reinterpret_cast<const char*>(&m_instance), sizeof(m_instance));
        slot.text += report.substr(0, report_capacity - 1 - sizeof(m_instance));
        HETERO_MPI_CHECK(MPI_Isend, slot.text.data(), static_cast<int>(slot.text.size()), MPI_CHAR, r, tag_report,
                         m_comm, &req);
      });
    }
  }

  /// Whether another rank sent a deadlock report.
  [[nodiscard]] bool report_arrived() const noexcept { return m_report_arrived.load(std::memory_order_acquire); }

  /// The reports received so far, by rank.
  [[nodiscard]] std::map<int, std::string> reports() {
    std::lock_guard lock(m_mutex);
    return m_reports;
  }

  /// One round of progress unless another thread is progressing; `on_arrival` is called for
  /// every satisfied wait. Returns whether anything happened.
  template <arrival_handler F>
  bool try_progress(F&& on_arrival) {
    std::unique_lock lock(m_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    const progressing here(this);
    return progress_locked(on_arrival);
  }

  /// The same, waiting for the baton (used by the thread in `wait()` when everything else sleeps).
  template <arrival_handler F>
  bool progress(F&& on_arrival) {
    std::lock_guard lock(m_mutex);
    const progressing here(this);
    return progress_locked(on_arrival);
  }

 private:
  // The channel whose baton this thread holds (`tile_copied` must not try to take it again).
  static inline thread_local const remote_channel* t_progressing = nullptr;
  struct progressing {
    const remote_channel* before;
    explicit progressing(const remote_channel* c) noexcept : before(t_progressing) { t_progressing = c; }
    progressing(const progressing&) = delete;
    progressing& operator=(const progressing&) = delete;
    ~progressing() { t_progressing = before; }
  };

  template <class F>
  bool progress_locked(F& on_arrival) {
    bool progressed = false;
    if (m_size > 1) {
      send_answers();
      int count = 0;
      std::array<int, posted_receives + 1> done{};
      std::array<MPI_Status, posted_receives + 1> statuses{};
      const request_errors_returned returned;
      HETERO_MPI_CHECK(MPI_Testsome, posted_receives + 1, m_requests.data(), &count, done.data(), statuses.data());
      for (int k = 0; count != MPI_UNDEFINED && k < count; ++k) {
        const int i = done[static_cast<std::size_t>(k)];
        progressed = true;
        if (i == posted_receives) {
          int length = 0;
          MPI_Get_count(&statuses[static_cast<std::size_t>(k)], MPI_CHAR, &length);
          std::uint64_t instance = 0;
          if (length >= static_cast<int>(sizeof(instance)))
            std::memcpy(&instance, m_report_buffer.data(), sizeof(instance));
          if (instance == m_instance) {  // else: a report of an earlier graph on these ranks
            m_reports[statuses[static_cast<std::size_t>(k)].MPI_SOURCE] = std::string(
                m_report_buffer.data() + sizeof(instance), static_cast<std::size_t>(length) - sizeof(instance));
            m_report_arrived.store(true, std::memory_order_release);
          }
          post_report();
        } else {
          const remote_message m = m_received[static_cast<std::size_t>(i)];
          post_small(i);
          if (m.graph != m_instance) continue;  // a message of an earlier graph on these ranks
          const int source = statuses[static_cast<std::size_t>(k)].MPI_SOURCE;
          if (m.type == remote_message::notify) {
            deliver({m.a, m.b, m.c, m.d}, (m.flags & remote_message::cancelled_flag) != 0, on_arrival);
          } else if (m.type == remote_message::tile_ready) {
            tile_push& p = m_pushes[{source, m.a, m.b}];
            p.ready = true;
            p.reader_failed = (m.flags & remote_message::cancelled_flag) != 0;
            p.slab = m.c;
            p.nonce = m.d;
            m_pushes_ready = m_pushes_ready || p.posted;
          } else if (m.type == remote_message::tile_written) {
            tile_written({source, m.a, m.b}, m.flags, on_arrival);
          } else if (m.type == remote_message::tile_copied) {
            pull_answered({source, m.a, m.b}, on_arrival);
          } else if (m.type == remote_message::pulls_released) {
            pulls_released(source, m.a, on_arrival);
          } else if (m.type == remote_message::barrier) {
            m_barrier_arrivals[{m.a, m.b}] |= m.flags;
          }
        }
      }
      if (m_deferred_error) std::rethrow_exception(std::exchange(m_deferred_error, nullptr));
      if (m_pushes_ready) progressed = run_pushes(on_arrival) || progressed;
      if (!m_send_requests.empty()) progressed = test_sends() || progressed;
      if (m_rounds > 0 && !m_barrier_done.load(std::memory_order_relaxed)) advance_barrier();
    }
    if (m_transfers_in_flight.load(std::memory_order_acquire) > 0)
      progressed = progress_transfers(on_arrival) || progressed;
    // An adopted operation whose test throws is over: it arrives cancelled (its dependents are
    // skipped) and the error is raised after the round, the other operations polled first.
    std::exception_ptr failed;
    for (std::size_t i = 0; i < m_externals.size();) {
      node* n = m_externals[i];
      bool done = false, threw = false;
      try {
        done = n->poll(*n);
      } catch (...) {
        if (!failed) failed = std::current_exception();
        done = threw = true;
      }
      if (done) {
        m_externals[i] = m_externals.back();
        m_externals.pop_back();
        m_active.fetch_sub(1, std::memory_order_release);
        m_arrivals.fetch_add(1, std::memory_order_relaxed);
        on_arrival(n, true, threw);
        progressed = true;
      } else {
        ++i;
      }
    }
    if (failed) std::rethrow_exception(failed);
    return progressed;
  }

  using move_key = std::tuple<int, std::uint64_t, std::uint64_t>;  // other rank, tile id, version
  static move_key key_of(const tile_move& m) noexcept { return {m.peer, m.id, m.version}; }

  // The reader's copy is its own memory: the owner is told to send through MPI (`failed`: the
  // reader could not post its receive, and the owner's move ends cancelled).
  void ready_by_mpi(const tile_move& move, bool failed) {
    std::lock_guard lock(m_mutex);
    post_send(
        {remote_message::tile_ready, move.id, move.version, 0, 0, failed ? remote_message::cancelled_flag : 0},
        move.peer);
  }

  // The owner wrote the version into this rank's shared copy, or failed to (cancelled), or sent
  // it through MPI instead (it could not open the slab): then the receive is posted now, into
  // the copy once its memory is reserved, else into a buffer thrown away (the owner's send must
  // still complete), the move cancelled and the error raised after this round.
  template <class F>
  void tile_written(const move_key& key, std::uint64_t flags, F& on_arrival) {
    auto it = m_tile_waits.find(key);
    if (it == m_tile_waits.end()) {
      // An offer to pull that came before this rank's receive started: kept for it.
      if ((flags & remote_message::pull_flag) != 0) m_offers[key] = (flags & remote_message::cancelled_flag) != 0;
      return;
    }
    const tile_wait w = it->second;
    m_tile_waits.erase(it);
    m_active.fetch_sub(1, std::memory_order_release);
    const tile_move& move = w.move;
    const bool cancelled = (flags & remote_message::cancelled_flag) != 0;
    if (!cancelled && (flags & remote_message::by_mpi_flag) != 0) {
      void* into = move.into;
      bool refused = false;
      try {
        shared_slab::reserve(static_cast<std::byte*>(into), move.bytes, shared_slab_name(w.nonce, w.slab),
                             slab_offset(move.id, move.bytes));
      } catch (...) {
        defer_error();
        m_drains.push_back(std::make_unique<std::byte[]>(move.bytes));
        into = m_drains.back().get();
        refused = true;
      }
      MPI_Request request = MPI_REQUEST_NULL;
      try {
        request = post_transfer(true, into, move.bytes, move.peer, tile_tag(move.id), move.comm);
      } catch (...) {
        defer_error();
      }
      add_transfer(w.done, request, true, refused, move.bytes);
      return;
    }
    slab_fence();  // the owner's copy (before its message) before this rank's reads
    if (!cancelled && w.pull) w.pull->store(move.version, std::memory_order_release);
    if (!cancelled && w.copied) w.copied->fetch_add(1, std::memory_order_relaxed);
    if (!cancelled && w.taken) w.taken->fetch_add(1, std::memory_order_relaxed);
    m_arrivals.fetch_add(1, std::memory_order_relaxed);
    on_arrival(w.done, true, cancelled);
  }

  // An error of a message's handling, raised once the round's messages are all handled (a
  // throw among them would lose the others, already taken from MPI).
  void defer_error() noexcept {
    if (!m_deferred_error) m_deferred_error = std::current_exception();
  }

  // The readers of a pulled version finished: the owner's move ends.
  template <class F>
  void pull_answered(const move_key& key, F& on_arrival) {
    auto it = m_pulls.find(key);
    if (it == m_pulls.end()) return;
    node* n = it->second.done;
    m_pulls.erase(it);
    m_active.fetch_sub(1, std::memory_order_release);
    m_arrivals.fetch_add(1, std::memory_order_relaxed);
    on_arrival(n, true, false);
  }

  // The run of `reader` ended: every version it pulled in the run of wait epoch `epoch` is
  // released (one of an earlier run, whose message came late, is not: its epoch differs).
  template <class F>
  void pulls_released(int reader, std::uint64_t epoch, F& on_arrival) {
    for (auto it = m_pulls.begin(); it != m_pulls.end();) {
      if (std::get<0>(it->first) != reader || it->second.epoch != epoch) {
        ++it;
        continue;
      }
      node* n = it->second.done;
      it = m_pulls.erase(it);
      m_active.fetch_sub(1, std::memory_order_release);
      m_arrivals.fetch_add(1, std::memory_order_relaxed);
      on_arrival(n, true, false);
    }
  }

  // Sends the queued answers to pulls (`tile_copied`); the baton held.
  void send_answers() {
    if (!m_answers_queued.load(std::memory_order_acquire) || !m_answers_queued.exchange(false)) return;
    std::vector<pull_answer> answers;
    {
      std::lock_guard lock(m_answer_mutex);
      answers.swap(m_answers);
    }
    for (const pull_answer& a : answers) {
      try {
        post_send({remote_message::tile_copied, a.id, a.version, 0, 0, 0}, a.owner);
      } catch (...) {
        defer_error();
      }
      m_active.fetch_sub(1, std::memory_order_release);
    }
  }

  // Copies (or sends) each tile whose reader is ready and whose version is here. A move that
  // fails still completes, cancelled on both ranks; the first error is raised after the round.
  template <class F>
  bool run_pushes(F& on_arrival) {
    m_pushes_ready = false;
    bool progressed = false;
    std::exception_ptr failure;
    const auto fail = [&] {
      if (!failure) failure = std::current_exception();
    };
    for (auto it = m_pushes.begin(); it != m_pushes.end();) {
      tile_push& p = it->second;
      if (!p.ready || !p.posted) {
        ++it;
        continue;
      }
      const tile_move& move = p.move;
      progressed = true;
      std::uint64_t flags = 0;
      bool cancelled = p.reader_failed || !p.from;
      if (!cancelled && (p.slab == 0 || m_no_shared_memory.count(move.peer) != 0)) {
        // The reader's copy is its own memory, or its slabs cannot be opened here: MPI moves it.
        MPI_Request request = MPI_REQUEST_NULL;
        try {
          request =
              post_transfer(false, const_cast<void*>(p.from), move.bytes, move.peer, tile_tag(move.id), move.comm);
        } catch (...) {
          fail();
        }
        if (p.slab != 0)  // the reader posts its receive when told (none where the send failed)
          flags = request != MPI_REQUEST_NULL ? remote_message::by_mpi_flag : remote_message::cancelled_flag;
        else if (request == MPI_REQUEST_NULL)  // its receive is posted: an empty message ends it
          (void)send_cancelled(move.peer, tile_tag(move.id), move.comm);
        add_transfer(p.done, request, false);
        m_active.fetch_sub(1, std::memory_order_release);  // add_transfer counts it again
        if (flags != 0) try_post_written(move, flags, fail);
        it = m_pushes.erase(it);
        continue;
      }
      if (!cancelled) {
        bool copied = false;
        try {
          copied = copy_into_slab(move, p.from, p.nonce, p.slab - 1);
        } catch (...) {  // no room left in /dev/shm for the tile (a named error), or worse
          fail();
          cancelled = true;
        }
        if (!cancelled && !copied) {  // this rank does not see the reader's /dev/shm: MPI from now on
          m_no_shared_memory.insert(move.peer);
          m_pushes_ready = true;  // the same entry again, next round, through MPI
          ++it;
          continue;
        }
      }
      if (cancelled) flags = remote_message::cancelled_flag;
      if (!p.reader_failed && p.slab != 0) {
        try_post_written(move, flags, fail);
      } else if (!p.reader_failed) {  // cancelled; the reader's receive is posted: an empty message ends it
        (void)send_cancelled(move.peer, tile_tag(move.id), move.comm);
      }
      node* n = p.done;
      it = m_pushes.erase(it);
      m_active.fetch_sub(1, std::memory_order_release);
      if (n) {  // null: the move already arrived (this rank failed to make its version current)
        m_arrivals.fetch_add(1, std::memory_order_relaxed);
        on_arrival(n, true, cancelled);
      }
    }
    if (failure) std::rethrow_exception(failure);
    return progressed;
  }

  template <class Fail>
  void try_post_written(const tile_move& move, std::uint64_t flags, Fail& fail) {
    try {
      post_send({remote_message::tile_written, move.id, move.version, 0, 0, flags}, move.peer);
    } catch (...) {
      fail();
    }
  }

  // Copies a version into the reader's slab; false where this rank cannot open the slab.
  bool copy_into_slab(const tile_move& move, const void* from, std::uint64_t nonce, std::uint64_t slab_number) {
    auto slab = m_peer_slabs.find({nonce, slab_number});
    if (slab == m_peer_slabs.end()) {
      shared_slab mapped;
      try {
        mapped = shared_slab::open(shared_slab_name(nonce, slab_number), slab_tiles * move.bytes);
      } catch (const runtime_error&) {
        return false;
      }
      slab = m_peer_slabs.emplace(std::pair{nonce, slab_number}, peer_slab{std::move(mapped)}).first;
    }
    peer_slab& s = slab->second;
    s.written = true;
    std::byte* to = s.memory.base() + slab_offset(move.id, move.bytes);
    const auto tile_bit = static_cast<std::uint8_t>(1U << (move.id % slab_tiles));
    if ((s.mapped & tile_bit) == 0) {  // its memory reserved and mapped here, in one call
      shared_slab::reserve(to, move.bytes, shared_slab_name(nonce, slab_number), slab_offset(move.id, move.bytes));
      s.mapped |= tile_bit;
    }
    stream_copy(to, static_cast<const std::byte*>(from), move.bytes);
    slab_fence();  // the copy before the message
    return true;
  }

  // Moves the transfers posted since the last round into the tested list.
  void take_posted_transfers() {
    std::lock_guard lock(m_transfer_mutex);
    for (const transfer& t : m_posted_transfers) {
      m_transfers.push_back(t);
      m_transfer_requests.push_back(t.request);
    }
    m_posted_transfers.clear();
  }

  // One MPI_Testsome over the posted tile moves; the completed ones arrive.
  template <class F>
  bool progress_transfers(F& on_arrival) {
    take_posted_transfers();
    bool progressed = false;
    const auto arrive = [&](std::size_t i) {
      m_transfers[i].request = MPI_REQUEST_NULL;
      m_transfers_in_flight.fetch_sub(1, std::memory_order_release);
      m_active.fetch_sub(1, std::memory_order_release);
      m_arrivals.fetch_add(1, std::memory_order_relaxed);
      on_arrival(m_transfers[i].waiting, true, m_transfers[i].cancelled);
      progressed = true;
    };
    bool any_posted = false;
    for (std::size_t i = 0; i < m_transfers.size(); ++i) {
      if (m_transfers[i].waiting == nullptr) continue;
      if (m_transfer_requests[i] == MPI_REQUEST_NULL) {  // a post that failed
        arrive(i);
        m_transfers[i].waiting = nullptr;
      } else {
        any_posted = true;
      }
    }
    if (any_posted) {
      int count = 0;
      m_done_indices.resize(m_transfer_requests.size());
      const request_errors_returned returned;
      m_done_statuses.resize(m_transfer_requests.size());
      HETERO_MPI_CHECK(MPI_Testsome, static_cast<int>(m_transfer_requests.size()), m_transfer_requests.data(),
                       &count, m_done_indices.data(), m_done_statuses.data());
      for (int k = 0; count != MPI_UNDEFINED && k < count; ++k) {
        const auto i = static_cast<std::size_t>(m_done_indices[static_cast<std::size_t>(k)]);
        if (m_transfers[i].receive && m_transfers[i].bytes > 0) {  // fewer bytes: the owner's empty message
          int got = 0;
          HETERO_MPI_CHECK(MPI_Get_count, &m_done_statuses[static_cast<std::size_t>(k)], MPI_BYTE, &got);
          if (static_cast<std::size_t>(got) < m_transfers[i].bytes) m_transfers[i].cancelled = true;
        }
        arrive(i);
        m_transfers[i].waiting = nullptr;
      }
    }
    // Drop the finished entries.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < m_transfers.size(); ++i) {
      if (m_transfers[i].waiting == nullptr) continue;
      m_transfers[kept] = m_transfers[i];
      m_transfer_requests[kept] = m_transfer_requests[i];
      ++kept;
    }
    m_transfers.resize(kept);
    m_transfer_requests.resize(kept);
    return progressed;
  }

  template <class F>
  void deliver(const remote_key& key, bool cancelled, F& on_arrival) {
    m_arrivals.fetch_add(1, std::memory_order_relaxed);
    auto it = m_inbox.try_emplace(key).first;
    inbox_entry& e = it->second;
    ++e.arrived;
    e.cancelled = e.cancelled || cancelled;
    if (!e.waiting) return;  // arrived before its receive node was declared
    const bool last = e.arrived >= e.expected;
    node* n = e.waiting;
    if (last) {
      m_inbox.erase(it);
      m_active.fetch_sub(1, std::memory_order_release);
    }
    on_arrival(n, last, cancelled);
  }

  void advance_barrier() {
    while (m_round < m_rounds) {
      if (!m_barrier_sent) {
        const int peer = (m_rank + (1 << m_round)) % m_size;
        post_send({remote_message::barrier, m_epoch, static_cast<std::uint64_t>(m_round), 0, 0, m_barrier_flags},
                  peer);
        m_barrier_sent = true;
      }
      auto it = m_barrier_arrivals.find({m_epoch, static_cast<std::uint64_t>(m_round)});
      if (it == m_barrier_arrivals.end()) return;
      m_barrier_flags |= it->second;
      m_barrier_arrivals.erase(it);
      ++m_round;
      m_barrier_sent = false;
    }
    m_barrier_done.store(true, std::memory_order_release);
    m_active.fetch_sub(1, std::memory_order_release);
  }

  void post_small(int i) {
    HETERO_MPI_CHECK(MPI_Irecv, &m_received[static_cast<std::size_t>(i)], static_cast<int>(sizeof(remote_message)),
                     MPI_BYTE, MPI_ANY_SOURCE, tag_small, m_comm, &m_requests[static_cast<std::size_t>(i)]);
  }

  void post_report() {
    HETERO_MPI_CHECK(MPI_Irecv, m_report_buffer.data(), report_capacity, MPI_CHAR, MPI_ANY_SOURCE, tag_report,
                     m_comm, &m_requests[posted_receives]);
  }

  send_slot& new_slot() {
    if (m_free_slots.empty()) {
      m_send_slots.push_back(std::make_unique<send_slot>());
      m_free_slots.push_back(m_send_slots.back().get());
    }
    send_slot* s = m_free_slots.back();
    m_free_slots.pop_back();
    m_pending_slots.push_back(s);
    return *s;
  }

  // Takes a slot, lets `start(slot, request)` start its send and tracks the request. A send that
  // fails to start gives its slot back, so that the pending slots and the requests stay index
  // for index (`test_sends` recycles slot i when request i completes).
  template <class Start>
  void start_send(Start&& start) {
    if (m_send_requests.size() == m_send_requests.capacity())  // tracking a started send cannot throw
      m_send_requests.reserve(std::max<std::size_t>(16, 2 * m_send_requests.capacity()));
    send_slot& slot = new_slot();
    MPI_Request req = MPI_REQUEST_NULL;
    try {
      start(slot, req);
    } catch (...) {
      m_pending_slots.pop_back();  // `slot`, pushed last by new_slot
      m_free_slots.push_back(&slot);
      throw;
    }
    m_send_requests.push_back(req);
    m_active.fetch_add(1, std::memory_order_seq_cst);
  }

  void post_send(const remote_message& m, int target) {
    start_send([&](send_slot& slot, MPI_Request& req) {
      slot.message = m;
      slot.message.graph = m_instance;
      HETERO_MPI_CHECK(MPI_Isend, &slot.message, static_cast<int>(sizeof(remote_message)), MPI_BYTE, target,
                       tag_small, m_comm, &req);
    });
  }

  // Completes finished sends and recycles their slots (m_send_requests[i] belongs to
  // m_pending_slots[i]).
  bool test_sends() {
    int count = 0;
    m_done_indices.resize(m_send_requests.size());
    const request_errors_returned returned;
    HETERO_MPI_CHECK(MPI_Testsome, static_cast<int>(m_send_requests.size()), m_send_requests.data(), &count,
                     m_done_indices.data(), MPI_STATUSES_IGNORE);
    if (count == MPI_UNDEFINED || count == 0) return false;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < m_send_requests.size(); ++i) {
      if (m_send_requests[i] == MPI_REQUEST_NULL) {
        m_free_slots.push_back(m_pending_slots[i]);
        m_active.fetch_sub(1, std::memory_order_release);
      } else {
        m_send_requests[kept] = m_send_requests[i];
        m_pending_slots[kept] = m_pending_slots[i];
        ++kept;
      }
    }
    m_send_requests.resize(kept);
    m_pending_slots.resize(kept);
    return true;
  }

  wait_policy m_policy;
  owned_comm m_owned;  // freed after the destructor cancelled what was posted on it
  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0;
  int m_size = 1;
  std::uint64_t m_instance = 0;  // this graph's instance number, the same on every rank
  std::mutex m_mutex;            // the progress baton; guards everything below
  std::atomic<int> m_active{0};
  std::atomic<std::uint64_t> m_arrivals{0};

  std::array<MPI_Request, posted_receives + 1> m_requests{};  // small receives, then the report receive
  std::array<remote_message, posted_receives> m_received{};
  std::array<char, report_capacity> m_report_buffer{};
  std::unordered_map<remote_key, inbox_entry, remote_key_hash> m_inbox;
  std::vector<node*> m_externals;

  // Tile moves (task data): posted by workers into m_posted_transfers, tested by the baton holder.
  struct transfer {
    node* waiting = nullptr;
    MPI_Request request = MPI_REQUEST_NULL;
    bool receive = false;
    bool cancelled = false;  // arrives cancelled (a tile received only to match its send)
    std::size_t bytes = 0;   // a receive: the tile's (fewer arrived: the owner's move was cancelled)
  };
  std::mutex m_transfer_mutex;  // guards m_posted_transfers
  std::vector<transfer> m_posted_transfers;
  std::vector<transfer> m_transfers;  // m_transfer_requests[i] belongs to m_transfers[i]
  std::vector<MPI_Request> m_transfer_requests;
  std::atomic<std::int64_t> m_transfers_in_flight{0};  // posted and not arrived

  // Tile moves between ranks of one node (node_copies.hpp), by (other rank, tile id, version).
  struct tile_push {  // a tile of this rank: copied into the reader's slab once both are ready
    tile_move move;
    node* done = nullptr;
    const void* from = nullptr;  // null: the version could not be made current here
    bool posted = false;         // this rank's send started
    bool ready = false;          // the reader's "ready" arrived
    bool reader_failed = false;  // ... saying its receive failed
    std::uint64_t slab = 0;      // the reader's slab number + 1; 0: send through MPI
    std::uint64_t nonce = 0;     // the reader's slab names' nonce
  };
  struct tile_wait {
    node* done = nullptr;
    tile_move move;
    std::uint64_t nonce = 0, slab = 0;             // this rank's slab holding the copy (node_copies.hpp)
    std::atomic<std::uint64_t>* copied = nullptr;  // counts the tiles that came through it
    std::atomic<std::uint64_t>* pull = nullptr;    // a pull: where the version the owner has goes
    std::atomic<std::uint64_t>* taken = nullptr;   // ... and what counts the versions pulled
  };
  struct pull_offer {
    node* done = nullptr;     // the owner's move, which the answer ends
    std::uint64_t epoch = 0;  // the wait epoch it was offered in
  };
  struct pull_answer {
    int owner = 0;
    std::uint64_t id = 0, version = 0;
  };
  std::exception_ptr m_deferred_error;                 // defer_error()
  std::vector<std::unique_ptr<std::byte[]>> m_drains;  // tiles received only to match their send
  std::map<move_key, tile_push> m_pushes;
  bool m_pushes_ready = false;                 // some push has both ends
  std::map<move_key, tile_wait> m_tile_waits;  // tiles read here, until "written"
  std::map<move_key, pull_offer> m_pulls;      // versions of this rank pulled by readers, until answered
  std::map<move_key, bool> m_offers;           // offers to pull before their receive started (cancelled?)
  std::mutex m_answer_mutex;                   // guards m_answers (taken without the baton)
  std::vector<pull_answer> m_answers;          // answers to pulls not sent yet
  std::atomic<bool> m_answers_queued{false};
  std::set<int> m_no_shared_memory;  // readers whose slabs this rank cannot open
  struct peer_slab {
    shared_slab memory;
    bool written = false;     // in this graph run
    std::uint8_t mapped = 0;  // the tiles whose pages are mapped here, a bit each
  };
  static_assert(slab_tiles <= 8, "peer_slab::mapped has a bit per tile of a slab");
  // The readers' slabs this rank mapped, by (the reader's nonce, the slab's number).
  std::map<std::pair<std::uint64_t, std::uint64_t>, peer_slab> m_peer_slabs;

  std::vector<std::unique_ptr<send_slot>> m_send_slots;
  std::vector<send_slot*> m_free_slots;
  std::vector<send_slot*> m_pending_slots;
  std::vector<MPI_Request> m_send_requests;
  std::vector<int> m_done_indices;
  std::vector<MPI_Status> m_done_statuses;  // of the tile moves' MPI_Testsome (a receive's bytes)

  std::uint64_t m_epoch = 0;
  int m_round = 0;
  int m_rounds = 0;
  bool m_barrier_sent = false;
  std::uint64_t m_barrier_flags = 0;
  std::atomic<bool> m_barrier_done{true};
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> m_barrier_arrivals;

  bool m_report_sent = false;
  std::atomic<bool> m_report_arrived{false};
  std::map<int, std::string> m_reports;
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_REMOTE_HPP
