/// @file
/// What one rank sends in the agreement on a call's arguments (agreement.hpp): its record, and
/// the small payload that may travel with it.
#ifndef HETERO_COMM_DETAIL_AGREEMENT_RECORD_HPP
#define HETERO_COMM_DETAIL_AGREEMENT_RECORD_HPP

#include <array>
#include <cstddef>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/dispatch.hpp"

namespace hetero::detail {

inline constexpr int agreement_tag = 999;        // below the algorithms' tags (1000 + collective)
inline constexpr int rejection_capacity = 1024;  // characters of a rejection that travel
/// Up to this many ranks every rank sends its record to every other one, so a timeout names
/// the ranks that never came; above, one `MPI_Iallreduce` (log p steps, ranks not named).
inline constexpr int agreement_direct_ranks = 16;

/// A payload small enough to travel inline with the records, with which every rank can then
/// finish the call alone (an `allreduce` with a built-in operation, or a `broadcast`'s root
/// data, on host memory, up to `agreement_inline_bytes`): each rank has every rank's payload
/// once the agreement is done, and the call needs no other message
/// (`comm_state::take_inline_payloads`, the shape's `run_inline`).
inline constexpr std::size_t agreement_inline_bytes = 1024;
/// The same where the records meet in the nodes' windows (node_agreement.hpp), as far as the
/// whole table fits a window's slot: between nodes only the leaders send, so larger payloads pay.
inline constexpr std::size_t node_inline_bytes = 8192;
/// The most either agreement carries for one rank (a payload above it never travels inline).
inline constexpr std::size_t largest_inline_bytes =
    node_inline_bytes > agreement_inline_bytes ? node_inline_bytes : agreement_inline_bytes;

/// What a call offers to send inline (`offered` false: nothing).
struct inline_offer {
  const void* data = nullptr;
  std::size_t bytes = 0;
  bool offered = false;
  std::size_t table_bytes = 0;  ///< every rank's payload together, where the ranks' arguments agree
};

/// One rank's record: the fields of `call_signature`, the rank if it rejected its arguments
/// (else the communicator's size), whether it sent its payload inline, and its element size.
using agreement_record = std::array<long long, 8>;

/// Bytes of an agreement slot before its payload.
inline constexpr std::size_t agreement_record_room = 64;
static_assert(sizeof(agreement_record) <= agreement_record_room, "a slot's record must fit before its payload");

inline agreement_record record_of(const comm_state& st, const call_signature& mine, bool rejected, bool inlined) {
  return {static_cast<long long>(mine.kind),
          mine.count,
          mine.root,
          mine.op,
          mine.algorithm,
          rejected ? st.rank() : static_cast<long long>(st.size()),
          inlined ? 1 : 0,
          static_cast<long long>(mine.element_bytes)};
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_AGREEMENT_RECORD_HPP
