/// @file
/// hetero's own all-to-all algorithms over point-to-point messages: allgather by recursive
/// doubling (power-of-two rank counts), ring and Bruck (any count); allgatherv on a ring;
/// allreduce by dissemination, order-preserving
/// recursive doubling, recursive halving + doubling (Rabenseifner) and ring; a dissemination
/// barrier. Rank counts that are not powers of two fold the first 2r ranks in pairs first.
#ifndef HETERO_COMM_DETAIL_SYMMETRIC_ALGORITHMS_HPP
#define HETERO_COMM_DETAIL_SYMMETRIC_ALGORITHMS_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <vector>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/p2p.hpp"

namespace hetero::detail {

/// Allgather for a power-of-two rank count: at step k ranks 2^k apart swap what they have.
/// `send` null means in place (this rank's block is already in recv).
template <class T, class Ops>
void recursive_doubling_allgather(comm_state& st, const T* send, T* recv, std::size_t n) {
  const int p = st.size(), me = st.rank();
  if (send) Ops::copy(recv + static_cast<std::size_t>(me) * n, send, n);
  p2p_batch<T> batch(st, collective::allgather);
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = me ^ mask;
    const auto mine = static_cast<std::size_t>(me & ~(mask - 1)) * n;
    const auto theirs = static_cast<std::size_t>(partner & ~(mask - 1)) * n;
    const auto length = static_cast<std::size_t>(mask) * n;
    batch.exchange(recv + mine, length, partner, recv + theirs, length, partner);
  }
}

/// Allgather on a ring: p - 1 steps, each passing one block to the right neighbour.
template <class T, class Ops>
void ring_allgather(comm_state& st, const T* send, T* recv, std::size_t n) {
  const int p = st.size(), me = st.rank();
  if (send) Ops::copy(recv + static_cast<std::size_t>(me) * n, send, n);
  p2p_batch<T> batch(st, collective::allgather);
  const int left = (me - 1 + p) % p, right = (me + 1) % p;
  for (int k = 0; k < p - 1; ++k) {
    const auto out = static_cast<std::size_t>((me - k + p) % p) * n;
    const auto in = static_cast<std::size_t>((me - k - 1 + 2 * p) % p) * n;
    batch.exchange(recv + out, n, right, recv + in, n, left);
  }
}

/// Allgather after Bruck: step k receives 2^k blocks from rank + 2^k; ceil(log2 p) steps for
/// any rank count, then one local rotation.
template <class T, class Ops>
void bruck_allgather(comm_state& st, const T* send, T* recv, std::size_t n) {
  const int p = st.size(), me = st.rank();
  T* blocks = Ops::template scratch<T>(st, 0, static_cast<std::size_t>(p) * n);  // block j: rank me + j
  Ops::copy(blocks, send ? send : recv + static_cast<std::size_t>(me) * n, n);
  p2p_batch<T> batch(st, collective::allgather);
  for (int k = 1; k < p; k <<= 1) {
    const auto count = static_cast<std::size_t>(std::min(k, p - k)) * n;
    batch.exchange(blocks, count, (me - k + p) % p, blocks + static_cast<std::size_t>(k) * n, count, (me + k) % p);
  }
  const auto head = static_cast<std::size_t>(p - me) * n;  // blocks of ranks me .. p-1
  Ops::copy(recv + static_cast<std::size_t>(me) * n, blocks, head);
  Ops::copy(recv, blocks + head, static_cast<std::size_t>(me) * n);
}

/// Allgatherv on a ring: rank r's counts[r] elements travel to recv + displs[r] everywhere.
template <class T, class Ops>
void ring_allgatherv(comm_state& st, const T* send, T* recv, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs) {
  const int p = st.size(), me = st.rank();
  const auto block = [&](int r) { return static_cast<std::size_t>((r % p + p) % p); };
  if (send) Ops::copy(recv + displs[block(me)], send, counts[block(me)]);
  p2p_batch<T> batch(st, collective::allgatherv);
  for (int k = 0; k < p - 1; ++k) {
    const auto out = block(me - k), in = block(me - k - 1);
    batch.exchange(recv + displs[out], counts[out], (me + 1) % p, recv + displs[in], counts[in], (me - 1 + p) % p);
  }
}

/// The ranks of an allreduce on a rank count that is not a power of two: the first 2 * extra
/// ranks pair up, the even one of each pair hands its vector to the odd one and waits, the
/// rest run on `size` (a power of two) ranks numbered `rank`.
struct folded_ranks {
  int size = 1;   // power of two taking part
  int extra = 0;  // pairs folded
  int rank = -1;  // this rank among them, -1 when it waits
  [[nodiscard]] int real(int folded) const noexcept { return folded < extra ? folded * 2 + 1 : folded + extra; }
};

template <class T, class Ops, class R>
folded_ranks fold_in(comm_state& st, p2p_batch<T>& batch, T* acc, T* incoming, std::size_t n, const R& reduction) {
  const int p = st.size(), me = st.rank();
  folded_ranks f;
  f.size = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  f.extra = p - f.size;
  if (me < 2 * f.extra) {
    if (me % 2 == 0) {
      batch.send(acc, n, me + 1);
      batch.wait();
      return f;
    }
    batch.recv(incoming, n, me - 1);
    batch.wait();
    Ops::combine(acc, incoming, n, reduction, true);  // the even rank is the lower one
    f.rank = me / 2;
  } else {
    f.rank = me - f.extra;
  }
  return f;
}

template <class T>
void fold_out(comm_state& st, p2p_batch<T>& batch, const folded_ranks& f, T* acc, std::size_t n) {
  const int me = st.rank();
  if (me >= 2 * f.extra) return;
  if (me % 2 == 0)
    batch.recv(acc, n, me + 1);
  else
    batch.send(acc, n, me - 1);
  batch.wait();
}

/// Rabenseifner's allreduce on the folded power-of-two ranks: reduce-scatter by recursive
/// halving (each step halves the part a rank is responsible for), then allgather by recursive
/// doubling in reverse order.
template <class T, class Ops, class R>
void halving_doubling(p2p_batch<T>& batch, const folded_ranks& f, T* acc, T* incoming, std::size_t n,
                      const R& reduction) {
  const auto parts = static_cast<std::size_t>(f.size);
  std::vector<std::size_t> displs(parts + 1);
  for (std::size_t i = 0; i <= parts; ++i) displs[i] = i * (n / parts) + std::min(i, n % parts);
  const auto span = [&](std::size_t first, std::size_t last) { return displs[last] - displs[first]; };
  std::size_t send_idx = 0, recv_idx = 0, last_idx = parts;
  int mask = 1;
  for (; mask < f.size; mask <<= 1) {
    const int partner = f.rank ^ mask;
    const auto half = parts / (static_cast<std::size_t>(mask) * 2);
    std::size_t send_n = 0, recv_n = 0;
    if (f.rank < partner) {
      send_idx = recv_idx + half;
      send_n = span(send_idx, last_idx);
      recv_n = span(recv_idx, send_idx);
    } else {
      recv_idx = send_idx + half;
      send_n = span(send_idx, recv_idx);
      recv_n = span(recv_idx, last_idx);
    }
    batch.exchange(acc + displs[send_idx], send_n, f.real(partner), incoming + displs[recv_idx], recv_n,
                   f.real(partner));
    Ops::combine(acc + displs[recv_idx], incoming + displs[recv_idx], recv_n, reduction, partner < f.rank);
    send_idx = recv_idx;
    if ((mask << 1) < f.size) last_idx = recv_idx + parts / (static_cast<std::size_t>(mask) * 2);
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int partner = f.rank ^ mask;
    const auto half = parts / (static_cast<std::size_t>(mask) * 2);
    std::size_t send_n = 0, recv_n = 0;
    if (f.rank < partner) {
      if (mask != f.size / 2) last_idx += half;
      recv_idx = send_idx + half;
      send_n = span(send_idx, recv_idx);
      recv_n = span(recv_idx, last_idx);
    } else {
      recv_idx = send_idx - half;
      send_n = span(send_idx, last_idx);
      recv_n = span(recv_idx, send_idx);
    }
    batch.exchange(acc + displs[send_idx], send_n, f.real(partner), acc + displs[recv_idx], recv_n,
                   f.real(partner));
    if (f.rank > partner) send_idx = recv_idx;
  }
}

/// Which power-of-two core an allreduce runs after folding.
enum class allreduce_core { dissemination, recursive_doubling, recursive_halving };

/// Allreduce into `recv` (`send` equal to `recv` means in place). Dissemination sends to
/// rank + 2^k and receives from rank - 2^k (commutative operations); recursive doubling swaps
/// with rank xor 2^k and keeps operands in rank order; recursive halving reduce-scatters by
/// halves and allgathers back (commutative, for large vectors).
template <class T, class Ops, class R>
void power_of_two_allreduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction,
                            allreduce_core core) {
  p2p_batch<T> batch(st, collective::allreduce);
  Ops::copy(recv, send, n);
  T* incoming = Ops::template scratch<T>(st, 1, n);
  const folded_ranks f = fold_in<T, Ops>(st, batch, recv, incoming, n, reduction);
  if (f.rank >= 0) {
    if (core == allreduce_core::recursive_halving) {
      halving_doubling<T, Ops>(batch, f, recv, incoming, n, reduction);
    } else {
      for (int mask = 1; mask < f.size; mask <<= 1) {
        const bool swap = core == allreduce_core::recursive_doubling;
        const int to = swap ? f.rank ^ mask : (f.rank + mask) % f.size;
        const int from = swap ? f.rank ^ mask : (f.rank - mask + f.size) % f.size;
        batch.exchange(recv, n, f.real(to), incoming, n, f.real(from));
        Ops::combine(recv, incoming, n, reduction, from < f.rank);
      }
    }
  }
  fold_out(st, batch, f, recv, n);
}

/// Allreduce on a ring (commutative operations): a reduce-scatter of p - 1 steps leaves rank r
/// with the finished part r + 1, an allgather of p - 1 steps spreads the parts. Moves
/// 2 (p - 1) / p of the vector per rank, whatever p is.
template <class T, class Ops, class R>
void ring_allreduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction) {
  const int p = st.size(), me = st.rank();
  Ops::copy(recv, send, n);
  if (p == 1) return;
  const auto parts = static_cast<std::size_t>(p);
  const auto start = [&](int part) {
    const auto i = static_cast<std::size_t>((part % p + p) % p);
    return i * (n / parts) + std::min(i, n % parts);
  };
  const auto length = [&](int part) {
    const auto i = static_cast<std::size_t>((part % p + p) % p);
    return n / parts + (i < n % parts ? 1 : 0);
  };
  T* incoming = Ops::template scratch<T>(st, 1, n / parts + 1);
  p2p_batch<T> batch(st, collective::allreduce);
  const int left = (me - 1 + p) % p, right = (me + 1) % p;
  for (int k = 0; k < p - 1; ++k) {
    const int out = me - k, in = me - k - 1;
    batch.exchange(recv + start(out), length(out), right, incoming, length(in), left);
    Ops::combine(recv + start(in), incoming, length(in), reduction, false);
  }
  for (int k = 0; k < p - 1; ++k) {
    const int out = me + 1 - k, in = me - k;
    batch.exchange(recv + start(out), length(out), right, recv + start(in), length(in), left);
  }
}

/// Barrier by dissemination: ceil(log2 p) rounds of empty messages to rank + 2^k.
inline void dissemination_barrier(comm_state& st) {
  const int p = st.size(), me = st.rank();
  p2p_batch<char> batch(st, collective::barrier);
  char none = 0;
  for (int k = 1; k < p; k <<= 1) batch.exchange(&none, 0, (me + k) % p, &none, 0, (me - k + p) % p);
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_SYMMETRIC_ALGORITHMS_HPP
