/// @file
/// Optional PMPI interception for applications that call MPI directly: wrappers of MPI's
/// blocking point-to-point calls, its wait/test family, its collectives and its one-sided
/// synchronisation, each reporting its time as a wait to hetero's observer (the power monitor).
///
/// The wrappers are function definitions, so they must be compiled in exactly one translation
/// unit of the program: define `HETERO_POWER_PMPI_DEFINE` before including this header there.
/// Elsewhere the header defines nothing.
/// <!-- snippet: not compiled: one file of the application: the #define must precede the hoisted #include -->
/// @code
/// // pmpi.cpp, one file of the application:
/// #define HETERO_POWER_PMPI_DEFINE
/// #include <hetero/power/pmpi.hpp>
/// @endcode
/// With no observer installed a wrapper costs one atomic load. Large-count (`_c`) forms of the
/// common calls are wrapped where MPI is version 4 or newer; non-blocking starts (`MPI_Isend`,
/// `MPI_Iallreduce`, ...) are not waits and are not wrapped: their completion (`MPI_Wait*`,
/// `MPI_Test*`) is.
#ifndef HETERO_POWER_PMPI_HPP
#define HETERO_POWER_PMPI_HPP

#include <mpi.h>

#include "hetero/core/observer.hpp"

#endif  // HETERO_POWER_PMPI_HPP

#if defined(HETERO_POWER_PMPI_DEFINE) && !defined(HETERO_IMPL_POWER_PMPI_DEFINED)
#define HETERO_IMPL_POWER_PMPI_DEFINED

// Defines MPI_<name> as PMPI_<name> inside a wait scope of `kind` labelled with the call's name.
#define HETERO_IMPL_PMPI_WRAP(kind, name, params, args)                           \
  int MPI_##name params {                                                         \
    ::hetero::wait_scope hetero_waiting(::hetero::wait_kind::kind, "MPI_" #name); \
    return PMPI_##name args;                                                      \
  }

extern "C" {

// Blocking point-to-point.
HETERO_IMPL_PMPI_WRAP(point_to_point, Send,
                      (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Ssend,
                      (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Bsend,
                      (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Rsend,
                      (const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Recv,
                      (void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Status* status),
                      (buf, count, type, source, tag, comm, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Sendrecv,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Status* status),
                      (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                       comm, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Sendrecv_replace,
                      (void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                       MPI_Comm comm, MPI_Status* status),
                      (buf, count, type, dest, sendtag, source, recvtag, comm, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status),
                      (source, tag, comm, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Mprobe,
                      (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status),
                      (source, tag, comm, message, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Mrecv,
                      (void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status),
                      (buf, count, type, message, status))

// Completion of non-blocking operations (the time spent polling in a test counts too).
HETERO_IMPL_PMPI_WRAP(point_to_point, Wait, (MPI_Request * request, MPI_Status* status), (request, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]),
                      (count, requests, statuses))
HETERO_IMPL_PMPI_WRAP(point_to_point, Waitany, (int count, MPI_Request requests[], int* index, MPI_Status* status),
                      (count, requests, index, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Waitsome,
                      (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]),
                      (incount, requests, outcount, indices, statuses))
HETERO_IMPL_PMPI_WRAP(point_to_point, Test, (MPI_Request * request, int* flag, MPI_Status* status),
                      (request, flag, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Testall,
                      (int count, MPI_Request requests[], int* flag, MPI_Status statuses[]),
                      (count, requests, flag, statuses))
HETERO_IMPL_PMPI_WRAP(point_to_point, Testany,
                      (int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status),
                      (count, requests, index, flag, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Testsome,
                      (int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]),
                      (incount, requests, outcount, indices, statuses))

// Collectives.
HETERO_IMPL_PMPI_WRAP(collective, Barrier, (MPI_Comm comm), (comm))
HETERO_IMPL_PMPI_WRAP(collective, Bcast, (void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
                      (buf, count, type, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Reduce,
                      (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Allreduce,
                      (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, comm))
HETERO_IMPL_PMPI_WRAP(collective, Gather,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Gatherv,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Scatter,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Scatterv,
                      (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Allgather,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
HETERO_IMPL_PMPI_WRAP(collective, Allgatherv,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
HETERO_IMPL_PMPI_WRAP(collective, Alltoall,
                      (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
HETERO_IMPL_PMPI_WRAP(collective, Alltoallv,
                      (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm),
                      (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
HETERO_IMPL_PMPI_WRAP(collective, Alltoallw,
                      (const void* sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm),
                      (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
HETERO_IMPL_PMPI_WRAP(collective, Reduce_scatter,
                      (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm),
                      (sendbuf, recvbuf, recvcounts, type, op, comm))
HETERO_IMPL_PMPI_WRAP(collective, Reduce_scatter_block,
                      (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm),
                      (sendbuf, recvbuf, recvcount, type, op, comm))
HETERO_IMPL_PMPI_WRAP(collective, Scan,
                      (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, comm))
HETERO_IMPL_PMPI_WRAP(collective, Exscan,
                      (const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, comm))

// One-sided synchronisation.
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_fence, (int assertion, MPI_Win win), (assertion, win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_wait, (MPI_Win win), (win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_complete, (MPI_Win win), (win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_unlock, (int rank, MPI_Win win), (rank, win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_unlock_all, (MPI_Win win), (win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_flush, (int rank, MPI_Win win), (rank, win))
HETERO_IMPL_PMPI_WRAP(point_to_point, Win_flush_all, (MPI_Win win), (win))

#if MPI_VERSION >= 4
// Large-count forms of the common calls.
HETERO_IMPL_PMPI_WRAP(point_to_point, Send_c,
                      (const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Ssend_c,
                      (const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
                      (buf, count, type, dest, tag, comm))
HETERO_IMPL_PMPI_WRAP(point_to_point, Recv_c,
                      (void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Status* status),
                      (buf, count, type, source, tag, comm, status))
HETERO_IMPL_PMPI_WRAP(point_to_point, Sendrecv_c,
                      (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                       void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                       MPI_Comm comm, MPI_Status* status),
                      (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                       comm, status))
HETERO_IMPL_PMPI_WRAP(collective, Bcast_c,
                      (void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm),
                      (buf, count, type, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Reduce_c,
                      (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Allreduce_c,
                      (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm),
                      (sendbuf, recvbuf, count, type, op, comm))
HETERO_IMPL_PMPI_WRAP(collective, Gather_c,
                      (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Scatter_c,
                      (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
HETERO_IMPL_PMPI_WRAP(collective, Allgather_c,
                      (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
HETERO_IMPL_PMPI_WRAP(collective, Alltoall_c,
                      (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
                      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
#endif

}  // extern "C"

#undef HETERO_IMPL_PMPI_WRAP

#endif  // HETERO_POWER_PMPI_DEFINE
