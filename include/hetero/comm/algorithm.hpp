/// @file
/// The collectives of a `hetero::communicator` and the algorithms that can carry each of them,
/// with their names (as written in tuning files and benchmark names).
#ifndef HETERO_COMM_ALGORITHM_HPP
#define HETERO_COMM_ALGORITHM_HPP

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hetero {

/// A collective operation.
enum class collective : std::uint8_t {
  barrier,
  broadcast,
  scatter,
  scatterv,
  gather,
  gatherv,
  reduce,
  allgather,
  allgatherv,
  allreduce
};

/// Every collective, in declaration order.
inline constexpr std::array<collective, 10> all_collectives{
    collective::barrier,    collective::broadcast, collective::scatter, collective::scatterv,
    collective::gather,     collective::gatherv,   collective::reduce,  collective::allgather,
    collective::allgatherv, collective::allreduce};

/// An algorithm that carries a collective. `automatic` lets the communicator choose from its
/// tuning table; the others force one (every rank must force the same).
enum class comm_algorithm : std::uint8_t {
  automatic,           ///< chosen by message size from the tuning table
  mpi,                 ///< MPI's own collective call
  shm,                 ///< the node's shared-memory window (small messages, all ranks on one node;
                       ///< gatherv and scatterv send the blocks that do not fit as messages)
  binomial,            ///< binomial tree: broadcast, scatter, gather, reduce
  linear,              ///< root talks to every rank: scatter(v), gather(v), reduce (host-side combine)
  linear_device,       ///< reduce: gather to the root, combine with one Kokkos kernel (device-side path)
  recursive_doubling,  ///< allgather (power-of-two ranks), allreduce (order-preserving)
  ring,                ///< allgather(v), allreduce (reduce-scatter + allgather on a ring)
  bruck,               ///< allgather, any rank count in ceil(log2 p) steps
  dissemination,       ///< allreduce (built-in operations on integers), barrier
  recursive_halving,   ///< allreduce: recursive-halving reduce-scatter + recursive-doubling allgather
  hierarchical         ///< broadcast, reduce, allreduce, gather where the ranks span several nodes and some
                       ///< share one (`communicator::node_aware`): each node's window within it, MPI's
                       ///< call among one leader per node between them (a reduction that is not
                       ///< commutative needs each node's ranks consecutive, the nodes in rank order)
};

/// Every algorithm but `automatic`.
inline constexpr std::array<comm_algorithm, 11> all_algorithms{
    comm_algorithm::mpi,           comm_algorithm::shm,
    comm_algorithm::binomial,      comm_algorithm::linear,
    comm_algorithm::linear_device, comm_algorithm::recursive_doubling,
    comm_algorithm::ring,          comm_algorithm::bruck,
    comm_algorithm::dissemination, comm_algorithm::recursive_halving,
    comm_algorithm::hierarchical};

/// The collective's name: "allreduce", "broadcast", ...
constexpr std::string_view to_string(collective c) noexcept {
  switch (c) {
    case collective::barrier: return "barrier";
    case collective::broadcast: return "broadcast";
    case collective::scatter: return "scatter";
    case collective::scatterv: return "scatterv";
    case collective::gather: return "gather";
    case collective::gatherv: return "gatherv";
    case collective::reduce: return "reduce";
    case collective::allgather: return "allgather";
    case collective::allgatherv: return "allgatherv";
    case collective::allreduce: return "allreduce";
  }
  return "unknown";
}

/// The algorithm's name: "mpi", "shm", "binomial", ...
constexpr std::string_view to_string(comm_algorithm a) noexcept {
  switch (a) {
    case comm_algorithm::automatic: return "automatic";
    case comm_algorithm::mpi: return "mpi";
    case comm_algorithm::shm: return "shm";
    case comm_algorithm::binomial: return "binomial";
    case comm_algorithm::linear: return "linear";
    case comm_algorithm::linear_device: return "linear_device";
    case comm_algorithm::recursive_doubling: return "recursive_doubling";
    case comm_algorithm::ring: return "ring";
    case comm_algorithm::bruck: return "bruck";
    case comm_algorithm::dissemination: return "dissemination";
    case comm_algorithm::recursive_halving: return "recursive_halving";
    case comm_algorithm::hierarchical: return "hierarchical";
  }
  return "unknown";
}

/// The collective named `name`, if any.
constexpr std::optional<collective> collective_from_string(std::string_view name) noexcept {
  for (collective c : all_collectives)
    if (to_string(c) == name) return c;
  return std::nullopt;
}

/// The algorithm named `name`, if any ("automatic" included).
constexpr std::optional<comm_algorithm> algorithm_from_string(std::string_view name) noexcept {
  if (name == to_string(comm_algorithm::automatic)) return comm_algorithm::automatic;
  for (comm_algorithm a : all_algorithms)
    if (to_string(a) == name) return a;
  return std::nullopt;
}

/// Whether hetero implements collective `c` with algorithm `a` (for some rank counts and
/// operations: recursive-doubling allgather needs a power-of-two rank count, ring and
/// recursive-halving allreduce a commutative operation, dissemination allreduce a built-in
/// operation on integers, and hierarchical ranks on several nodes, some sharing one).
constexpr bool implements(collective c, comm_algorithm a) noexcept {
  using A = comm_algorithm;
  if (a == A::automatic || a == A::mpi) return true;
  switch (c) {
    case collective::barrier: return a == A::shm || a == A::dissemination;
    case collective::broadcast: return a == A::shm || a == A::binomial || a == A::hierarchical;
    case collective::scatter: return a == A::shm || a == A::binomial || a == A::linear;
    case collective::gather: return a == A::shm || a == A::binomial || a == A::linear || a == A::hierarchical;
    case collective::scatterv:
    case collective::gatherv: return a == A::shm || a == A::linear;
    case collective::reduce:
      return a == A::shm || a == A::binomial || a == A::linear || a == A::linear_device || a == A::hierarchical;
    case collective::allgather: return a == A::shm || a == A::recursive_doubling || a == A::ring || a == A::bruck;
    case collective::allgatherv: return a == A::shm || a == A::ring;
    case collective::allreduce:
      return a == A::shm || a == A::recursive_doubling || a == A::ring || a == A::dissemination ||
             a == A::recursive_halving || a == A::hierarchical;
  }
  return false;
}

}  // namespace hetero

#endif  // HETERO_COMM_ALGORITHM_HPP
