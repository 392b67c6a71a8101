/// @file
/// A shape's MPI call, written once for both forms. A shape's
/// `mpi(st, call, context, request)` names MPI's blocking and non-blocking collective together
/// (`mpi_form`): the blocking one runs when `request` is null, the non-blocking one otherwise.
/// `context` holds what MPI reads while the call runs (int counts and displacements, a
/// reduction's operation): lists the communicator reuses for a blocking call, the request's own
/// for a non-blocking one.
#ifndef HETERO_COMM_DETAIL_MPI_FORM_HPP
#define HETERO_COMM_DETAIL_MPI_FORM_HPP

#include <mpi.h>

#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/comm_state.hpp"
#include "hetero/comm/detail/dispatch.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/mpi_op.hpp"

namespace hetero::detail {

/// MPI's names of a collective's blocking and non-blocking calls, for errors.
struct mpi_names {
  std::string_view blocking, nonblocking;
};

constexpr mpi_names mpi_names_of(collective c) noexcept {
  switch (c) {
    case collective::barrier: return {"MPI_Barrier", "MPI_Ibarrier"};
    case collective::broadcast: return {"MPI_Bcast", "MPI_Ibcast"};
    case collective::scatter: return {"MPI_Scatter", "MPI_Iscatter"};
    case collective::scatterv: return {"MPI_Scatterv", "MPI_Iscatterv"};
    case collective::gather: return {"MPI_Gather", "MPI_Igather"};
    case collective::gatherv: return {"MPI_Gatherv", "MPI_Igatherv"};
    case collective::reduce: return {"MPI_Reduce", "MPI_Ireduce"};
    case collective::allgather: return {"MPI_Allgather", "MPI_Iallgather"};
    case collective::allgatherv: return {"MPI_Allgatherv", "MPI_Iallgatherv"};
    case collective::allreduce: return {"MPI_Allreduce", "MPI_Iallreduce"};
  }
  return {"MPI", "MPI"};
}

/// What MPI reads while a shape's call runs.
struct mpi_context {
  std::vector<int>& counts;
  std::vector<int>& displs;
  MPI_Datatype type = MPI_DATATYPE_NULL;  ///< a reduction's element type and operation for MPI
  MPI_Op op = MPI_OP_NULL;
};

/// `blocking(a..., comm)`, or `nonblocking(a..., comm, request)` when `request` is given.
template <class Blocking, class Nonblocking, class... A>
int mpi_form(MPI_Request* request, Blocking blocking, Nonblocking nonblocking, MPI_Comm comm, const A&... a) {
  return request ? nonblocking(a..., comm, request) : blocking(a..., comm);
}

/// MPI_IN_PLACE for a null buffer (a gather's send, a scatter's receive at the root in place).
inline const void* in_place_if_null(const void* buffer) { return buffer ? buffer : MPI_IN_PLACE; }
inline void* in_place_if_null(void* buffer) { return buffer ? buffer : MPI_IN_PLACE; }
/// MPI_IN_PLACE when `send` is `recv` or null (a reduction in place), else `send`.
inline const void* in_place_if_same(const void* send, const void* recv) {
  return (send == nullptr || send == recv) ? MPI_IN_PLACE : send;
}

/// A non-blocking reduction's MPI operation for `call`, set in `context`; the request keeps it.
/// Guarded: MPI calls it from whichever call drives progress, and an exception must not unwind
/// through MPI (it waits in the request's failure record, `t_op_failure`, set by the skeleton's
/// start).
template <class Call>
std::shared_ptr<void> kept_mpi_reduction(const Call& call, mpi_context& context) {
  const auto reduction = guarded(*call.reduction);
  auto op = std::make_shared<mpi_reduction<typename Call::element_type, std::remove_const_t<decltype(reduction)>>>(
      reduction);
  context.type = op->type();
  context.op = op->op();
  return op;
}

/// A blocking call of `Shape` on MPI's collective (`call_mpi`: blocking, or started and waited
/// with the timeout). A reduction's MPI operation lives here until the call is done.
template <class Shape, class Call>
void run_mpi(comm_state& st, const Call& call) {
  mpi_context context{st.int_list(0), st.int_list(1)};
  const auto run = [&] {
    call_mpi(
        st, Shape::name, mpi_names_of(Shape::kind).blocking,
        [&] { return Shape::mpi(st, call, context, nullptr); },
        [&](MPI_Request* r) { return Shape::mpi(st, call, context, r); });
  };
  if constexpr (Shape::reduces) {
    const mpi_reduction<typename Call::element_type, typename Call::reduction_type> op(*call.reduction);
    context.type = op.type();
    context.op = op.op();
    run();
  } else {
    run();
  }
}

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_MPI_FORM_HPP
