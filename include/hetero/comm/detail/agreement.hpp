/// @file
/// The agreement on a call's arguments by message: `argument_check::full` always, and
/// `consistent` where a communicator has no shared-memory window (its ranks span nodes, or
/// `communicator_options::shared_memory` is off). Every rank's signature and verdict reach
/// every rank before any data moves, so one rank's rejection or a mismatch raises everywhere.
#ifndef HETERO_COMM_DETAIL_AGREEMENT_HPP
#define HETERO_COMM_DETAIL_AGREEMENT_HPP

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/agreement_record.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/node_agreement.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"

namespace hetero::detail {

/// Every rank's record reduced to its minimum and maximum field by field (`low`, `high`). Where
/// the ranks span nodes and some share one, through each node's window and its leader
/// (`node_exchange`); else directly (each rank's record, and its inline payload if any, to each
/// other rank); either way into the communicator's agreement buffer at slot r for rank r, so a
/// timeout names the ranks not heard from (its waits are named after the collective, as its data
/// step's are). Above `agreement_direct_ranks` without node windows, by one `MPI_Iallreduce` of
/// (record, -record) with MIN (nothing inline).
class agreement_exchange {
 public:
  /// Bytes of a slot before its payload.
  static constexpr std::size_t record_room = agreement_record_room;

  agreement_exchange(comm_state& st, agreement_record mine, const inline_offer& offer) {
    const int p = st.size();
    const bool inlined = mine[6] == 1;
    std::byte* buffer = nullptr;
    if (node_exchange::applies(st)) {
      slot = node_exchange::slot;
      buffer = node_exchange(st, mine, offer.data, inlined ? offer.bytes : 0).table;
    } else if (p > agreement_direct_ranks) {
      mine[6] = 0;
      reduce(st, mine);
      return;
    } else {
      slot = record_room + agreement_inline_bytes;
      buffer = exchange_directly(st, mine, inlined ? offer : inline_offer{});
    }
    payloads = buffer + record_room;
    low = high = mine;
    for (int r = 0; r < p; ++r) {
      agreement_record theirs;
      std::memcpy(theirs.data(), buffer + static_cast<std::size_t>(r) * slot, sizeof(agreement_record));
      for (std::size_t f = 0; f < fields; ++f) {
        low[f] = std::min(low[f], theirs[f]);
        high[f] = std::max(high[f], theirs[f]);
      }
    }
  }

  agreement_record low{}, high{};
  const std::byte* payloads = nullptr;  ///< rank 0's inline payload, if any came (not by `reduce`)
  std::size_t slot = 0;                 ///< bytes from one rank's payload to the next

 private:
  static constexpr std::size_t fields = std::tuple_size_v<agreement_record>;

  // Each rank's record (and inline payload) to each other rank, into the agreement buffer at slot
  // r for rank r; returns the buffer.
  std::byte* exchange_directly(comm_state& st, const agreement_record& mine, const inline_offer& offer) const {
    const int p = st.size();
    // Room for a payload in every slot, whatever this call offers: a rank that passed another
    // count, rejected its arguments or called another collective must still take the others'
    // messages whole, and see the mismatch in their records.
    std::byte* buffer = st.agreement_buffer(static_cast<std::size_t>(p) * slot);
    const auto at = [&](int r) { return buffer + static_cast<std::size_t>(r) * slot; };
    std::memcpy(at(st.rank()), mine.data(), sizeof(agreement_record));
    if (offer.bytes > 0) std::memcpy(at(st.rank()) + record_room, offer.data, offer.bytes);
    const int length = static_cast<int>(mine[6] == 1 ? record_room + offer.bytes : sizeof(agreement_record));
    // At most agreement_direct_ranks - 1 peers: receives first, then sends, on the stack.
    const auto peers_n = static_cast<std::size_t>(p - 1);
    std::array<MPI_Request, 2 * (agreement_direct_ranks - 1)> request_slots;
    std::array<int, 2 * (agreement_direct_ranks - 1)> peer_slots;
    const auto requests = std::span(request_slots).first(2 * peers_n);
    const auto peers = std::span(peer_slots).first(2 * peers_n);
    std::fill(requests.begin(), requests.end(), MPI_REQUEST_NULL);
    std::fill(peers.begin(), peers.end(), -1);
    for (int k = 1; k < p; ++k) {
      const int from = (st.rank() - k + p) % p, to = (st.rank() + k) % p;
      const auto i = static_cast<std::size_t>(k - 1);
      HETERO_MPI_CHECK(MPI_Irecv, at(from), static_cast<int>(slot), MPI_BYTE, from, agreement_tag, st.comm(),
                       &requests[i]);
      peers[i] = from;
      HETERO_MPI_CHECK(MPI_Isend, at(st.rank()), length, MPI_BYTE, to, agreement_tag, st.comm(),
                       &requests[peers_n + i]);
    }
    try {
      // A timeout names the ranks not heard from; the buffer then stays allocated for MPI.
      wait_all(requests, {}, st.policy(), to_string(static_cast<collective>(mine[0])), wait_kind::collective,
               std::span<const int>(peers));
    } catch (const deadlock_error&) {
      st.abandon_agreement_buffer();
      throw;
    }
    return buffer;
  }

  void reduce(comm_state& st, const agreement_record& mine) {
    request_buffer<long long, 4 * fields> buffer;  // in: [0, 2 fields), out: [2 fields, 4 fields)
    for (std::size_t f = 0; f < fields; ++f) {
      buffer[f] = mine[f];
      buffer[fields + f] = -mine[f];
    }
    MPI_Request request = MPI_REQUEST_NULL;
    HETERO_MPI_CHECK(MPI_Iallreduce, buffer.data(), buffer.data() + 2 * fields, static_cast<int>(2 * fields),
                     MPI_LONG_LONG, MPI_MIN, st.comm(), &request);
    buffer.wait(std::span(&request, 1), {}, st.policy(), to_string(static_cast<collective>(mine[0])));
    for (std::size_t f = 0; f < fields; ++f) {
      low[f] = buffer[2 * fields + f];
      high[f] = -buffer[3 * fields + f];
    }
  }
};

/// The message of the first rank that rejected its arguments, sent by it to every rank
/// (NUL-padded, cut to `rejection_capacity` characters).
inline std::string rejection_text(comm_state& st, collective kind, int first, const std::string& reason) {
  request_buffer<char, rejection_capacity> text;
  if (st.rank() == first) {
    const std::size_t length = std::min<std::size_t>(reason.size(), rejection_capacity - 1);
    std::copy_n(reason.data(), length, text.data());
    std::fill(text.data() + length, text.data() + rejection_capacity, '\0');
  }
  MPI_Request request = MPI_REQUEST_NULL;
  HETERO_MPI_CHECK(MPI_Ibcast, text.data(), rejection_capacity, MPI_CHAR, first, st.comm(), &request);
  text.wait(std::span(&request, 1), {}, st.policy(), to_string(kind));
  text[rejection_capacity - 1] = '\0';
  return text.data();
}

/// The agreement of `argument_check::full`, and of `consistent` where there is no shared-memory
/// window (`agrees_by_message`): every rank's (signature, verdict) reaches every rank
/// (`agreement_exchange`). A rank that rejected raises its own error; when one did, it sends its
/// message (`reason`) to the others, which raise `rejected_by_peer` naming it; else ranks that
/// disagree on the collective, count, element size, root, operation or forced algorithm raise
/// `invalid_argument` on every rank. When it returns, every rank arrived with accepted arguments
/// (`comm_state::note_agreement`); they may have given up since (a rank that comes after the
/// timeout still finds the records the others sent), so the data step stays watched.
inline void agree(comm_state& st, const call_signature& mine, const std::exception_ptr& local_error,
                  const std::string& reason, const inline_offer& offer = {}) {
  const bool fits = node_exchange::applies(st) ? node_exchange::carries(st, offer.bytes, offer.table_bytes)
                                               : offer.bytes <= agreement_inline_bytes;
  const bool inlined = !local_error && offer.offered && fits && (offer.data != nullptr || offer.bytes == 0);
  const agreement_exchange all(st, record_of(st, mine, local_error != nullptr, inlined), offer);
  const auto& low = all.low;
  const auto& high = all.high;
  if (const long long first = low[5]; first < st.size()) {
    const std::string text = rejection_text(st, mine.kind, static_cast<int>(first), reason);
    if (local_error) std::rethrow_exception(local_error);
    raise<rejected_by_peer>(
        rejection_message(mine.kind, static_cast<int>(first), has_root(mine.kind) && first == mine.root, text));
  }
  const auto name = to_string(mine.kind);
  if (low[0] != high[0])
    raise<invalid_argument>(name, ": the ranks called different collectives (",
                            to_string(static_cast<collective>(low[0])), " and ",
                            to_string(static_cast<collective>(high[0])), ")");
  if (low[1] != high[1])
    raise<invalid_argument>(name, ": the ranks passed different counts (from ", low[1], " to ", high[1],
                            " elements)");
  if (low[7] != high[7])
    raise<invalid_argument>(name, ": the ranks passed elements of different sizes (from ", low[7], " to ", high[7],
                            " bytes)");
  if (low[2] != high[2])
    raise<invalid_argument>(name, ": the ranks passed different roots (", low[2], " and ", high[2], ")");
  if (low[3] != high[3]) raise<invalid_argument>(name, ": the ranks passed different reduction operations");
  if (low[4] != high[4])
    raise<invalid_argument>(name, ": the ranks forced different algorithms (",
                            to_string(static_cast<comm_algorithm>(low[4])), " and ",
                            to_string(static_cast<comm_algorithm>(high[4])), ")");
  st.note_agreement();
  if (low[6] == 1) st.note_inline_payloads(all.payloads, all.slot);  // every rank's payload came inline
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_AGREEMENT_HPP
