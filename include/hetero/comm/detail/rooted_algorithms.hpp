/// @file
/// hetero's own rooted algorithms over point-to-point messages, for any rank count and root:
/// binomial-tree broadcast (ceil(log2 p) steps), linear and binomial-tree scatter and gather,
/// linear scatterv/gatherv, and reduce as a binomial tree or as
/// "gather to the root, then reduce" with the combine on the host or in one Kokkos kernel.
/// `Ops` (local_ops.hpp) says where data lives and how it is combined.
#ifndef HETERO_COMM_DETAIL_ROOTED_ALGORITHMS_HPP
#define HETERO_COMM_DETAIL_ROOTED_ALGORITHMS_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>

#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/mpi_form.hpp"
#include "hetero/comm/detail/p2p.hpp"
#include "hetero/comm/detail/shm_collectives.hpp"

namespace hetero::detail {

/// Rank `v` of the tree rooted at `root`, as a rank of the communicator.
inline int absolute_rank(int v, int root, int p) noexcept { return (v + root) % p; }

/// Broadcast of `data[0, n)` from `root` down a binomial tree.
template <class T>
void binomial_broadcast(comm_state& st, T* data, std::size_t n, int root) {
  const int p = st.size(), me = st.rank(), vr = (me - root + p) % p;
  p2p_batch<T> batch(st, collective::broadcast);
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (vr & mask) {
      batch.recv(data, n, absolute_rank(vr - mask, root, p));
      batch.wait();
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < p) batch.send(data, n, absolute_rank(vr + mask, root, p));
  batch.wait();
}

/// Scatter of `n` elements per rank: the root sends every block itself. `recv` may be null at
/// the root (in place).
template <class T, class Ops>
void linear_scatter(comm_state& st, const T* send, T* recv, std::size_t n, int root) {
  const int p = st.size(), me = st.rank();
  p2p_batch<T> batch(st, collective::scatter);
  if (me == root) {
    for (int r = 0; r < p; ++r)
      if (r != root) batch.send(send + static_cast<std::size_t>(r) * n, n, r);
    if (recv) Ops::copy(recv, send + static_cast<std::size_t>(root) * n, n);
  } else {
    batch.recv(recv, n, root);
  }
  batch.wait();
}

/// Gather of `n` elements per rank to the root, which receives every block itself. `send`
/// may be null at the root (in place).
template <class T, class Ops>
void linear_gather(comm_state& st, const T* send, T* recv, std::size_t n, int root) {
  const int p = st.size(), me = st.rank();
  p2p_batch<T> batch(st, collective::gather);
  if (me == root) {
    for (int r = 0; r < p; ++r)
      if (r != root) batch.recv(recv + static_cast<std::size_t>(r) * n, n, r);
    if (send) Ops::copy(recv + static_cast<std::size_t>(root) * n, send, n);
  } else {
    batch.send(send, n, root);
  }
  batch.wait();
}

/// Scatterv: rank r receives counts[r] elements from send + displs[r] (counts and displs are
/// read at the root only; `recv_n` is this rank's count).
template <class T, class Ops>
void linear_scatterv(comm_state& st, const T* send, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root) {
  const int p = st.size(), me = st.rank();
  p2p_batch<T> batch(st, collective::scatterv);
  if (me == root) {
    for (int r = 0; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root) batch.send(send + displs[i], counts[i], r);
    }
    if (recv) Ops::copy(recv, send + displs[static_cast<std::size_t>(root)], recv_n);
  } else {
    batch.recv(recv, recv_n, root);
  }
  batch.wait();
}

/// Gatherv: rank r's `send_n` elements land at recv + displs[r] on the root.
template <class T, class Ops>
void linear_gatherv(comm_state& st, const T* send, std::size_t send_n, T* recv,
                    std::span<const std::size_t> counts, std::span<const std::size_t> displs, int root) {
  const int p = st.size(), me = st.rank();
  p2p_batch<T> batch(st, collective::gatherv);
  if (me == root) {
    for (int r = 0; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r != root) batch.recv(recv + displs[i], counts[i], r);
    }
    if (send) Ops::copy(recv + displs[static_cast<std::size_t>(root)], send, send_n);
  } else {
    batch.send(send, send_n, root);
  }
  batch.wait();
}

// Ranks in the subtree of tree rank `vr` (itself included).
inline int subtree_size(int vr, int p) noexcept { return vr == 0 ? p : std::min(vr & -vr, p - vr); }

/// Scatter down a binomial tree: a rank receives its whole subtree's blocks from its parent
/// and forwards the children's parts (ceil(log2 p) steps instead of p - 1 sends at the root).
template <class T, class Ops>
void binomial_scatter(comm_state& st, const T* send, T* recv, std::size_t n, int root) {
  const int p = st.size(), me = st.rank(), vr = (me - root + p) % p;
  const int own = subtree_size(vr, p);
  p2p_batch<T> batch(st, collective::scatter);
  // Blocks of this rank's subtree, in tree order (tree rank vr + i at block i).
  const T* blocks = nullptr;
  if (vr == 0) {
    if (root == 0) {
      blocks = send;
    } else {  // rotate: tree order starts at the root
      T* rotated = Ops::template scratch<T>(st, 0, static_cast<std::size_t>(p) * n);
      const auto head = static_cast<std::size_t>(p - root) * n;
      Ops::copy(rotated, send + static_cast<std::size_t>(root) * n, head);
      Ops::copy(rotated + head, send, static_cast<std::size_t>(root) * n);
      blocks = rotated;
    }
  } else {
    T* into = own == 1 ? recv : Ops::template scratch<T>(st, 0, static_cast<std::size_t>(own) * n);
    const int parent = absolute_rank(vr - (vr & -vr), root, p);
    batch.recv(into, static_cast<std::size_t>(own) * n, parent);
    batch.wait();
    blocks = into;
  }
  const int top = vr == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(p))) : (vr & -vr);
  for (int mask = top >> 1; mask > 0; mask >>= 1)
    if (vr + mask < p)
      batch.send(blocks + static_cast<std::size_t>(mask) * n,
                 static_cast<std::size_t>(subtree_size(vr + mask, p)) * n, absolute_rank(vr + mask, root, p));
  batch.wait();
  if (recv && blocks != recv) Ops::copy(recv, blocks, n);
}

/// Gather up a binomial tree: a rank collects its subtree's blocks and sends them to its parent
/// in one message.
template <class T, class Ops>
void binomial_gather(comm_state& st, const T* send, T* recv, std::size_t n, int root) {
  const int p = st.size(), me = st.rank(), vr = (me - root + p) % p;
  const int own = subtree_size(vr, p);
  const T* mine = send ? send : recv + static_cast<std::size_t>(root) * n;  // in place: root only
  p2p_batch<T> batch(st, collective::gather);
  if (own == 1 && vr != 0) {  // a leaf sends its own data
    batch.send(mine, n, absolute_rank(vr - (vr & -vr), root, p));
    batch.wait();
    return;
  }
  T* blocks = (vr == 0 && root == 0) ? recv : Ops::template scratch<T>(st, 0, static_cast<std::size_t>(own) * n);
  Ops::copy(blocks, mine, n);
  for (int mask = 1; mask < own; mask <<= 1)
    batch.recv(blocks + static_cast<std::size_t>(mask) * n,
               static_cast<std::size_t>(subtree_size(vr + mask, p)) * n, absolute_rank(vr + mask, root, p));
  batch.wait();
  if (vr != 0) {
    batch.send(blocks, static_cast<std::size_t>(own) * n, absolute_rank(vr - (vr & -vr), root, p));
    batch.wait();
  } else if (root != 0) {  // un-rotate: tree block i belongs to rank (root + i) % p
    const auto head = static_cast<std::size_t>(p - root) * n;
    Ops::copy(recv + static_cast<std::size_t>(root) * n, blocks, head);
    Ops::copy(recv, blocks + head, static_cast<std::size_t>(root) * n);
  }
}

/// Reduce down a binomial tree. Commutative operations use the tree rooted at `root`; others
/// the tree rooted at rank 0 (so operands stay in rank order), then rank 0 sends to the root.
/// `send` equal to `recv` at the root means in place.
template <class T, class Ops, class R>
void binomial_reduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction, int root) {
  const int p = st.size(), me = st.rank();
  const int tree_root = commutative_for<R, T> ? root : 0;
  const int vr = (me - tree_root + p) % p;
  p2p_batch<T> batch(st, collective::reduce);
  T* acc = (me == root && me == tree_root) ? recv : Ops::template scratch<T>(st, 0, n);
  Ops::copy(acc, send, n);
  T* incoming = Ops::template scratch<T>(st, 1, n);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (vr & mask) {
      batch.send(acc, n, absolute_rank(vr & ~mask, tree_root, p));
      batch.wait();
      break;
    }
    if ((vr | mask) < p) {
      batch.recv(incoming, n, absolute_rank(vr | mask, tree_root, p));
      batch.wait();
      Ops::combine(acc, incoming, n, reduction, false);  // acc holds the lower tree ranks
    }
  }
  if (tree_root != root) {
    if (me == tree_root) batch.send(acc, n, root);
    if (me == root) batch.recv(recv, n, tree_root);
    batch.wait();
  }
}

/// A non-root rank's part of `linear_reduce`: its vector goes to the root.
template <class T>
void linear_reduce_contribute(comm_state& st, const T* send, std::size_t n, int root) {
  p2p_batch<T> batch(st, collective::reduce);
  batch.send(send, n, root);
  batch.wait();
}

/// Reduce by gathering: every rank sends its vector to the root, which folds all p vectors in
/// rank order in one pass (`Ops` = host loops, or one Kokkos kernel for the device-side path).
template <class T, class Ops, class R>
void linear_reduce(comm_state& st, const T* send, T* recv, std::size_t n, const R& reduction, int root) {
  const int p = st.size(), me = st.rank();
  if (me != root) {
    linear_reduce_contribute(st, send, n, root);
    return;
  }
  p2p_batch<T> batch(st, collective::reduce);
  T* all = Ops::template scratch<T>(st, 0, static_cast<std::size_t>(p) * n);
  for (int r = 0; r < p; ++r)
    if (r != root) batch.recv(all + static_cast<std::size_t>(r) * n, n, r);
  Ops::copy(all + static_cast<std::size_t>(root) * n, send, n);
  batch.wait();
  Ops::fold(recv, all, static_cast<std::size_t>(p), n, n, reduction);
}

/// The blocking algorithms of scatter and gather, `n` elements per rank: the shared-memory
/// operation `ShmOp` (made of the call and `shm_extra`), the `linear` and `binomial` trees, or
/// MPI's call (`Shape::mpi`).
template <class Shape, class ShmOp, class Call, class Tree, class... Extra>
void run_rooted(comm_state& st, comm_algorithm a, const Call& call, Tree linear, Tree binomial,
                Extra... shm_extra) {
  switch (a) {
    case comm_algorithm::shm:
      return run_shm<ShmOp>(*st.shm(), Shape::name, call.send, call.recv, call.n, call.root, shm_extra...);
    case comm_algorithm::linear: return linear(st, call.send, call.recv, call.n, call.root);
    case comm_algorithm::binomial: return binomial(st, call.send, call.recv, call.n, call.root);
    default: return run_mpi<Shape>(st, call);
  }
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_ROOTED_ALGORITHMS_HPP
