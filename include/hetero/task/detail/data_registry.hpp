/// @file
/// The task data of one graph on this rank: which copy of each piece is current, and the moves
/// that make a task's data valid where it runs. A move happens only when a copy is stale; a
/// write makes the other copies stale; nothing moves back to the host before a host task,
/// `wait(data)`, a send, an eviction or the end of the graph needs it. A device task's inputs start moving when it
/// becomes ready (prefetch), enqueued on its device instance ahead of its kernels. Device
/// memories have a cap: the least recently used copy that no task uses is evicted to make room
/// (written back to the host first when it holds the only current version).
///
/// Locks, always taken in this order: a device memory's mutex, a piece's mutex, a slot's move
/// queue. No thread waits for a move while holding a piece's mutex (a copy being filled is
/// marked `filling`, and the others look again), except an eviction's write-back, which holds
/// the memory's and the victim's locks while the only current copy goes to the host.
#ifndef HETERO_TASK_DETAIL_DATA_REGISTRY_HPP
#define HETERO_TASK_DETAIL_DATA_REGISTRY_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/task/detail/data_memory.hpp"
#include "hetero/task/detail/data_state.hpp"
#include "hetero/task/detail/device_queues.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/node_copies.hpp"
#include "hetero/task/detail/placement.hpp"
#include "hetero/task/statistics.hpp"

namespace hetero::detail {

/// Nanoseconds on the steady clock (task times and queued work).
inline std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The task data of one graph on this rank.
class data_registry {
  struct counter {
    std::atomic<std::uint64_t> moves{0};
    std::atomic<std::uint64_t> bytes{0};
    void add(std::size_t b) noexcept {
      moves.fetch_add(1, std::memory_order_relaxed);
      bytes.fetch_add(b, std::memory_order_relaxed);
    }
    [[nodiscard]] move_count read() const noexcept {
      return {moves.load(std::memory_order_relaxed), bytes.load(std::memory_order_relaxed)};
    }
    void reset() noexcept {
      moves.store(0, std::memory_order_relaxed);
      bytes.store(0, std::memory_order_relaxed);
    }
  };

 public:
  /// `slots` are the graph's devices; `cap` the most bytes one device memory may hold (0: what
  /// the device has, or no cap when that is unknown); `workers` the graph's CPU workers.
  data_registry(const data_ops& ops, std::vector<std::unique_ptr<device_slot>>& slots, std::size_t cap,
                int workers, int rank)
      : m_ops(ops), m_slots(slots), m_workers(std::max(1, workers)), m_rank(rank) {
    int memories = 0;
    for (const auto& s : slots) memories = std::max(memories, s->memory + 1);
    if (memories > max_device_memories)
      raise<invalid_argument>("a task_graph's devices span ", memories, " device memories; allowed: at most ",
                              max_device_memories);
    for (int m = 0; m < memories; ++m) m_memories.push_back(std::make_unique<device_memory>());
    for (const auto& s : slots) {
      m_memories[static_cast<std::size_t>(s->memory)]->slots.push_back(s->index);
      m_moves.push_back(std::make_unique<slot_moves>());
    }
    for (int m = 0; m < memories; ++m) {
      device_memory& mem = *m_memories[static_cast<std::size_t>(m)];
      std::size_t has = 0;
      if (ops.capacity) has = ops.capacity(slots[static_cast<std::size_t>(mem.slots.front())]->instance);
      if (cap > 0) {
        mem.capacity = cap;
      } else if (has > 0) {
        mem.capacity = has;
      }
    }
  }
  data_registry(const data_registry&) = delete;
  data_registry& operator=(const data_registry&) = delete;

  /// The graph is going away: the newest version of each piece goes back to its host memory
  /// (best effort), device copies are freed, and the pieces' handles forget the graph.
  ~data_registry() {
    try {
      for (std::size_t t = 0; t < m_moves.size(); ++t) complete(static_cast<int>(t));
    } catch (...) {  // a broken device: its copies are lost
    }
    for (const auto& s : m_states) forget(*s, true);
    // Read by sends MPI still holds: kept until the process ends (graphs on several threads
    // may end at once; keep_for_mpi locks).
    if (m_keep_host_copies) keep_for_mpi(std::make_unique<std::vector<std::shared_ptr<data_state>>>(m_states));
    for (auto& m : m_memories)
      for (auto& [bytes, ptr] : m->free_blocks) m_ops.deallocate(ptr);
  }

  // --- declaring thread ----------------------------------------------------------------

  /// Registers `s` (made by task_graph: name, bytes, extents, host memory, owner).
  void add(const std::shared_ptr<data_state>& s, const void* graph) {
    s->registry = this;
    s->order = event_block::create(s->name, {}, graph);
    s->copies[host_place].valid = s->owner < 0 || s->owner == m_rank;
    m_states.push_back(s);
  }

  /// The ranks of the graph that share this rank's node (`same_node[r]`), and whether copies
  /// of their tiles go to shared slabs (node_copies.hpp). Declaring thread, before the first
  /// tile is received.
  void share_node(std::vector<char> same_node, bool shared_copies) {
    m_same_node = std::move(same_node);
    m_shared_copies = shared_copies;
  }

  /// Whether rank `r` shares this rank's node and tiles move between the two through shared
  /// memory (task_options::node_shared_copies).
  [[nodiscard]] bool shares_node_with(int r) const noexcept {
    return m_shared_copies && r >= 0 && r != m_rank && static_cast<std::size_t>(r) < m_same_node.size() &&
           m_same_node[static_cast<std::size_t>(r)] != 0;
  }

  /// How this rank releases the versions it read in their owners' memory: one (`answer`: owner,
  /// tile id, version; the graph's channel's `tile_copied`), or all of one owner's at the end of
  /// a run (`release_all`: the channel's `release_pulls`).
  void answer_pulls_with(std::function<void(int, std::uint64_t, std::uint64_t)> answer,
                         std::function<void(int)> release_all) {
    m_answer_pull = std::move(answer);
    m_release_pulls = std::move(release_all);
  }

  /// A `pull_release` node's body: every task here reading version `version` of `s` in its
  /// owner's memory finished, and none will be declared; the owner may write the tile again.
  void release_pull(const data_state& s, std::uint64_t version) {
    slab_fence();  // the readers' loads before the message
    if (m_answer_pull) m_answer_pull(s.owner, s.id, version);
  }

  /// The random nonce in the names of this rank's shared slabs.
  [[nodiscard]] std::uint64_t slab_nonce() const noexcept { return m_nonce; }

  /// A tile of another rank is about to be received here for the first time: its host copy
  /// (declaring thread). Copies of tiles with neighbouring ids (tiles side by side in a row of
  /// a tile array) are carved from one block of `slab_tiles`, in id order, so that a task
  /// reading several of them gets them side by side, as the owner holds its own (one GEMM over
  /// 4 tiles rather than 4).
  void ensure_host_copy(data_state& s) {
    if (s.copies[host_place].ptr) return;
    // A tile this rank reads in its owner's memory (a pull) needs no shared copy: its private
    // copy is only for device tasks, which copy the version there first.
    if (!s.node_source && shares_node_with(s.owner) && make_shared_copy(s)) return;
    host_slab& slab = m_slabs[s.id / slab_tiles];
    if (!slab.base) {
      slab.bytes = s.bytes;
      slab.base = Kokkos::kokkos_malloc<Kokkos::HostSpace>("hetero::task data copies", slab_tiles * s.bytes);
    }
    if (slab.bytes == s.bytes) {
      s.copies[host_place].ptr = static_cast<std::byte*>(slab.base) + slab_offset(s.id, s.bytes);
      ++slab.users;
    } else {  // the block's first tile was of another array, of another size
      s.copies[host_place].ptr = Kokkos::kokkos_malloc<Kokkos::HostSpace>("hetero::task data copy", s.bytes);
    }
    s.host_allocated = true;
  }

  // The host copy of `s`, a tile of a rank of this node, in a shared slab; false where the
  // node's shared memory has no room (the tile then moves through MPI into a private copy).
  bool make_shared_copy(data_state& s) {
    if (!m_shared_copies) return false;
    const std::pair<std::uint64_t, std::size_t> key{s.id / slab_tiles, s.bytes};
    auto it = m_shared_slabs.find(key);
    if (it == m_shared_slabs.end()) {
      shared_host_slab slab;
      slab.generation = m_shared_generations++;
      try {
        slab.memory = shared_slab::create(shared_slab_name(m_nonce, slab.generation), slab_tiles * s.bytes);
      } catch (const runtime_error&) {
        return false;
      }
      it = m_shared_slabs.emplace(key, std::move(slab)).first;
    }
    ++it->second.users;
    s.copies[host_place].ptr = it->second.memory.base() + slab_offset(s.id, s.bytes);
    s.shared_slab = it->second.generation + 1;
    s.host_allocated = true;
    return true;
  }

  /// The registration of `pieces` was dropped by the user (declaring thread): pieces no task
  /// uses any more go back to their host memory and leave; the others are named in the error
  /// `wait()` raises (the graph keeps them until then).
  void drop(const std::vector<std::shared_ptr<data_state>>& pieces) {
    if (std::this_thread::get_id() != m_declaring) {  // a task body held the last handle
      std::lock_guard lock(m_late_mutex);
      m_late.insert(m_late.end(), pieces.begin(), pieces.end());
      return;
    }
    for (const auto& s : pieces) {
      if (s->registry != this) continue;
      const std::int64_t pending = s->unfinished.load(std::memory_order_acquire);
      if (pending > 0 && m_dropped.empty())
        m_dropped = "task data '" + s->name + "' was destroyed while " + std::to_string(pending) +
                    " task(s) or transfer(s) using it had not finished; keep its handle (task_data, tile_array) "
                    "alive until task_graph::wait() returned";
      m_unregistered.push_back(s);
    }
    // Called by a handle's destructor, which must not throw: a failure (MPI's, a device copy's)
    // is raised by the next wait() instead (take_drop_failure).
    try {
      release_unregistered();
    } catch (...) {
      if (!m_drop_failure) m_drop_failure = std::current_exception();
    }
  }

  /// The pieces whose registration was dropped and that no task uses any more leave the graph
  /// (declaring thread): their newest version goes to their host memory, the moves still
  /// queued for them (a skipped task's prefetch) land first.
  void release_unregistered() {
    {
      std::lock_guard lock(m_late_mutex);
      m_unregistered.insert(m_unregistered.end(), m_late.begin(), m_late.end());
      m_late.clear();
    }
    bool flushed = false, left = false;
    for (const auto& s : m_unregistered) {
      if (s->registry != this || s->unfinished.load(std::memory_order_acquire) > 0) continue;
      if (!flushed) {
        for (std::size_t t = 0; t < m_moves.size(); ++t) complete(static_cast<int>(t));
        flushed = true;
      }
      // A version read here in its owner's memory: no task reads it any more, none can be
      // declared (the owner waits for the release).
      if (s->pull_open != data_state::none) release_pull(*s, std::exchange(s->pull_open, data_state::none));
      forget(*s, true);
      left = true;
    }
    if (!left) return;
    std::erase_if(m_unregistered, [this](const auto& s) { return s->registry != this; });
    std::erase_if(m_states, [](const auto& s) { return s->registry == nullptr; });
  }

  /// A send of a broken run was left to MPI: the pieces (the Views they keep alive, which a send
  /// reads) and host copies outlive the graph, kept until the process ends.
  void keep_host_copies() noexcept { m_keep_host_copies = true; }

  /// A token that lives as long as the registry (tile arrays check it before naming a tile).
  [[nodiscard]] std::weak_ptr<int> alive() const noexcept { return m_alive; }

  /// What releasing a dropped registration raised in the handle's destructor, once (null: none).
  [[nodiscard]] std::exception_ptr take_drop_failure() noexcept { return std::exchange(m_drop_failure, nullptr); }

  /// The error of a registration dropped too early, once (empty: none).
  [[nodiscard]] std::string take_drop_error() { return std::exchange(m_dropped, {}); }

  /// A task with a host and a device body was declared: from now on the work queued on each
  /// side is counted (the other tasks' expected times), for placing it.
  void placing() noexcept { m_placing.store(true, std::memory_order_relaxed); }

  /// The record where tasks labelled `label` keep their times.
  label_record* label(std::string_view label) {
    auto it = m_labels.find(label);
    if (it == m_labels.end()) {
      auto record = std::make_unique<label_record>(std::string(label));
      m_label_order.push_back(record.get());
      it = m_labels.emplace(record->label(), std::move(record)).first;
    }
    return it->second.get();
  }

  /// The most bytes a task may use on one device memory.
  [[nodiscard]] std::size_t device_capacity() const noexcept {
    std::size_t c = std::numeric_limits<std::size_t>::max();
    for (const auto& m : m_memories) c = std::min(c, m->capacity);
    return c;
  }

  /// The graph finished (declaring thread, nothing runs): the newest version of each piece of
  /// this rank goes to its host memory, device copies become stale (the host memory is the
  /// user's between graphs), and what was sent and fetched across ranks is forgotten.
  /// A step that throws (a device copy's error) does not stop the others: every piece forgets
  /// what crossed ranks, as the other ranks' pieces do, so that the next graph's moves match;
  /// a piece whose move back failed keeps its device copy as its only current one (its newest
  /// version, which the next read on the host, an eviction or `wait(data)` brings back over
  /// its View). The first error is raised at the end.
  void end_of_graph() {
    std::exception_ptr first;
    const auto attempt = [&first](auto&& step) {
      try {
        step();
        return true;
      } catch (...) {
        if (!first) first = std::current_exception();
        return false;
      }
    };
    attempt([&] { release_open_pulls(); });
    for (std::size_t t = 0; t < m_moves.size(); ++t) attempt([&] { complete(static_cast<int>(t)); });
    for (const auto& s : m_states) {
      const bool mine = s->owner < 0 || s->owner == m_rank;
      const bool home = !mine || attempt([&] { (void)make_host_current(*s); });
      std::lock_guard lock(s->mutex);
      if (home)
        for (int p = 1; p < max_places; ++p) s->copies[static_cast<std::size_t>(p)].valid = false;
      if (!mine) s->copies[host_place].valid = false;
      s->fetched = data_state::none;
      std::fill(s->sent.begin(), s->sent.end(), data_state::none);
    }
    attempt([&] { release_unregistered(); });
    if (first) std::rethrow_exception(first);
  }

  /// Whether a node of kind `kind` that uses `s` in `mode` reads a version in its owner's memory
  /// until it finishes: a receive of a tile read in place, or a task that reads it.
  [[nodiscard]] static bool reads_in_owner_memory(const data_state& s, data_node_kind kind,
                                                  data_mode mode) noexcept {
    return s.node_source &&
           (kind == data_node_kind::receive_done || (kind == data_node_kind::task && reads_old(mode)));
  }

  /// Declaring thread: a node declared here uses `s` in `mode` (finish() counts off those that
  /// read a version in its owner's memory, `reads_in_owner_memory`).
  void add_pull_user(const data_state& s, data_node_kind kind, data_mode mode) noexcept {
    if (reads_in_owner_memory(s, kind, mode)) m_pull_users.fetch_add(1, std::memory_order_relaxed);
  }

  /// Whether every receive and task declared here that uses a version in its owner's memory
  /// finished: with no more declared (the declaring thread waits), the versions can be released
  /// (`release_open_pulls`). Each rank must release before it waits for its own tiles' readers
  /// on other ranks, which release theirs at the same point.
  [[nodiscard]] bool pull_users_done() const noexcept { return m_pull_users.load(std::memory_order_acquire) == 0; }

  /// The versions read here in their owners' memory whose release was not declared (no write
  /// of the tile declared since) are released, with one message per owner: the run ended, and
  /// no task here reads them any more. Declaring thread, nothing running.
  void release_open_pulls() {
    std::vector<int> owners;
    for (const auto& s : m_states) {
      if (s->pull_open == data_state::none) continue;
      s->pull_open = data_state::none;
      if (std::find(owners.begin(), owners.end(), s->owner) == owners.end()) owners.push_back(s->owner);
    }
    if (!owners.empty()) slab_fence();  // the readers' loads before the messages
    for (int owner : owners)
      if (m_release_pulls) m_release_pulls(owner);
  }

  /// `wait(data)`: the host copy is made current (the graph may go on using the others).
  void read_back(data_state& s) { (void)make_host_current(s); }

  /// What moved and where tasks ran.
  [[nodiscard]] task_statistics statistics() const {
    task_statistics t;
    t.moves.to_device = m_to_device.read();
    t.moves.to_host = m_to_host.read();
    t.moves.from_ranks = m_from_ranks.read();
    t.moves.to_ranks = m_to_ranks.read();
    t.moves.from_node_memory = m_from_node_memory.load(std::memory_order_relaxed);
    t.moves.read_through = m_read_through.load(std::memory_order_relaxed);
    t.moves.pulled = m_pulled.load(std::memory_order_relaxed);
    t.moves.evictions = m_evictions.load(std::memory_order_relaxed);
    t.moves.write_backs = m_write_backs.load(std::memory_order_relaxed);
    for (const label_record* l : m_label_order)
      t.labels.push_back({l->label(), l->runs(task_side::host), l->runs(task_side::device),
                          l->seconds(task_side::host), l->seconds(task_side::device)});
    return t;
  }
  void reset_statistics() {
    for (counter* c : {&m_to_device, &m_to_host, &m_from_ranks, &m_to_ranks}) c->reset();
    m_from_node_memory.store(0, std::memory_order_relaxed);
    m_read_through.store(0, std::memory_order_relaxed);
    m_pulled.store(0, std::memory_order_relaxed);
    m_evictions.store(0, std::memory_order_relaxed);
    m_write_backs.store(0, std::memory_order_relaxed);
    for (label_record* l : m_label_order) l->reset_totals();
  }

  /// Counts a tile sent to or received from another rank.
  void count_transfer(bool received, std::size_t bytes) noexcept {
    (received ? m_from_ranks : m_to_ranks).add(bytes);
  }
  /// The count of tiles received through this node's shared memory (the channel adds to it).
  [[nodiscard]] std::atomic<std::uint64_t>& node_memory_moves() noexcept { return m_from_node_memory; }
  /// The count of versions taken from their owners' memory (the channel adds to it).
  [[nodiscard]] std::atomic<std::uint64_t>& pulled_moves() noexcept { return m_pulled; }

  // --- any thread --------------------------------------------------------------------------

  /// `n` became ready. A task with a host and a device body gets its side (where it would
  /// finish first); a device task whose device is known starts moving its inputs there.
  void ready(node& n, bool either) {
    node_data& d = n.extra.data;
    if (d.kind != data_node_kind::task) return;
    if (either) {
      const placement_choice choice = pick_side(n);
      n.kind = choice.side == task_side::device ? node_kind::device : node_kind::cpu;
      d.trying = choice.trying;
    }
    const task_side side = n.kind == node_kind::device ? task_side::device : task_side::host;
    // The work queued on each side matters to tasks with both bodies only.
    if (d.label && m_placing.load(std::memory_order_relaxed)) {
      const label_record::outlook o = d.label->peek(d.bytes);
      const double s = o.seconds[static_cast<std::size_t>(side)];
      d.estimate_ns = s > 0 ? static_cast<std::int64_t>(s * 1e9) : 0;
      m_busy_ns[static_cast<std::size_t>(side)].fetch_add(d.estimate_ns, std::memory_order_relaxed);
    }
    if (side == task_side::device) {
      const int slot = n.device >= 0 ? n.device : (m_slots.size() == 1 ? 0 : -1);
      if (slot >= 0) prefetch(n, *m_slots[static_cast<std::size_t>(slot)]);
    }
  }

  /// Before the body of `n` on `slot` (null: on the host): makes its data valid there and pins
  /// it. Throws when a device memory can never hold the task's data.
  void acquire(node& n, const device_slot* slot) {
    node_data& d = n.extra.data;
    const int place = slot ? 1 + slot->memory : host_place;
    d.place = static_cast<std::int8_t>(place);
    if (d.kind != data_node_kind::task) return;
    std::size_t pinned = 0;
    try {
      if (place != host_place && d.bytes > memory(place).capacity)
        raise<invalid_argument>("task '", n.extra.label, "' needs ", d.bytes, " bytes in device memory ",
                                place - 1, ", which may hold ", memory(place).capacity,
                                " (task_options::device_memory); allowed: tasks whose data fits the cap");
      unsigned attempt = 0;
      while (true) {
        bool complete_set = true;
        for (pinned = 0; pinned < d.uses.size(); ++pinned)
          if (!make_usable(*d.uses[pinned].data, d.uses[pinned].mode, place, slot)) {
            complete_set = false;
            break;
          }
        if (complete_set) break;
        // No room now: what this task holds goes back, so that tasks starting on other instances
        // of the memory cannot hold each other's room; running tasks free theirs when they end.
        // Waits of different lengths, so that two such tasks do not retry in step.
        unpin(d, place, pinned);
        pinned = 0;
        std::this_thread::sleep_for(std::chrono::microseconds(20 + 37 * (++attempt % 8) + (slot->index % 4) * 11));
      }
    } catch (...) {
      unpin(d, place, pinned);
      throw;
    }
    // A host task that writes a piece without reading it makes its other copies stale before
    // the body, so that no eviction writes a device copy back over what it writes; only once
    // every use is usable, so that a use that failed (a device copy's error) leaves the newest
    // version where it was.
    if (place == host_place)
      for (const auto& u : d.uses)
        if (!reads_old(u.mode)) {
          std::lock_guard lock(u.data->mutex);
          for (int p = 1; p < max_places; ++p) u.data->copies[static_cast<std::size_t>(p)].valid = false;
        }
    if (slot) {
      d.slot = static_cast<std::int16_t>(slot->index);
      if (m_ops.host_memory) {
        complete(slot->index);  // its moves land before its kernels run
      } else {
        slot_moves& q = *m_moves[static_cast<std::size_t>(slot->index)];
        std::lock_guard lock(q.mutex);
        d.moves_before = q.enqueued;  // its fence after the kernels completes these
      }
    }
    d.acquired = true;
    d.started_ns = steady_ns();
    if (!slot) read_received(d);
  }

  /// `n` finished (its body ran, and a device task was fenced, or it was skipped): new versions
  /// become the current ones, its copies are released and its time recorded.
  void finish(node& n) {
    node_data& d = n.extra.data;
    const int place = d.place;
    const bool ran = d.kind == data_node_kind::task && d.acquired;
    if (ran) {
      const std::int64_t elapsed = steady_ns() - d.started_ns;
      if (d.slot >= 0 && d.moves_before > 0) {  // the task's fence completed the moves before it
        slot_moves& q = *m_moves[static_cast<std::size_t>(d.slot)];
        std::uint64_t seen = q.completed.load(std::memory_order_relaxed);
        while (seen < d.moves_before &&
               !q.completed.compare_exchange_weak(seen, d.moves_before, std::memory_order_acq_rel)) {
        }
      }
      for (const data_use& u : d.uses) {
        {
          std::lock_guard lock(u.data->mutex);
          data_copy& c = u.data->copies[static_cast<std::size_t>(place)];
          if (writes_new(u.mode)) {
            for (int p = 0; p < max_places; ++p)
              if (p != place) u.data->copies[static_cast<std::size_t>(p)].valid = false;
            c.valid = true;
          }
          if (place != host_place) unpin_copy(*u.data, c, place);
        }
        if (place != host_place) touch(place, *u.data);
      }
      d.acquired = false;
      if (d.label)
        d.label->record(place == host_place ? task_side::host : task_side::device, d.bytes,
                        static_cast<double>(elapsed) * 1e-9);
    } else if (d.kind == data_node_kind::receive_done) {
      data_state& s = *d.uses.front().data;
      std::lock_guard lock(s.mutex);
      for (int p = 0; p < max_places; ++p) s.copies[static_cast<std::size_t>(p)].valid = p == host_place;
      // A pulled version is read in place (and copied by its first device reader, `complete_pull`).
      if (!s.node_source) s.received_unread.store(true, std::memory_order_relaxed);
    }
    const task_side side = n.kind == node_kind::device ? task_side::device : task_side::host;
    if (d.estimate_ns != 0) {
      m_busy_ns[static_cast<std::size_t>(side)].fetch_sub(d.estimate_ns, std::memory_order_relaxed);
      d.estimate_ns = 0;
    }
    if (d.trying && !ran && d.label) d.label->abandon_try(side, d.bytes);  // skipped: try again
    d.trying = false;
    for (const data_use& u : d.uses) {
      if (reads_in_owner_memory(*u.data, d.kind, u.mode)) m_pull_users.fetch_sub(1, std::memory_order_acq_rel);
      u.data->unfinished.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  /// A send's start: the host copy of `s` holds the current version (moved back from a device
  /// if needed). It stays current while the send reads it: writers wait for the send's done
  /// node, and a host copy is never evicted.
  void* host_for_send(data_state& s) { return make_host_current(s); }

  /// A receive's start: where the tile arrives.
  static void* host_for_receive(data_state& s) noexcept { return s.copies[host_place].ptr; }

 private:
  [[nodiscard]] device_memory& memory(int place) const noexcept {
    return *m_memories[static_cast<std::size_t>(place - 1)];
  }

  // The side a ready task with both bodies runs on.
  placement_choice pick_side(node& n) {
    node_data& d = n.extra.data;
    if (d.bytes > device_capacity()) return {task_side::host};
    // A worker waits for each device task it launches: while the devices have work, that many
    // workers are not host lanes.
    const int slots = static_cast<int>(m_slots.size());
    const std::int64_t device_work = m_busy_ns[1].load(std::memory_order_relaxed);
    const int host_lanes = device_work > 0 ? std::max(1, m_workers - slots) : m_workers;
    std::array<double, 2> busy{
        static_cast<double>(m_busy_ns[0].load(std::memory_order_relaxed)) * 1e-9 / host_lanes,
        static_cast<double>(device_work) * 1e-9 / std::max(1, slots)};
    std::size_t to_device = 0, to_host = 0;
    for (const data_use& u : d.uses) {
      if (!reads_old(u.mode)) continue;
      std::lock_guard lock(u.data->mutex);
      bool on_device = false;
      for (int p = 1; p < max_places; ++p)
        on_device = on_device || u.data->copies[static_cast<std::size_t>(p)].valid;
      if (!on_device) to_device += u.data->bytes;
      if (!u.data->copies[host_place].valid) to_host += u.data->bytes;
    }
    const std::array<double, 2> move{static_cast<double>(to_host) * m_seconds_per_byte[1].load(),
                                     static_cast<double>(to_device) * m_seconds_per_byte[0].load()};
    for (double& b : busy) b = std::max(0.0, b);
    return choose_side(*d.label, d.bytes, busy, move);
  }

  // Starts moving the inputs of device task `n` to `slot`'s memory (nothing that would wait).
  void prefetch(node& n, const device_slot& slot) {
    const int place = 1 + slot.memory;
    for (const data_use& u : n.extra.data.uses) {
      if (!reads_old(u.mode)) continue;
      data_state& s = *u.data;
      std::unique_lock lock(s.mutex);
      data_copy& c = s.copies[static_cast<std::size_t>(place)];
      data_copy& h = s.copies[host_place];
      if (c.valid || c.filling || h.filling || !h.valid) continue;
      if (s.pull_version.load(std::memory_order_relaxed) != data_state::none) continue;  // not in h yet
      if (!arrived(c, m_moves) && c.arriving_slot != slot.index) continue;
      c.filling = true;
      ++h.pins;
      lock.unlock();
      std::uint64_t ticket = 0;
      try {
        ticket = fill(s, place, slot, true);
      } catch (...) {  // a prefetch only helps: its task moves the data itself (and reports the error)
        ticket = 0;
      }
      lock.lock();
      --h.pins;
      c.filling = false;
      if (ticket == 0) continue;
      c.valid = true;
      c.arriving_slot = static_cast<std::int16_t>(slot.index);
      c.arriving_ticket = ticket;
    }
  }

  // With copy `c` of `s` in device `place` claimed (`filling`, so that nobody else touches it)
  // and the host copy pinned: gives the copy memory (evicting others; a prefetch evicts only
  // stale copies) and enqueues the move on `slot`. Returns its number there, 0 when there is no
  // room now. The memory is the copy's once given, whatever throws after.
  std::uint64_t fill(data_state& s, int place, const device_slot& slot, bool prefetching) {
    data_copy& c = s.copies[static_cast<std::size_t>(place)];
    if (!c.ptr) {
      void* to = allocate(place, s, prefetching);
      if (!to) return 0;
      std::lock_guard lock(s.mutex);
      c.ptr = to;
    }
    return enqueue_to_device(slot, c.ptr, s.copies[host_place].ptr, s);
  }

  // A host task about to run (its time started): the versions received from other ranks that
  // no host task has read yet are read through once (`read_through`), by the first task only.
  // Versions pulled from a rank of this node are read in place, in the owner's memory.
  void read_received(const node_data& d) {
    for (const data_use& u : d.uses) {
      data_state& s = *u.data;
      if (reads_old(u.mode) && s.received_unread.load(std::memory_order_relaxed) &&
          s.received_unread.exchange(false, std::memory_order_relaxed)) {
        (void)read_through(s.copies[host_place].ptr, s.bytes);
        m_read_through.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  // A tile of another rank of this node whose newest version here is still in the owner's
  // memory only (`pull_version`), about to be read by a device task: copied into this rank's
  // host copy first (which other device readers wait for, `filling`), whence it moves to the
  // device; host tasks read it in place. The owner keeps the version until the release
  // (`release_pull`), which waits for this task. Every device task reading such a tile passes
  // here (taking the piece's lock even when nothing is to copy), so that one arriving while
  // another copies waits for the copy.
  void complete_pull(data_state& s) {
    std::unique_lock lock(s.mutex);
    data_copy& h = s.copies[host_place];
    while (h.filling) relock_later(lock);
    if (s.pull_version.load(std::memory_order_acquire) == data_state::none) return;  // copied, or nothing pulled
    s.pull_version.store(data_state::none, std::memory_order_relaxed);
    h.filling = true;
    lock.unlock();
    slab_fence();  // the owner's message before these reads
    std::memcpy(h.ptr, s.node_source, s.bytes);
    lock.lock();
    h.filling = false;
  }

  // Makes `s` usable in `place` by a task on `slot` (null: the host) with access `mode`, and
  // pins it there. False when a device memory has no room now.
  bool make_usable(data_state& s, data_mode mode, int place, const device_slot* slot) {
    // A device task copies a pulled version before its move (a host task reads it in place).
    if (place != host_place && s.node_source && reads_old(mode)) complete_pull(s);
    // A host copy is never evicted and needs no pin: a task reading it keeps it current (writers
    // wait for the task), and one writing it without reading makes the other copies stale
    // before its body (in acquire()), so that no eviction writes a device copy back over what it
    // writes.
    if (place == host_place) {
      if (reads_old(mode)) (void)make_host_current(s);
      return true;  // a use that only writes makes the other copies stale in acquire()
    }
    std::unique_lock lock(s.mutex);
    while (true) {
      data_copy& c = s.copies[static_cast<std::size_t>(place)];
      data_copy& h = s.copies[host_place];
      if (c.filling) {
        relock_later(lock);
        continue;
      }
      // A move into this copy still travels on another instance's stream: it lands first.
      if (!arrived(c, m_moves) && c.arriving_slot != slot->index) {
        const int t = c.arriving_slot;
        lock.unlock();
        complete(t);
        lock.lock();
        continue;
      }
      if (!reads_old(mode) || c.valid) {
        if (c.ptr) {
          pin(s, c, place);
          return true;
        }
        c.filling = true;
        lock.unlock();
        void* to = nullptr;
        try {
          to = allocate(place, s);
        } catch (...) {
          lock.lock();
          c.filling = false;
          throw;
        }
        lock.lock();
        c.filling = false;
        if (!to) return false;
        c.ptr = to;
        pin(s, c, place);
        return true;
      }
      // The current version is elsewhere. From another device memory it goes through the host.
      if (!h.valid || h.filling) {
        lock.unlock();
        (void)make_host_current(s);
        lock.lock();
        continue;
      }
      c.filling = true;
      ++h.pins;
      lock.unlock();
      std::uint64_t ticket = 0;
      try {
        ticket = fill(s, place, *slot, false);
      } catch (...) {
        lock.lock();
        --h.pins;
        c.filling = false;
        throw;
      }
      lock.lock();
      --h.pins;
      c.filling = false;
      if (ticket == 0) return false;
      c.valid = true;
      c.arriving_slot = static_cast<std::int16_t>(slot->index);
      c.arriving_ticket = ticket;
      pin(s, c, place);
      return true;
    }
  }

  // Makes the host copy of `s` current (a move from the device holding the newest version, if
  // needed). Returns the host copy.
  void* make_host_current(data_state& s) {
    std::unique_lock lock(s.mutex);
    while (true) {
      data_copy& h = s.copies[host_place];
      if (h.filling) {
        relock_later(lock);
        continue;
      }
      if (h.valid) {
        return h.ptr;
      }
      int from = -1;
      for (int p = 1; p < max_places && from < 0; ++p)
        if (s.copies[static_cast<std::size_t>(p)].valid) from = p;
      if (from < 0)
        raise<runtime_error>("task data '", s.name, "' has no current copy on rank ", m_rank,
                             " (a bug of hetero: please report it)");
      data_copy& c = s.copies[static_cast<std::size_t>(from)];
      if (!arrived(c, m_moves)) {
        const int t = c.arriving_slot;
        lock.unlock();
        complete(t);
        lock.lock();
        continue;
      }
      h.filling = true;
      pin(s, c, from);
      lock.unlock();
      try {
        copy_to_host(from, h.ptr, c.ptr, s);
      } catch (...) {
        lock.lock();
        h.filling = false;
        unpin_copy(s, c, from);
        throw;
      }
      lock.lock();
      h.filling = false;
      h.valid = true;
      unpin_copy(s, c, from);
      return h.ptr;
    }
  }

  // Waits a moment for another thread's move, without holding the piece's mutex.
  static void relock_later(std::unique_lock<spin_mutex>& lock) {
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }

  // Pins copy `c` of `s` in `place` (the piece's mutex held).
  void pin(data_state& s, data_copy& c, int place) {
    if (c.pins++ == 0 && place != host_place) memory(place).pinned.fetch_add(s.bytes, std::memory_order_acq_rel);
  }
  void unpin_copy(data_state& s, data_copy& c, int place) {
    if (--c.pins == 0 && place != host_place) memory(place).pinned.fetch_sub(s.bytes, std::memory_order_acq_rel);
  }

  // Releases the first `count` uses of `d` pinned in `place`; device copies become the most
  // recently used.
  void unpin(node_data& d, int place, std::size_t count) {
    if (place == host_place) return;  // host copies are not pinned
    for (std::size_t i = 0; i < count; ++i) {
      data_state& s = *d.uses[i].data;
      {
        std::lock_guard lock(s.mutex);
        unpin_copy(s, s.copies[static_cast<std::size_t>(place)], place);
      }
      if (place != host_place) touch(place, s);
    }
  }

  void touch(int place, data_state& s) {
    device_memory& m = memory(place);
    std::lock_guard lock(m.mutex);
    data_copy& c = s.copies[static_cast<std::size_t>(place)];
    if (c.listed) m.recency.splice(m.recency.end(), m.recency, c.lru);
  }

  // Memory for `s` in device `place` (its copy claimed `filling` by the caller), evicting the
  // least recently used copies no task uses; null when every copy is in use.
  // A prefetch evicts only stale copies: the current ones may be what other ready tasks need.
  void* allocate(int place, data_state& s, bool prefetching = false) {
    device_memory& m = memory(place);
    std::lock_guard lock(m.mutex);
    if (s.bytes > m.capacity)
      raise<invalid_argument>("task data '", s.name, "' has ", s.bytes, " bytes, more than device memory ",
                              place - 1, " may hold (", m.capacity,
                              " bytes, task_options::device_memory); allowed: pieces that fit the cap");
    void* p = take_free_block(m, s.bytes);
    bool flushed = false;
    while (!p && m.used + s.bytes > m.capacity) {
      if (!evict_one(place, m, s.bytes, false) && (prefetching || !evict_one(place, m, s.bytes, true))) {
        if (!m.free_blocks.empty()) {
          auto it = m.free_blocks.begin();  // room held by blocks of another size
          m_ops.deallocate(it->second);
          m.used -= it->first;
          m.free_blocks.erase(it);
        } else if (!prefetching && !flushed) {
          // Copies still on their way (prefetches of tasks not started) become evictable.
          for (int t : m.slots) complete(t);
          flushed = true;
        } else {
          return nullptr;
        }
      }
      p = take_free_block(m, s.bytes);
    }
    if (!p) {
      p = m_ops.allocate(s.bytes);
      m.used += s.bytes;
    }
    data_copy& c = s.copies[static_cast<std::size_t>(place)];
    c.lru = m.recency.insert(m.recency.end(), &s);
    c.listed = true;
    return p;
  }

  static void* take_free_block(device_memory& m, std::size_t bytes) {
    auto it = m.free_blocks.find(bytes);
    if (it == m.free_blocks.end()) return nullptr;
    void* p = it->second;
    m.free_blocks.erase(it);
    return p;
  }

  // Evicts the least recently used copy in `place` that no task uses (the memory's mutex
  // held): a stale one, or with `current` one holding a current version (written back to the
  // host first when no other copy is current). Its block becomes a free block when it has
  // `bytes`, else it is freed.
  bool evict_one(int place, device_memory& m, std::size_t bytes, bool current) {
    for (auto it = m.recency.begin(); it != m.recency.end(); ++it) {
      data_state& v = **it;
      std::unique_lock lock(v.mutex, std::try_to_lock);
      if (!lock.owns_lock()) continue;
      data_copy& c = v.copies[static_cast<std::size_t>(place)];
      if (c.pins > 0 || c.filling || !arrived(c, m_moves) || c.valid != current) continue;
      data_copy& h = v.copies[host_place];
      bool elsewhere = false;
      for (int p = 0; p < max_places; ++p)
        elsewhere = elsewhere || (p != place && v.copies[static_cast<std::size_t>(p)].valid);
      if (c.valid && !elsewhere) {
        if (h.filling || h.pins > 0) continue;
        copy_to_host(place, h.ptr, c.ptr, v);
        h.valid = true;
        m_write_backs.fetch_add(1, std::memory_order_relaxed);
      }
      c.valid = false;
      void* p = std::exchange(c.ptr, nullptr);
      m.recency.erase(it);
      c.listed = false;
      lock.unlock();
      if (v.bytes == bytes) {
        m.free_blocks.emplace(v.bytes, p);
      } else {
        m_ops.deallocate(p);
        m.used -= v.bytes;
      }
      m_evictions.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

  // Enqueues the move of `s` from host memory `from` to device memory `to` on `slot`; returns
  // its number there.
  std::uint64_t enqueue_to_device(const device_slot& slot, void* to, const void* from, data_state& s) {
    slot_moves& q = *m_moves[static_cast<std::size_t>(slot.index)];
    std::lock_guard lock(q.mutex);
    const std::uint64_t ticket = ++q.enqueued;
    m_to_device.add(s.bytes);
    if (m_ops.host_memory) {
      q.waiting.push_back({to, from, s.bytes, &s});
    } else {
      const region moving("task", "move", s.name);
      m_ops.copy(to, from, s.bytes, true, slot.instance);
    }
    return ticket;
  }

  // Every move enqueued on slot `t` so far has arrived.
  void complete(int t) {
    slot_moves& q = *m_moves[static_cast<std::size_t>(t)];
    std::lock_guard lock(q.mutex);
    const std::uint64_t target = q.enqueued;
    if (m_ops.host_memory) {
      while (!q.waiting.empty()) {
        const slot_moves::deferred& m = q.waiting.front();
        const auto start = steady_ns();
        {
          const region moving("task", "move", m.data->name);
          std::memcpy(m.to, m.from, m.bytes);
        }
        learn_rate(0, m.bytes, steady_ns() - start);
        q.waiting.pop_front();
      }
    } else {
      const device_slot& slot = *m_slots[static_cast<std::size_t>(t)];
      slot.fence(slot.instance);
    }
    std::uint64_t seen = q.completed.load(std::memory_order_relaxed);
    while (seen < target && !q.completed.compare_exchange_weak(seen, target, std::memory_order_acq_rel)) {
    }
  }

  // Copies `s` from device `place` to host memory, complete on return.
  void copy_to_host(int place, void* to, const void* from, data_state& s) {
    const region moving("task", "move", s.name);
    const auto start = steady_ns();
    if (m_ops.host_memory) {
      std::memcpy(to, from, s.bytes);
    } else {
      const int t = memory(place).slots.front();
      const device_slot& slot = *m_slots[static_cast<std::size_t>(t)];
      {
        slot_moves& q = *m_moves[static_cast<std::size_t>(t)];
        std::lock_guard lock(q.mutex);
        m_ops.copy(to, from, s.bytes, false, slot.instance);
      }
      complete(t);
    }
    m_to_host.add(s.bytes);
    learn_rate(1, s.bytes, steady_ns() - start);
  }

  // Seconds per byte of moves to the device (0) and to the host (1), for placement.
  void learn_rate(int direction, std::size_t bytes, std::int64_t ns) noexcept {
    if (bytes < 4096 || ns <= 0) return;
    auto& rate = m_seconds_per_byte[static_cast<std::size_t>(direction)];
    const double seen = static_cast<double>(ns) * 1e-9 / static_cast<double>(bytes);
    rate.store(0.75 * rate.load(std::memory_order_relaxed) + 0.25 * seen, std::memory_order_relaxed);
  }

  // Drops `s` from this graph: with `write_back`, its newest version goes to its host memory
  // first; its device copies are freed.
  void forget(data_state& s, bool write_back) {
    if (write_back && (s.owner < 0 || s.owner == m_rank)) {
      try {
        (void)make_host_current(s);
      } catch (...) {  // best effort: the graph is going away
      }
    }
    for (int p = 1; p <= static_cast<int>(m_memories.size()); ++p) {
      data_copy& c = s.copies[static_cast<std::size_t>(p)];
      device_memory& m = memory(p);
      std::lock_guard memory_lock(m.mutex);  // an allocation may be evicting this copy right now
      std::lock_guard lock(s.mutex);
      if (!c.ptr) continue;
      if (c.listed) m.recency.erase(c.lru);
      c.listed = false;
      m_ops.deallocate(std::exchange(c.ptr, nullptr));
      m.used -= s.bytes;
      c.valid = false;
    }
    if (s.host_allocated && s.shared_slab != 0) {  // never an MPI buffer: only owners send
      auto it = m_shared_slabs.find({s.id / slab_tiles, s.bytes});
      if (it != m_shared_slabs.end() && --it->second.users == 0) m_shared_slabs.erase(it);
      s.copies[host_place].ptr = nullptr;
      s.host_allocated = false;
      s.shared_slab = 0;
    } else if (s.host_allocated && !m_keep_host_copies) {
      auto it = m_slabs.find(s.id / slab_tiles);
      const auto* in_slab = it == m_slabs.end() ? nullptr : static_cast<std::byte*>(it->second.base);
      auto* p = static_cast<std::byte*>(s.copies[host_place].ptr);
      if (in_slab && p >= in_slab && p < in_slab + slab_tiles * it->second.bytes) {
        if (--it->second.users == 0) {
          Kokkos::kokkos_free<Kokkos::HostSpace>(it->second.base);
          m_slabs.erase(it);
        }
      } else {
        Kokkos::kokkos_free<Kokkos::HostSpace>(p);
      }
      s.copies[host_place].ptr = nullptr;
      s.host_allocated = false;
    }
    s.registry = nullptr;
  }

  // Host copies of tiles of other ranks, carved in blocks of neighbouring ids (slab_tiles):
  // in shared memory for the ranks of this node, else in this process's.
  struct shared_host_slab {
    shared_slab memory;
    std::uint64_t generation = 0;
    int users = 0;
  };
  std::map<std::pair<std::uint64_t, std::size_t>, shared_host_slab> m_shared_slabs;  // by slab index, tile size
  std::vector<char> m_same_node;  // per rank of the graph: shares this rank's node
  bool m_shared_copies = true;
  std::uint64_t m_nonce = new_slab_nonce();
  std::uint64_t m_shared_generations = 0;
  struct host_slab {
    void* base = nullptr;
    std::size_t bytes = 0;
    int users = 0;
  };
  std::unordered_map<std::uint64_t, host_slab> m_slabs;

  data_ops m_ops;
  std::thread::id m_declaring = std::this_thread::get_id();
  bool m_keep_host_copies = false;
  std::shared_ptr<int> m_alive = std::make_shared<int>(0);
  std::vector<std::shared_ptr<data_state>> m_unregistered;  // dropped by the user, still used
  std::mutex m_late_mutex;
  std::vector<std::shared_ptr<data_state>> m_late;  // dropped on another thread
  std::vector<std::unique_ptr<device_slot>>& m_slots;
  int m_workers;
  int m_rank;
  std::vector<std::unique_ptr<device_memory>> m_memories;
  std::vector<std::unique_ptr<slot_moves>> m_moves;  // per slot
  std::vector<std::shared_ptr<data_state>> m_states;
  std::map<std::string, std::unique_ptr<label_record>, std::less<>> m_labels;
  std::vector<label_record*> m_label_order;
  std::string m_dropped;
  std::exception_ptr m_drop_failure;  // what releasing a dropped registration raised, for wait()

  std::atomic<bool> m_placing{false};
  std::array<std::atomic<std::int64_t>, 2> m_busy_ns{};                 // queued and running work per side
  std::array<std::atomic<double>, 2> m_seconds_per_byte{1e-10, 1e-10};  // 10 GB/s until measured
  counter m_to_device, m_to_host, m_from_ranks, m_to_ranks;
  std::atomic<std::uint64_t> m_from_node_memory{0};
  std::atomic<std::uint64_t> m_read_through{0};                          // task_statistics::moves.read_through
  std::atomic<std::uint64_t> m_pulled{0};                                // task_statistics::moves.pulled
  std::atomic<std::int64_t> m_pull_users{0};                             // add_pull_user, pull_users_done
  std::function<void(int, std::uint64_t, std::uint64_t)> m_answer_pull;  // answer_pulls_with
  std::function<void(int)> m_release_pulls;                              // ... at the end of a run
  std::atomic<std::uint64_t> m_evictions{0};
  std::atomic<std::uint64_t> m_write_backs{0};
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_REGISTRY_HPP
