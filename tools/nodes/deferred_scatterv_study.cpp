// Would a rooted collective whose root does not wait for the others' verdicts on the arguments
// beat MPI's linear scatterv across oversubscribed emulated nodes? (docs/results/core.md, "Deferred
// verdicts, measured".) A study, not part of the library: three scatterv of `bytes` per rank,
// 8 calls per timed batch (the slowest rank's time, as bench_comm_collectives times its
// "_x8" families), alternated batch by batch so that the ratios are paired:
//
//   mpi       MPI_Scatterv on a duplicate of MPI_COMM_WORLD (the baseline);
//   hetero    hetero::communicator::scatterv, the default checks (every rank hears every rank's
//             arguments before the data moves: docs/results/comm.md);
//   deferred  a sketch in plain MPI: the root sends each rank its block with the root's record
//             (here 16 bytes), each rank checks the count it expects against it and sends its
//             verdict back, and the root waits for the verdicts of a call only when `window`
//             calls are in flight (window 1: at its next call, as a broadcast's root does on one
//             node). It stops the program at a wrong verdict; it has no timeout.
//
//   tools/nodes/mpiexec_nodes.sh --per-node 2 -n 8 hetero_deferred_scatterv_study [bytes] [rounds]
//
// prints, per window (1, 2, 4, 8), the median time of 8 calls of each and the paired medians
// (worst round) of hetero and deferred over mpi.
#include <hetero/hetero.hpp>

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int data_tag = 31001, verdict_tag = 31002, calls = 8;
constexpr std::size_t header = 2 * sizeof(long long);  // the root's record: a marker and the count

// Tests the requests until all are complete, yielding the core between tests (as hetero's waits
// do on an oversubscribed node).
void wait_yielding(std::vector<MPI_Request>& requests) {
  int done = 0;
  while (MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), done == 0)
    sched_yield();
}

class deferred_scatterv {
 public:
  deferred_scatterv(MPI_Comm comm, int window) : m_comm(comm), m_window(window) {
    MPI_Comm_rank(comm, &m_rank);
    MPI_Comm_size(comm, &m_size);
  }
  deferred_scatterv(const deferred_scatterv&) = delete;
  deferred_scatterv& operator=(const deferred_scatterv&) = delete;
  ~deferred_scatterv() { settle(); }

  void operator()(const char* send, std::size_t bytes, char* recv, int root) {
    const auto others = static_cast<std::size_t>(m_size - 1);
    if (m_rank == root) {
      if (m_in_flight == m_window) settle();
      if (m_in_flight == 0) {
        m_verdicts.assign(static_cast<std::size_t>(m_window) * others, 0);
        m_pending.clear();
        m_out.resize(static_cast<std::size_t>(m_window) * static_cast<std::size_t>(m_size) * (header + bytes));
      }
      std::vector<MPI_Request> sends;
      const std::size_t call = static_cast<std::size_t>(m_in_flight++);
      for (int r = 0, j = 0; r < m_size; ++r) {
        const auto block = send + static_cast<std::size_t>(r) * bytes;
        if (r == root) {
          std::memcpy(recv, block, bytes);
          continue;
        }
        m_pending.emplace_back();
        MPI_Irecv(&m_verdicts[call * others + static_cast<std::size_t>(j++)], 1, MPI_LONG_LONG, r, verdict_tag,
                  m_comm, &m_pending.back());
        char* message = m_out.data() +
                        (call * static_cast<std::size_t>(m_size) + static_cast<std::size_t>(r)) * (header + bytes);
        const long long record[2] = {root, static_cast<long long>(bytes)};
        std::memcpy(message, record, header);
        std::memcpy(message + header, block, bytes);
        sends.emplace_back();
        MPI_Isend(message, static_cast<int>(header + bytes), MPI_BYTE, r, data_tag, m_comm, &sends.back());
      }
      wait_yielding(sends);
      return;
    }
    if (!m_pending.empty()) wait_yielding(m_pending);  // the previous verdict has left
    m_pending.clear();
    m_in.resize(header + bytes);
    std::vector<MPI_Request> receive(1);
    MPI_Irecv(m_in.data(), static_cast<int>(m_in.size()), MPI_BYTE, root, data_tag, m_comm, &receive[0]);
    wait_yielding(receive);
    long long record[2] = {};
    std::memcpy(record, m_in.data(), header);
    m_verdict = record[0] == root && record[1] == static_cast<long long>(bytes) ? 0 : 1;
    std::memcpy(recv, m_in.data() + header, bytes);
    m_pending.emplace_back();
    MPI_Isend(&m_verdict, 1, MPI_LONG_LONG, root, verdict_tag, m_comm, &m_pending.back());
  }

  // The root: waits for the verdicts of every call in flight; another rank: for its last one
  // to leave.
  void settle() {
    wait_yielding(m_pending);
    m_pending.clear();
    if (std::any_of(m_verdicts.begin(), m_verdicts.end(), [](long long v) { return v != 0; })) {
      std::fprintf(stderr, "deferred_scatterv: a rank rejected the root's record\n");
      MPI_Abort(m_comm, 1);
    }
    m_verdicts.clear();
    m_in_flight = 0;
  }

 private:
  MPI_Comm m_comm;
  int m_window;
  int m_rank = 0, m_size = 1, m_in_flight = 0;
  std::vector<MPI_Request> m_pending;  // the root: verdicts awaited; another rank: its verdict's send
  std::vector<long long> m_verdicts;
  long long m_verdict = 0;
  std::vector<char> m_out, m_in;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  const std::size_t bytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
  hetero::communicator comm;
  MPI_Comm theirs = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &theirs);
  MPI_Comm mine = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  const int p = comm.size();
  const auto count = static_cast<int>(bytes);
  std::vector<char> send(static_cast<std::size_t>(p) * bytes, 1), recv(bytes);
  std::vector<int> counts(static_cast<std::size_t>(p), count), displs(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) displs[static_cast<std::size_t>(r)] = r * count;

  const auto mpi = [&] {
    MPI_Scatterv(send.data(), counts.data(), displs.data(), MPI_BYTE, recv.data(), count, MPI_BYTE, 0, theirs);
  };
  const auto ours = [&] {
    comm.scatterv(hetero::send_buf(send), hetero::send_counts(counts), hetero::recv_buf(recv), hetero::root(0));
  };
  const auto batch = [&](auto&& one) {
    const double start = MPI_Wtime();
    for (int c = 0; c < calls; ++c) one();
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  };
  for (int i = 0; i < 10; ++i) {  // warm up (MPICH changes its algorithms after a few calls)
    mpi();
    ours();
  }
  if (comm.rank() == 0)
    std::printf("scatterv of %zu B per rank on %d ranks, %d rounds of 8 calls; times per 8 calls\n", bytes, p,
                rounds);
  for (const int window : {1, 2, 4, 8}) {
    deferred_scatterv deferred(mine, window);
    std::vector<double> t_mpi, t_ours, t_deferred, r_ours, r_deferred;
    for (int round = 0; round < rounds; ++round) {
      t_mpi.push_back(batch(mpi));
      t_ours.push_back(batch(ours));
      t_deferred.push_back(batch([&] { deferred(send.data(), bytes, recv.data(), 0); }));
      r_ours.push_back(t_ours.back() / t_mpi.back());
      r_deferred.push_back(t_deferred.back() / t_mpi.back());
    }
    if (comm.rank() == 0)
      std::printf(
          "window %d: mpi %.2f ms, hetero %.2f ms, deferred %.2f ms; hetero/mpi %.2f (worst %.2f), deferred/mpi "
          "%.2f (worst %.2f)\n",
          window, 1e3 * median(t_mpi), 1e3 * median(t_ours), 1e3 * median(t_deferred), median(r_ours),
          *std::max_element(r_ours.begin(), r_ours.end()), median(r_deferred),
          *std::max_element(r_deferred.begin(), r_deferred.end()));
  }
  MPI_Comm_free(&mine);
  MPI_Comm_free(&theirs);
}
