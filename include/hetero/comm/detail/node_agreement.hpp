/// @file
/// The agreement's exchange where the ranks span several nodes and some share one: every rank's
/// record (and inline payload) goes through its node's shared-memory window to the node's leader
/// (its first rank), the leaders send their nodes' records to each other, and each leader
/// publishes the whole table on its window. Between nodes that is one message per pair of
/// leaders instead of one per pair of ranks; within a node, no message at all.
///
/// A rank that never comes is still named on every rank. Its leader stops waiting for it at the
/// timeout and sends the other leaders its node's records with that rank marked absent; the
/// leaders wait for each other half a timeout longer, and the other ranks for their leader a
/// whole timeout longer, so the news reaches them before they give up on their own. A leader
/// that never comes is named by the others (its node's ranks wait for it too).
#ifndef HETERO_COMM_DETAIL_NODE_AGREEMENT_HPP
#define HETERO_COMM_DETAIL_NODE_AGREEMENT_HPP

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/agreement_record.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"

namespace hetero::detail {

/// Records packed one after the other: [entries, absent ranks, entry..., absent rank...], each
/// count and rank a `long long`, each entry [record, rank, payload bytes, payload padded to 8].
struct record_stream {
  static constexpr std::size_t word = sizeof(long long);
  static constexpr std::size_t entry_head = agreement_record_room + 2 * word;
  /// Bytes of a stream of at most `entries` entries (`payload` bytes each at most) and `absent`
  /// absent ranks.
  static constexpr std::size_t bound(std::size_t entries, std::size_t absent,
                                     std::size_t payload = node_inline_bytes) {
    return 2 * word + entries * (entry_head + padded(payload)) + absent * word;
  }
  static constexpr std::size_t padded(std::size_t bytes) { return (bytes + word - 1) / word * word; }

  /// Writes one entry at `out`; returns the end.
  static std::byte* put(std::byte* out, const agreement_record& record, int rank, const void* payload,
                        std::size_t bytes) {
    std::memcpy(out, record.data(), sizeof(agreement_record));
    const long long head[2] = {rank, static_cast<long long>(bytes)};
    std::memcpy(out + agreement_record_room, head, sizeof(head));
    if (bytes > 0) std::memcpy(out + entry_head, payload, bytes);
    return out + entry_head + padded(bytes);
  }
  /// Bytes of the entry at `in`.
  static std::size_t length(const std::byte* in) {
    long long bytes = 0;
    std::memcpy(&bytes, in + agreement_record_room + word, word);
    if (bytes < 0 || static_cast<std::size_t>(bytes) > node_inline_bytes)
      raise<runtime_error>("hetero::communicator: a record of the agreement on the arguments came corrupted (",
                           bytes, " payload bytes; at most ", node_inline_bytes, ")");
    return entry_head + padded(static_cast<std::size_t>(bytes));
  }
  static long long read_word(const std::byte* at) {
    long long v = 0;
    std::memcpy(&v, at, word);
    return v;
  }
  static void write_word(std::byte* at, long long v) { std::memcpy(at, &v, word); }
  /// Ends the stream that starts at `stream` and whose entries end at `at`: its counts first,
  /// the absent ranks after the entries; returns the stream's end.
  static std::byte* close(std::byte* stream, std::byte* at, long long entries, const std::vector<int>& absent) {
    write_word(stream, entries);
    write_word(stream + word, static_cast<long long>(absent.size()));
    for (const int r : absent) {
      write_word(at, r);
      at += word;
    }
    return at;
  }
};

/// The exchange (see the file's comment) into the table of the communicator's agreement buffer:
/// rank r's record at `table + r * slot`, its payload `agreement_record_room` bytes after.
class node_exchange {
 public:
  static constexpr std::size_t slot = agreement_record_room + node_inline_bytes;

  /// Whether the records travel this way on `st`: each node has a window, whose slot holds
  /// every rank's record (and its absence) and one rank's largest payload.
  static bool applies(comm_state& st) noexcept {
    const auto p = static_cast<std::size_t>(st.size());
    return st.node_shm() != nullptr && record_stream::bound(p, p, 0) <= st.node_shm()->capacity() &&
           record_stream::bound(1, 0) <= st.node_shm()->capacity();
  }
  /// Whether a payload of `bytes` on this rank, `table_bytes` on all together, travels inline:
  /// at most `node_inline_bytes`, and the whole table fits a slot.
  static bool carries(comm_state& st, std::size_t bytes, std::size_t table_bytes) noexcept {
    const auto p = static_cast<std::size_t>(st.size());
    const std::size_t padding = p * record_stream::word;
    return bytes <= node_inline_bytes &&
           record_stream::bound(p, p, 0) + padding + table_bytes <= st.node_shm()->capacity();
  }

  /// `payload`, `bytes`: this rank's inline payload (none: 0 bytes). Raises `deadlock_error`
  /// naming the ranks that never came, on every rank that came.
  node_exchange(comm_state& st, const agreement_record& mine, const void* payload, std::size_t bytes)
      : m_st(st), m_what(to_string(static_cast<collective>(mine[0]))), m_start(std::chrono::steady_clock::now()) {
    const auto p = static_cast<std::size_t>(st.size());
    const std::size_t block = record_stream::bound(static_cast<std::size_t>(st.largest_node()),
                                                   static_cast<std::size_t>(st.largest_node()));
    const std::size_t others = st.leaders().size() - 1;
    std::byte* buffer = st.agreement_buffer(p * slot + (1 + others) * block);
    table = buffer;
    m_block = block;
    m_streams = buffer + p * slot;
    if (st.node_members().front() == st.rank())
      lead(mine, payload, bytes);
    else
      follow(mine, payload, bytes);
  }

  std::byte* table = nullptr;

 private:
  // A copy of the communicator's policy whose timeout is `factor` times longer.
  [[nodiscard]] wait_policy later(double factor) const {
    wait_policy policy = m_st.policy();
    if (const double t = policy.timeout(); t > 0) policy.timeout_seconds = t * factor;
    return policy;
  }

  // Waits on the window until `ready()` (not reported as a wait when it already is), raising
  // `deadlock_error` past `policy`'s timeout.
  template <class Ready>
  void wait_until(const wait_policy& policy, Ready&& ready, missing_ranks_fn missing) const {
    if (!ready()) m_st.node_shm()->wait_until(policy, ready, m_what, missing);
  }

  // Raises this call's `deadlock_error` (the communicator's own timeout) naming `absent`. A
  // rank named there itself came after its leader gave up on it: it says so.
  [[noreturn]] void give_up(std::vector<int> absent) const {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    if (std::find(absent.begin(), absent.end(), m_st.rank()) != absent.end())
      came_too_late(std::move(absent), waited);
    const auto named = [&](std::vector<int>& out) { out.insert(out.end(), absent.begin(), absent.end()); };
    give_up_waiting(m_st.policy(), m_what, waited, m_st.policy().timeout(), missing_ranks_fn(named));
  }

  [[noreturn]] void came_too_late(std::vector<int> absent, double waited) const {
    std::sort(absent.begin(), absent.end());
    const wait_policy& policy = m_st.policy();
    // The text first: the vector moves into the error as the same call's argument.
    const std::string text =
        message(wait_description(m_what), ": this rank (", m_st.rank(), " of ", m_st.size(),
                ") came after its node's leader (rank ", m_st.node_members().front(), ") had waited the limit (",
                policy.timeout(), " s) for it; every rank that came raised deadlock_error naming ",
                ranks_text(absent), ", and no data moved in this call", policy.advice(), out_of_step_text);
    throw deadlock_error(text, std::move(absent), waited, m_st.size(), m_st.rank());
  }

  // The entries of a stream, where they lie in it.
  struct entries_of {
    const std::byte* first = nullptr;
    std::size_t bytes = 0;
    long long count = 0;
  };

  // Copies the entries of `stream` into the table; appends its absent ranks to `absent`.
  entries_of unpack(const std::byte* stream, std::vector<int>& absent) {
    const long long entries = record_stream::read_word(stream);
    const long long absents = record_stream::read_word(stream + record_stream::word);
    const std::byte* first = stream + 2 * record_stream::word;
    const std::byte* at = first;
    for (long long e = 0; e < entries; ++e) {
      const std::size_t length = record_stream::length(at);
      const long long rank = record_stream::read_word(at + agreement_record_room);
      if (rank < 0 || rank >= m_st.size())
        raise<runtime_error>("hetero::communicator: a record of the agreement on the arguments names rank ", rank,
                             " of ", m_st.size());
      std::byte* to = table + static_cast<std::size_t>(rank) * slot;
      std::memcpy(to, at, sizeof(agreement_record));
      std::memcpy(to + agreement_record_room, at + record_stream::entry_head, length - record_stream::entry_head);
      ++m_seen;
      at += length;
    }
    for (long long a = 0; a < absents; ++a)
      absent.push_back(
          static_cast<int>(record_stream::read_word(at + static_cast<std::size_t>(a) * record_stream::word)));
    return {first, static_cast<std::size_t>(at - first), entries};
  }

  // A rank that does not lead its node: its record to its window, the table from its leader's.
  void follow(const agreement_record& mine, const void* payload, std::size_t bytes) {
    shm_channel& window = *m_st.node_shm();
    const std::uint64_t n = window.begin_op();
    record_stream::put(window.reserve(n, m_what), mine, m_st.rank(), payload, bytes);
    window.publish(n, static_cast<std::uint64_t>(mine[0]));
    window.finish(n);  // this rank reads nothing of op n
    const std::uint64_t m = window.begin_op();
    const int leader = m_st.node_members().front();
    try {
      const auto missing = [&](std::vector<int>& out) { out.push_back(leader); };
      wait_until(
          later(2), [&] { return window.arrived(0, m); }, missing);
    } catch (const deadlock_error&) {
      give_up({leader});
    }
    std::vector<int> absent;
    unpack(window.payload(0, m), absent);
    window.finish(m);
    if (!absent.empty()) give_up(absent);
    check_whole();
  }

  // The node's leader: its node's records from the window, the other nodes' from their
  // leaders, the whole table to the window.
  void lead(const agreement_record& mine, const void* payload, std::size_t bytes) {
    shm_channel& window = *m_st.node_shm();
    const std::vector<int>& members = m_st.node_members();
    const std::size_t q = members.size();
    const std::uint64_t n = window.begin_op();
    std::byte* own = m_streams;  // this node's stream, sent to the other leaders
    std::byte* at = record_stream::put(own + 2 * record_stream::word, mine, m_st.rank(), payload, bytes);
    long long entries = 1;
    std::vector<char> heard(q, 0);
    heard[0] = 1;
    const auto all_heard = [&] {
      bool all = true;
      for (std::size_t i = 1; i < q; ++i) {
        if (heard[i]) continue;
        if (!window.arrived(static_cast<int>(i), n)) {
          all = false;
          continue;
        }
        const std::byte* theirs = window.payload(static_cast<int>(i), n);
        const std::size_t length = record_stream::length(theirs);
        std::memcpy(at, theirs, length);
        at += length;
        ++entries;
        heard[i] = 1;
      }
      return all;
    };
    const auto not_heard = [&](std::vector<int>& out) {
      for (std::size_t i = 1; i < q; ++i)
        if (!heard[i]) out.push_back(members[i]);
    };
    std::vector<int> absent;
    try {
      wait_until(m_st.policy(), all_heard, not_heard);
    } catch (const deadlock_error&) {
      not_heard(absent);  // told to the others, who raise naming them
    }
    window.finish(n);
    const auto own_bytes = static_cast<std::size_t>(record_stream::close(own, at, entries, absent) - own);
    std::vector<int> told;  // this node's absent ranks once more (in `absent` already)
    std::vector<entries_of> pieces{unpack(own, told)};
    exchange(own, own_bytes, absent, pieces);
    publish(window, absent, pieces);
    if (!absent.empty()) give_up(absent);
    check_whole();
  }

  // This node's stream to every other leader, theirs into the table.
  void exchange(const std::byte* own, std::size_t own_bytes, std::vector<int>& absent,
                std::vector<entries_of>& pieces) {
    const std::vector<int>& leaders = m_st.leaders();
    const std::size_t others = leaders.size() - 1;
    std::vector<MPI_Request> requests(2 * others, MPI_REQUEST_NULL);
    std::vector<int> peers(2 * others, -1);
    std::vector<std::byte*> streams(others);
    for (std::size_t k = 0, j = 0; k < leaders.size(); ++k) {
      if (leaders[k] == m_st.rank()) continue;
      streams[j] = m_streams + (1 + j) * m_block;
      HETERO_MPI_CHECK(MPI_Irecv, streams[j], static_cast<int>(m_block), MPI_BYTE, leaders[k], agreement_tag,
                       m_st.comm(), &requests[j]);
      peers[j] = leaders[k];
      HETERO_MPI_CHECK(MPI_Isend, own, static_cast<int>(own_bytes), MPI_BYTE, leaders[k], agreement_tag,
                       m_st.comm(), &requests[others + j]);
      ++j;
    }
    bool complete = true;
    try {
      wait_all(requests, {}, later(1.5), m_what, wait_kind::collective, peers);
    } catch (const deadlock_error& e) {
      m_st.abandon_agreement_buffer();  // a late leader's message may still land in it
      absent.insert(absent.end(), e.missing_ranks().begin(), e.missing_ranks().end());
      complete = false;
    }
    // After a timeout, the streams that did come still name their nodes' absent ranks.
    for (std::size_t j = 0; j < others; ++j) {
      int arrived = 1;
      if (!complete) MPI_Request_get_status(requests[j], &arrived, MPI_STATUS_IGNORE);
      if (arrived) pieces.push_back(unpack(streams[j], absent));
    }
  }

  // Every entry heard (none where a rank is absent: the ranks then only raise) and the absent
  // ranks, on this leader's window.
  void publish(shm_channel& window, const std::vector<int>& absent, const std::vector<entries_of>& pieces) {
    const std::uint64_t m = window.begin_op();
    std::byte* out = window.reserve(m, m_what);
    std::byte* at = out + 2 * record_stream::word;
    long long entries = 0;
    std::size_t total = record_stream::bound(0, absent.size(), 0);
    for (const entries_of& piece : pieces) total += piece.bytes;
    // Ranks that disagree on their arguments may offer more than a slot holds (each judged
    // its own): then the records go without payloads, marked not inline (the records' mismatch
    // raises on every rank). Every leader publishes the same entries, so all judge alike.
    const bool whole = total <= window.capacity();
    for (const entries_of& piece : pieces) {
      if (!absent.empty()) break;
      if (whole) {
        std::memcpy(at, piece.first, piece.bytes);
        at += piece.bytes;
      } else {
        const std::byte* from = piece.first;
        for (long long e = 0; e < piece.count; ++e) {
          agreement_record record;
          std::memcpy(record.data(), from, sizeof(record));
          record[6] = 0;
          const long long rank = record_stream::read_word(from + agreement_record_room);
          std::memcpy(table + static_cast<std::size_t>(rank) * slot, record.data(), sizeof(record));
          at = record_stream::put(at, record, static_cast<int>(rank), nullptr, 0);
          from += record_stream::length(from);
        }
      }
      entries += piece.count;
    }
    record_stream::close(out, at, entries, absent);
    window.publish(m, 0);
    window.finish(m);
  }

  void check_whole() const {
    if (m_seen != m_st.size())
      raise<runtime_error>("hetero::communicator::", m_what, ": the agreement on the arguments heard ", m_seen,
                           " records of ", m_st.size(), " ranks");
  }

  comm_state& m_st;
  std::string_view m_what;
  std::chrono::steady_clock::time_point m_start;
  std::byte* m_streams = nullptr;  // this node's stream, then one per other node
  std::size_t m_block = 0;         // bytes of each
  int m_seen = 0;                  // records copied into the table
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_NODE_AGREEMENT_HPP
