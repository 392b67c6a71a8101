/// @file
/// The argument checks the collectives share: roots, counts and displacements given as ranges,
/// block counts, writable buffers, and the agreement among ranks on what was passed.
#ifndef HETERO_COMM_DETAIL_ARGUMENTS_HPP
#define HETERO_COMM_DETAIL_ARGUMENTS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <exception>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/buffer.hpp"
#include "hetero/comm/detail/agreement.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/parameters.hpp"
#include "hetero/core/error.hpp"

namespace hetero::detail {

inline void check_root(const comm_state& st, int root, std::string_view what) {
  if (root < 0 || root >= st.size())
    raise<invalid_argument>(what, ": root ", root, " is outside the communicator of ", st.size(),
                            " rank(s) (allowed: 0 to ", st.size() - 1, ")");
}

/// `p`, or a valid address when `p` is null (an empty buffer), so that a null pointer only ever
/// means "in place" to the algorithms. Nothing is read or written through it.
template <class T>
T* non_null(T* p) noexcept {
  alignas(64) static std::byte stand_in[64];
  return p ? p : reinterpret_cast<T*>(stand_in);
}

/// Counts or displacements given as any range of integers, checked and widened to size_t, into
/// `out`.
template <class R>
void to_sizes(const R& values, std::size_t expected, std::string_view what, std::string_view name,
              std::vector<std::size_t>& out) {
  static_assert(std::ranges::sized_range<R> && std::integral<std::ranges::range_value_t<R>>,
                "hetero: counts and displacements are ranges of integers, one per rank");
  out.clear();
  for (const auto v : values) {
    if constexpr (std::is_signed_v<std::ranges::range_value_t<R>>)
      if (v < 0) raise<invalid_argument>(what, ": ", name, " holds a negative value (", v, ")");
    out.push_back(static_cast<std::size_t>(v));
  }
  if (out.size() != expected)
    raise<invalid_argument>(what, ": ", name, " holds ", out.size(), " value(s); one per rank (", expected,
                            ") is needed");
}

/// Packed displacements: the exclusive prefix sum of `counts`, into `out`.
inline void packed_displs(std::span<const std::size_t> counts, std::vector<std::size_t>& out) {
  out.resize(counts.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    out[i] = at;
    at += counts[i];
  }
}

/// The elements a v-collective's buffer must hold: max(displs[r] + counts[r]).
inline std::size_t extent_of(std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > 0) e = std::max(e, displs[i] + counts[i]);
  return e;
}

/// MPI's int counts and displacements of a rooted v-collective, at the root only (other ranks
/// pass none); `count_what` and `displ_what` name them in the error for a value over INT_MAX.
template <class Call>
void rooted_mpi_lists(const comm_state& st, const Call& call, std::string_view count_what,
                      std::string_view displ_what, std::vector<int>& counts, std::vector<int>& displs) {
  counts.clear();
  displs.clear();
  if (st.rank() != call.root) return;
  mpi_counts(call.counts, count_what, counts);
  mpi_counts(call.displs, displ_what, displs);
}

/// Runs `check(signature)`, the argument checks that may throw and that fill in what every
/// rank must agree on; then, by the communicator's `argument_check`: `local`: an error raises on
/// this rank only; `consistent`: in a blocking collective, with a shared-memory window, a rank
/// that rejected its arguments first takes part in the status step (`root_status`: every rank
/// that reads this rank's slot of that op raises, naming it: all ranks where the others'
/// algorithm is not the shared-memory one, the readers of a shared-memory algorithm otherwise;
/// the op numbers stay in step), then raises; without a window every rank `agree`s by message
/// (any rank's rejection and any mismatch raise on every rank); `full`: every rank `agree`s on
/// every call. `o` is the call's `call_options`; its `what` names the non-blocking forms
/// differently from their collective, which is how they are told apart (they never wait in
/// their start: their errors stay local).
/// `offer()`, called once the checks passed, says what the call offers to send inline with its
/// record where the ranks agree by message (`inline_offer`; nothing by default).
template <class Options, class Check, class Offer = inline_offer (*)()>
void checked_call(
    comm_state& st, const Options& o, collective kind, Check&& check,
    Offer&& offer = [] { return inline_offer{}; }) {
  call_signature signature{kind};
  std::exception_ptr local;
  std::string reason;
  try {
    check(signature);
  } catch (const error& e) {
    local = std::current_exception();
    reason = e.what();
  }
  const argument_check mode = checks_of(st);
  const bool blocking = o.what == to_string(kind);
  if (mode == argument_check::full || (mode == argument_check::consistent && blocking && agrees_by_message(st)))
    return agree(st, signature, local, reason, blocking && !local ? offer() : inline_offer{});
  if (!local) return;
  if (mode == argument_check::consistent && blocking && takes_status(st, kind)) {
    if (!has_root(kind))
      root_status(st, kind, -1, &reason);
    else if (o.root >= 0 && o.root < st.size())
      root_status(st, kind, o.root, &reason);
  }
  std::rethrow_exception(local);
}

/// Whether a rank whose arguments `checked_call` rejected took the status step where every other
/// rank hears of it (consistent checks, a blocking call, a known root, a shared-memory window);
/// a blocking reduction with a user operation then settles with the others (`run_parsed`).
template <class Options>
bool rejection_settles(comm_state& st, const Options& o, collective kind) {
  return checks_of(st) == argument_check::consistent && o.what == to_string(kind) && st.shm() != nullptr &&
         (!has_root(kind) || (o.root >= 0 && o.root < st.size()));
}

/// The per-rank count of an in-place gather or allgather, whose `send_recv_buf` holds p blocks:
/// `send_count(n)` if given, else its size over p, which must then divide evenly.
template <class T, class M, class... Args>
std::size_t in_place_block_count(const buffer_ref<T, M>& all, std::size_t p, std::string_view what,
                                 Args&... args) {
  if constexpr (has_parameter<parameter::send_count, Args...>) {
    return get<parameter::send_count>(args...);
  } else {
    if (all.size % p != 0)
      raise<invalid_argument>(what, ": send_recv_buf holds ", all.size, " elements, not a multiple of the ", p,
                              " ranks; give send_count(n)");
    return all.size / p;
  }
}

/// The count a rank sends from `send_buf`: `send_count(n)` if given (the buffer must hold it),
/// else the buffer's size.
template <class T, class M, class... Args>
std::size_t send_block_count(const buffer_ref<T, M>& send, std::string_view what, Args&... args) {
  const std::size_t n = get_or<parameter::send_count>(send.size, args...);
  require_size(send, n, what, "send_buf", "send_count");
  return n;
}

/// True for an argument whose contents a collective may overwrite and the caller then sees:
/// a View (a handle), a non-const lvalue, or a range that refers to the caller's elements.
template <class B>
constexpr bool writable_argument() {
  if constexpr (!comm_buffer<B>) {
    return true;  // reported by the comm_buffer check
  } else if constexpr (kokkos_view<B>) {
    return !std::is_const_v<typename buffer_traits<B>::value_type>;
  } else {
    // A temporary range is fine when it only refers to the caller's elements (std::span).
    return (std::is_lvalue_reference_v<B> ||
            std::ranges::borrowed_range<B>)&&!std::is_const_v<typename buffer_traits<B>::value_type>;
  }
}

/// True when `B` can take what a buffer of `T` in `M` sends: a writable buffer of the same
/// element type in the same memory space.
template <class B, class T, class M>
constexpr bool receives_from() {
  if constexpr (!comm_buffer<B>) {
    return false;
  } else {
    return writable_argument<B>() && std::is_same_v<buffer_element_t<B>, T> &&
           std::is_same_v<buffer_space_t<B>, M>;
  }
}

/// The checked receive buffer of `recv_buf(...)`, when given, else an empty one.
template <class T, class M, class... Args>
buffer_ref<T, M> optional_recv_buf(std::string_view what, Args&... args) {
  if constexpr (has_parameter<parameter::recv_buf, Args...>) {
    static_assert(receives_from<argument_t<parameter::recv_buf, Args...>, T, M>(),
                  "hetero: recv_buf must be a writable buffer of send_buf's element type and memory space");
    return as_buffer(get<parameter::recv_buf>(args...), what, "recv_buf");
  } else {
    (void)what;
    return {};
  }
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_ARGUMENTS_HPP
