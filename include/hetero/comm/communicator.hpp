/// @file
/// `hetero::communicator`: collectives on Kokkos Views (host or device memory), contiguous
/// ranges and single values, with a shared-memory path for small messages, hetero's own
/// algorithms and MPI's, chosen by message size from a tuning table. Every member runs through
/// one skeleton (detail/skeleton.hpp) with the shape of its collective (broadcast.hpp, ...).
#ifndef HETERO_COMM_COMMUNICATOR_HPP
#define HETERO_COMM_COMMUNICATOR_HPP

#include <mpi.h>

#include <memory>
#include <string>

#include "hetero/comm/allgatherv.hpp"
#include "hetero/comm/allreduce.hpp"
#include "hetero/comm/barrier.hpp"
#include "hetero/comm/broadcast.hpp"
#include "hetero/comm/gatherv.hpp"
#include "hetero/comm/options.hpp"
#include "hetero/comm/reduce.hpp"
#include "hetero/comm/request.hpp"
#include "hetero/comm/scatterv.hpp"
#include "hetero/comm/tuning.hpp"

namespace hetero {

/// A communicator: a duplicate of an MPI communicator, with everything the collectives need
/// made once at construction (a shared-memory window when all ranks share a node, scratch and
/// staging buffers, the tuning table). Copies are cheap handles to the same communicator; the
/// last one frees it (collectively: every rank must drop its last copy, as with MPI_Comm_free).
/// Like an MPI communicator, one communicator is used by one thread at a time.
///
/// Every collective takes named parameters (parameters.hpp) in any order; `force_algorithm(a)`
/// replaces the tuned choice. Each `i`-form starts the collective and returns its request
/// (algorithm shm or mpi; gatherv and scatterv mpi only); its buffers must stay alive until the
/// request is done.
/// <!-- snippet: fragment
/// int argc = 0;
/// char** argv = nullptr;
/// std::int64_t n = 64;
/// double local_max = 0;
/// std::vector<double> mine(3), all(12);
/// std::vector<int> counts(4, 3);
/// -->
/// @code
/// hetero::runtime rt(argc, argv);
/// hetero::communicator comm;  // all ranks of MPI_COMM_WORLD
/// Kokkos::View<double*> x("x", n);
/// comm.allreduce(hetero::send_recv_buf(x), hetero::op(hetero::ops::sum{}));
/// double largest = comm.allreduce(hetero::send_buf(local_max), hetero::op(hetero::ops::max{}));
/// comm.broadcast(hetero::send_recv_buf(x), hetero::root(3));
/// comm.allgather(hetero::send_buf(mine), hetero::recv_buf(all), hetero::recv_counts(counts));
/// auto request = comm.iallgather(hetero::send_buf(mine), hetero::recv_buf(all));
/// request.wait();
/// @endcode
class communicator {
 public:
  /// Duplicates `base` (collective over its ranks); MPI and Kokkos must be running.
  explicit communicator(MPI_Comm base = MPI_COMM_WORLD, const communicator_options& options = {})
      : m_state(std::make_shared<detail::comm_state>(base, options)) {}

  /// Duplicates MPI_COMM_WORLD with `options`.
  explicit communicator(const communicator_options& options) : communicator(MPI_COMM_WORLD, options) {}

  /// This rank's number, 0 to size() - 1.
  [[nodiscard]] int rank() const noexcept { return m_state->rank(); }
  /// The number of ranks.
  [[nodiscard]] int size() const noexcept { return m_state->size(); }
  /// The nodes the ranks run on.
  [[nodiscard]] int nodes() const noexcept { return m_state->nodes(); }
  /// The duplicated MPI communicator (errors returned, not fatal), for calls hetero does not
  /// wrap. Messages on it do not mix with hetero's only if their tags are not 999, 1000 to 1009
  /// or 16384 to 32767 (docs/comm.md); a separate `MPI_Comm_dup` is safer.
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_state->comm(); }
  /// True when small messages go through the node's shared-memory window.
  [[nodiscard]] bool has_shared_memory() const noexcept { return m_state->shm() != nullptr; }
  /// True where the ranks span several nodes and some share one: each node has a shared-memory
  /// window, and the agreement on a call's arguments (with the small payloads that travel with
  /// it: barrier, small host broadcast and allreduce) meets there and among one leader per node.
  [[nodiscard]] bool node_aware() const noexcept { return m_state->node_shm() != nullptr; }
  /// The options it was made with.
  [[nodiscard]] const communicator_options& options() const noexcept { return m_state->options(); }
  /// The tuning table in use.
  [[nodiscard]] const comm_tuning& tuning() const noexcept { return m_state->tuning(); }
  /// Where the tuning table came from ("built-in defaults", "file <path>", ...).
  [[nodiscard]] const std::string& tuning_source() const noexcept { return m_state->tuning_source(); }
  /// The algorithm a blocking call of `c` would use for a message of `bytes` bytes (per rank
  /// for scatter, gather and allgather; a commutative operation on 8-byte aligned elements).
  /// Without a shared-memory window, an allreduce of at most 1 KiB with a built-in operation on
  /// host memory, and a broadcast of at most 1 KiB of host memory, are finished by the agreement
  /// on their arguments instead (docs/results/comm.md).
  [[nodiscard]] comm_algorithm algorithm_for(collective c, std::size_t bytes) const {
    const std::size_t published = c == collective::scatter ? bytes * static_cast<std::size_t>(size()) : bytes;
    return detail::choose(*m_state, {c, bytes, published, 8, true}, comm_algorithm::automatic);
  }

  /// Returns once every rank has entered the barrier (mpi, shm, dissemination).
  template <class... Args>
  void barrier(Args&&... args) const {
    detail::blocking<detail::barrier_shape>(*m_state, args...);
  }
  /// Starts a barrier: the request is done once every rank has started it.
  template <class... Args>
  [[nodiscard]] collective_request ibarrier(Args&&... args) const {
    return detail::start<detail::barrier_shape>(m_state, args...);
  }

  /// Copies the root's buffer into every rank's buffer (same element count everywhere).
  /// Parameters: `send_recv_buf(b)` (required), `root(r)` (default 0); algorithms mpi, shm,
  /// binomial.
  template <class... Args>
  void broadcast(Args&&... args) const {
    detail::blocking<detail::broadcast_shape>(*m_state, args...);
  }
  /// Starts a broadcast (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request ibroadcast(Args&&... args) const {
    return detail::start<detail::broadcast_shape>(m_state, args...);
  }

  /// Rank r receives the root's elements [r n, (r + 1) n). Parameters: `root(r)` (default 0);
  /// `send_buf(x)` (p n elements, read at the root only) with `recv_buf(y)` (n = its size, or
  /// `recv_count(n)`), or, at the root only, `send_recv_buf(x)` (in place); algorithms mpi,
  /// shm, linear, binomial. With `send_counts(c)` (and `send_displs(d)`, default packed) at the
  /// root, rank r receives c[r] elements from send + d[r] (algorithms mpi, shm, linear).
  template <class... Args>
  void scatter(Args&&... args) const {
    detail::blocking<detail::scatter_shape_for<Args...>>(*m_state, args...);
  }
  /// Starts a scatter (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request iscatter(Args&&... args) const {
    return detail::start<detail::scatter_shape_for<Args...>>(m_state, args...);
  }
  /// `scatter` with per-rank counts (`send_counts` at the root).
  template <class... Args>
  void scatterv(Args&&... args) const {
    detail::blocking<detail::scatterv_shape>(*m_state, args...);
  }
  /// Starts a scatterv (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request iscatterv(Args&&... args) const {
    return detail::start<detail::scatterv_shape>(m_state, args...);
  }

  /// The root receives every rank's `n` elements, rank r's at recv[r n]. Parameters: `root(r)`
  /// (default 0); `send_buf(x)` (n = its size, or `send_count(n)`) with `recv_buf(y)` (at the
  /// root), or, at the root only, `send_recv_buf(y)` (in place), or only `send_buf(x)`: the
  /// result is returned (a View or std::vector, empty off the root); algorithms mpi, shm,
  /// linear, binomial. With `recv_counts(c)` (and `recv_displs(d)`, default packed), rank r's
  /// elements go to recv[d[r]] (algorithms mpi, shm, linear).
  /// <!-- snippet: fragment
  /// hetero::communicator comm;
  /// std::vector<double> mine(3), all(12);
  /// std::vector<int> counts(4, 3);
  /// -->
  /// @code
  /// comm.gather(hetero::send_buf(mine), hetero::recv_buf(all), hetero::recv_counts(counts));
  /// @endcode
  template <class... Args>
  auto gather(Args&&... args) const {
    return detail::blocking<detail::gather_shape_for<Args...>>(*m_state, args...);
  }
  /// Starts a gather (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request igather(Args&&... args) const {
    return detail::start<detail::gather_shape_for<Args...>>(m_state, args...);
  }
  /// `gather` with per-rank counts; without `recv_counts` on every rank, the counts are
  /// gathered first.
  template <class... Args>
  auto gatherv(Args&&... args) const {
    return detail::blocking<detail::gatherv_shape>(*m_state, args...);
  }
  /// Starts a gatherv (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request igatherv(Args&&... args) const {
    return detail::start<detail::gatherv_shape>(m_state, args...);
  }

  /// The root receives x_0 op x_1 op ... op x_{p-1}, element by element. Parameters: `op(f)`
  /// (required), `root(r)` (default 0); `send_buf(x)` with `recv_buf(y)` (read at the root
  /// only), or `send_recv_buf(x)` (in place), or only `send_buf(x)`: the result is returned
  /// (at other ranks: a value-initialised value, an empty View or vector); algorithms mpi, shm,
  /// binomial, linear, linear_device.
  template <class... Args>
  auto reduce(Args&&... args) const {
    return detail::blocking<detail::reduce_shape>(*m_state, args...);
  }
  /// Starts a reduce (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request ireduce(Args&&... args) const {
    return detail::start<detail::reduce_shape>(m_state, args...);
  }

  /// Every rank receives every rank's `n` elements, rank r's at recv[r n]. Parameters:
  /// `send_buf(x)` (n = its size, or `send_count(n)`) with `recv_buf(y)`, or `send_recv_buf(y)`
  /// (in place), or only `send_buf(x)` (the result is returned); algorithms mpi, shm,
  /// recursive_doubling, ring, bruck. With `recv_counts(c)` (the same on every rank) and
  /// `recv_displs(d)` (default packed), rank r's elements go to recv[d[r]] (mpi, shm, ring).
  template <class... Args>
  auto allgather(Args&&... args) const {
    return detail::blocking<detail::allgather_shape_for<Args...>>(*m_state, args...);
  }
  /// Starts an allgather (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request iallgather(Args&&... args) const {
    return detail::start<detail::allgather_shape_for<Args...>>(m_state, args...);
  }
  /// `allgather` with per-rank counts; without `recv_counts` on every rank, the counts are
  /// exchanged first.
  template <class... Args>
  auto allgatherv(Args&&... args) const {
    return detail::blocking<detail::allgatherv_shape>(*m_state, args...);
  }
  /// Starts an allgatherv (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request iallgatherv(Args&&... args) const {
    return detail::start<detail::allgatherv_shape>(m_state, args...);
  }

  /// Every rank receives x_0 op x_1 op ... op x_{p-1}, element by element (operands in rank
  /// order). Parameters: `op(f)` (required); `send_buf(x)` and `recv_buf(y)`, or
  /// `send_recv_buf(x)` (in place), or only `send_buf(x)`: the result is returned (a value for
  /// a value, a new View for a View, a std::vector for a range); algorithms mpi, shm,
  /// dissemination, recursive_doubling, recursive_halving, ring.
  /// <!-- snippet: fragment
  /// hetero::communicator comm;
  /// double mine = 1;
  /// -->
  /// @code
  /// double total = comm.allreduce(hetero::send_buf(mine), hetero::op(hetero::ops::sum{}));
  /// @endcode
  template <class... Args>
  auto allreduce(Args&&... args) const {
    return detail::blocking<detail::allreduce_shape>(*m_state, args...);
  }
  /// Starts an allreduce (same parameters) and returns its request.
  template <class... Args>
  [[nodiscard]] collective_request iallreduce(Args&&... args) const {
    return detail::start<detail::allreduce_shape>(m_state, args...);
  }

 private:
  std::shared_ptr<detail::comm_state> m_state;
};

}  // namespace hetero

#endif  // HETERO_COMM_COMMUNICATOR_HPP
