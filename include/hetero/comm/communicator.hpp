/// @file
/// `hetero::communicator`: collectives on Kokkos Views (host or device memory), contiguous
/// ranges and single values, with a shared-memory path for small messages, hetero's own
/// algorithms and MPI's, chosen by message size from a tuning table.
#ifndef HETERO_COMM_COMMUNICATOR_HPP
#define HETERO_COMM_COMMUNICATOR_HPP

#include <mpi.h>

#include <memory>
#include <string>

#include "hetero/comm/allgather.hpp"
#include "hetero/comm/allgatherv.hpp"
#include "hetero/comm/allreduce.hpp"
#include "hetero/comm/barrier.hpp"
#include "hetero/comm/broadcast.hpp"
#include "hetero/comm/gather.hpp"
#include "hetero/comm/gatherv.hpp"
#include "hetero/comm/options.hpp"
#include "hetero/comm/reduce.hpp"
#include "hetero/comm/scatter.hpp"
#include "hetero/comm/scatterv.hpp"
#include "hetero/comm/tuning.hpp"

namespace hetero {

/// A communicator: a duplicate of an MPI communicator, with everything the collectives need
/// made once at construction (a shared-memory window when all ranks share a node, scratch and
/// staging buffers, the tuning table). Copies are cheap handles to the same communicator; the
/// last one frees it (collectively: every rank must drop its last copy, as with MPI_Comm_free).
/// Like an MPI communicator, one communicator is used by one thread at a time.
///
/// Every collective takes named parameters (parameters.hpp) in any order:
/// @code
/// hetero::runtime rt(argc, argv);
/// hetero::communicator comm;  // all ranks of MPI_COMM_WORLD
/// Kokkos::View<double*> x("x", n);
/// comm.allreduce(hetero::send_recv_buf(x), hetero::op(hetero::ops::sum{}));
/// double largest = comm.allreduce(hetero::send_buf(local_max), hetero::op(hetero::ops::max{}));
/// comm.broadcast(hetero::send_recv_buf(x), hetero::root(3));
/// auto request = comm.iallgather(hetero::send_buf(mine), hetero::recv_buf(all));
/// request.wait();
/// @endcode
class communicator : public detail::barrier_interface<communicator>,
                     public detail::broadcast_interface<communicator>,
                     public detail::scatter_interface<communicator>,
                     public detail::scatterv_interface<communicator>,
                     public detail::gather_interface<communicator>,
                     public detail::gatherv_interface<communicator>,
                     public detail::reduce_interface<communicator>,
                     public detail::allgather_interface<communicator>,
                     public detail::allgatherv_interface<communicator>,
                     public detail::allreduce_interface<communicator> {
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
  /// wrap. Messages on it do not mix with hetero's collectives only if their tags differ from
  /// 1000 to 1009; a separate `MPI_Comm_dup` is safer.
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_state->comm(); }
  /// True when small messages go through the node's shared-memory window.
  [[nodiscard]] bool has_shared_memory() const noexcept { return m_state->shm() != nullptr; }
  /// The options it was made with.
  [[nodiscard]] const communicator_options& options() const noexcept { return m_state->options(); }
  /// The tuning table in use.
  [[nodiscard]] const comm_tuning& tuning() const noexcept { return m_state->tuning(); }
  /// Where the tuning table came from ("built-in defaults", "file <path>", ...).
  [[nodiscard]] const std::string& tuning_source() const noexcept { return m_state->tuning_source(); }
  /// The algorithm a blocking call of `c` would use for a message of `bytes` bytes (per rank
  /// for scatter, gather and allgather; a commutative operation on 8-byte aligned elements).
  [[nodiscard]] comm_algorithm algorithm_for(collective c, std::size_t bytes) const {
    const std::size_t published = c == collective::scatter ? bytes * static_cast<std::size_t>(size()) : bytes;
    return detail::choose(*m_state, {c, bytes, published, 8, true}, comm_algorithm::automatic);
  }

 private:
  friend struct detail::state_of;
  std::shared_ptr<detail::comm_state> m_state;
};

}  // namespace hetero

#endif  // HETERO_COMM_COMMUNICATOR_HPP
