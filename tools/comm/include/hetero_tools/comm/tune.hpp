/// @file
/// `hetero::tune_collectives`: the tuning run. Times every algorithm of every collective at a
/// range of message sizes on this machine and communicator, and returns the table that picks
/// the fastest, MPI's own call unless another is faster by a margin (15 %,
/// `tune_options::margin`). Save it with `comm_tuning::save` and point `HETERO_COMM_TUNING` (or
/// `communicator_options::tuning_file`) at the file.
/// @code
/// hetero::communicator comm;
/// hetero::comm_tuning table = hetero::tune_collectives(comm);
/// if (comm.rank() == 0) table.save("hetero-comm.tuning");
/// @endcode
#ifndef HETERO_TOOLS_COMM_TUNE_HPP
#define HETERO_TOOLS_COMM_TUNE_HPP

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/communicator.hpp"
#include "hetero/comm/tuning.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero {

/// What a tuning run measures.
struct tune_options {
  /// Message sizes in bytes (per rank for scatter, gather and allgather), increasing.
  std::vector<std::size_t> sizes{8, 64, 512, 2048, 8192, 32768, 131072, 524288, 2097152, 8388608};
  /// Seconds one timing of one candidate should last (more calls for small messages).
  double seconds_per_timing = 0.004;
  /// Rounds of timings; in each round every candidate is timed once (alternating), and the
  /// median over rounds counts.
  int repetitions = 7;
  /// An algorithm replaces MPI's call only when it is at least this much faster (0.15: its
  /// median time over MPI's, round by round, is at most 0.85). On a 2-core node the ratio of
  /// MPI's call against itself wanders by about 10 % between runs (docs/results/comm.md), so a smaller
  /// margin lets a tuning run's noise pick an algorithm that is slower than MPI's call.
  double margin = 0.15;
  /// The collectives to tune (others keep their current rules).
  std::vector<collective> collectives{all_collectives.begin(), all_collectives.end()};
};

/// One measured candidate (for reports).
struct tune_sample {
  collective kind;
  std::size_t bytes;
  comm_algorithm algorithm;
  double seconds;       ///< median per call, slowest rank
  double ratio_to_mpi;  ///< median over rounds of its time over MPI's call's in the same round
};

namespace detail {

/// Times the candidates `calls[0..k)` (candidate 0 is MPI's call) in alternation: each of
/// `repetitions` rounds times every candidate once, about `target` seconds each, so a slow
/// phase of the machine (vCPU preemption: phases 2x apart) hits every candidate alike. Each
/// timing is the slowest rank's. Returns, per candidate, the median seconds per call and the
/// median over rounds of its time over MPI's in the same round (1 for MPI's call); the same
/// values on every rank.
struct candidate_times {
  std::vector<double> seconds;
  std::vector<double> ratio_to_mpi;
};

template <class Call>
candidate_times time_candidates(MPI_Comm comm, const std::vector<Call>& calls, double target, int repetitions) {
  using clock = std::chrono::steady_clock;
  const std::size_t k = calls.size();
  std::vector<int> counts(k);
  for (std::size_t c = 0; c < k; ++c) {
    for (int i = 0; i < 6; ++i) calls[c]();  // MPICH switches to its shared-memory path after 5 calls
    const auto start = clock::now();
    calls[c]();
    double once = std::chrono::duration<double>(clock::now() - start).count();
    HETERO_MPI_CHECK(MPI_Allreduce, MPI_IN_PLACE, &once, 1, MPI_DOUBLE, MPI_MAX, comm);
    counts[c] = static_cast<int>(std::clamp(target / std::max(once, 1e-8), 1.0, 4096.0));
  }
  const auto reps = static_cast<std::size_t>(repetitions);
  std::vector<double> t(reps * k);  // t[r k + c]: seconds per call of candidate c in round r
  for (std::size_t r = 0; r < reps; ++r)
    for (std::size_t c = 0; c < k; ++c) {
      const auto t0 = clock::now();
      for (int i = 0; i < counts[c]; ++i) calls[c]();
      t[r * k + c] = std::chrono::duration<double>(clock::now() - t0).count() / counts[c];
    }
  HETERO_MPI_CHECK(MPI_Allreduce, MPI_IN_PLACE, t.data(), mpi_count(t.size(), "tuning timings"), MPI_DOUBLE,
                   MPI_MAX, comm);
  const auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  candidate_times out;
  for (std::size_t c = 0; c < k; ++c) {
    std::vector<double> seconds, ratios;
    for (std::size_t r = 0; r < reps; ++r) {
      seconds.push_back(t[r * k + c]);
      ratios.push_back(t[r * k + c] / t[r * k]);
    }
    out.seconds.push_back(median(seconds));
    out.ratio_to_mpi.push_back(median(ratios));
  }
  return out;
}

/// Runs collective `c` once with `bytes` bytes (per rank where that applies) of doubles.
class tune_workload {
 public:
  tune_workload(communicator& comm, std::size_t bytes)
      : m_comm(comm),
        m_n(std::max<std::size_t>(1, bytes / sizeof(double))),
        m_p(static_cast<std::size_t>(comm.size())),
        m_send(m_n * m_p, 1.0),
        m_recv(m_n * m_p, 0.0),
        m_counts(m_p, m_n) {}

  void run(collective c, comm_algorithm a) {
    const auto algo = force_algorithm(a);
    switch (c) {
      case collective::barrier: m_comm.barrier(algo); break;
      case collective::broadcast: m_comm.broadcast(send_recv_buf(block(m_recv)), algo); break;
      case collective::scatter: m_comm.scatter(send_buf(m_send), recv_buf(block(m_recv)), algo); break;
      case collective::scatterv:
        m_comm.scatterv(send_buf(m_send), send_counts(m_counts), recv_buf(block(m_recv)), algo);
        break;
      case collective::gather: m_comm.gather(send_buf(block(m_send)), recv_buf(m_recv), algo); break;
      case collective::gatherv:
        m_comm.gatherv(send_buf(block(m_send)), recv_buf(m_recv), recv_counts(m_counts), algo);
        break;
      case collective::reduce:
        m_comm.reduce(send_buf(block(m_send)), recv_buf(block(m_recv)), op(ops::sum{}), algo);
        break;
      case collective::allgather: m_comm.allgather(send_buf(block(m_send)), recv_buf(m_recv), algo); break;
      case collective::allgatherv:
        m_comm.allgatherv(send_buf(block(m_send)), recv_buf(m_recv), recv_counts(m_counts), algo);
        break;
      case collective::allreduce:
        m_comm.allreduce(send_buf(block(m_send)), recv_buf(block(m_recv)), op(ops::sum{}), algo);
        break;
    }
  }

 private:
  std::span<double> block(std::vector<double>& v) { return {v.data(), m_n}; }

  communicator& m_comm;
  std::size_t m_n, m_p;
  std::vector<double> m_send, m_recv;
  std::vector<std::size_t> m_counts;
};

/// Whether `a` can carry `c` with `bytes` on `comm` (so that forcing it is worth timing).
inline bool can_run(const communicator& comm, collective c, comm_algorithm a, std::size_t bytes) {
  if (!implements(c, a) || a == comm_algorithm::automatic) return false;
  if (a == comm_algorithm::shm) {
    // gatherv and scatterv send the blocks that do not fit as messages: any size runs.
    if (c == collective::gatherv || c == collective::scatterv) return comm.has_shared_memory();
    const std::size_t published = c == collective::scatter ? bytes * static_cast<std::size_t>(comm.size()) : bytes;
    return comm.has_shared_memory() && published <= comm.options().shm_slot_bytes;
  }
  if (a == comm_algorithm::hierarchical) return comm.node_aware();
  // Timed on double sums, which dissemination refuses (it runs integer operations only): a
  // table that chose it would send every floating-point allreduce to MPI's call there.
  if (c == collective::allreduce && a == comm_algorithm::dissemination) return false;
  if (c == collective::allgather && a == comm_algorithm::recursive_doubling)
    return (comm.size() & (comm.size() - 1)) == 0;
  return true;
}

}  // namespace detail

namespace detail {

/// The winner at each size (`times`: each candidate's time in any unit common to the size,
/// MPI's call included): the fastest candidate if it beats MPI's call by the margin, else
/// MPI's call. A lone winner between two sizes won by the same other algorithm is noise when
/// that algorithm is within the margin there too: the neighbours' choice is kept, but never
/// one that does not beat MPI's call by the margin at that size.
inline std::vector<comm_algorithm> winners(const std::vector<std::map<comm_algorithm, double>>& times,
                                           double margin) {
  std::vector<comm_algorithm> best;
  for (const auto& at : times) {
    comm_algorithm w = comm_algorithm::mpi;
    double t = at.at(comm_algorithm::mpi) * (1.0 - margin);
    for (const auto& [a, seconds] : at)
      if (seconds < t) {
        w = a;
        t = seconds;
      }
    best.push_back(w);
  }
  for (std::size_t i = 1; i + 1 < best.size(); ++i) {
    const comm_algorithm around = best[i - 1];
    if (best[i + 1] != around || best[i] == around || !times[i].contains(around)) continue;
    const double mpi = times[i].at(comm_algorithm::mpi);
    if (around != comm_algorithm::mpi && times[i].at(around) > mpi * (1.0 - margin)) continue;
    if (times[i].at(around) <= times[i].at(best[i]) * (1.0 + margin)) best[i] = around;
  }
  return best;
}

/// For collectives keyed on one size (gatherv, scatterv: only the root knows every count): the
/// candidate with the smallest geometric mean of its time over MPI's, if that is below
/// 1 - margin and it is never more than `margin` slower than MPI's call at any size.
inline comm_algorithm overall_winner(const std::vector<std::map<comm_algorithm, double>>& times, double margin) {
  comm_algorithm w = comm_algorithm::mpi;
  double best = 1.0 - margin;
  for (const auto& [a, ignored] : times.front()) {
    double log_sum = 0, worst = 0;
    bool everywhere = true;
    for (const auto& at : times) {
      if (!at.contains(a)) {
        everywhere = false;
        break;
      }
      const double ratio = at.at(a) / at.at(comm_algorithm::mpi);
      log_sum += std::log(ratio);
      worst = std::max(worst, ratio);
    }
    const double mean = std::exp(log_sum / static_cast<double>(times.size()));
    if (everywhere && worst <= 1.0 + margin && mean < best) {
      w = a;
      best = mean;
    }
  }
  return w;
}

}  // namespace detail

/// Measures every algorithm of `options.collectives` at `options.sizes` on `comm` (collective;
/// about 8 seconds on 2 ranks of one node) and returns the resulting table, shaped for this
/// communicator. `samples`, when given, receives every measurement.
inline comm_tuning tune_collectives(communicator& comm, const tune_options& options = {},
                                    std::vector<tune_sample>* samples = nullptr) {
  HETERO_EXPECTS(!options.sizes.empty() && std::is_sorted(options.sizes.begin(), options.sizes.end()),
                 "tune_options::sizes must be increasing and not empty");
  HETERO_EXPECTS(options.repetitions >= 1 && options.seconds_per_timing > 0 && options.margin >= 0,
                 "tune_options: repetitions >= 1, seconds_per_timing > 0 and margin >= 0 are required");
  comm_tuning table = comm.tuning();
  table.set_shape(comm.size(), comm.nodes());
  for (collective c : options.collectives) {
    const std::vector<std::size_t> sizes = c == collective::barrier ? std::vector<std::size_t>{0} : options.sizes;
    // Per size: each candidate's time over MPI's call's (round by round, median), MPI = 1.
    std::vector<std::map<comm_algorithm, double>> times;
    for (std::size_t bytes : sizes) {
      detail::tune_workload work(comm, bytes);
      std::vector<comm_algorithm> candidates{comm_algorithm::mpi};
      for (comm_algorithm a : all_algorithms)
        if (a != comm_algorithm::mpi && detail::can_run(comm, c, a, bytes)) candidates.push_back(a);
      std::vector<std::function<void()>> calls;
      for (comm_algorithm a : candidates) calls.emplace_back([&work, c, a] { work.run(c, a); });
      const detail::candidate_times measured =
          detail::time_candidates(comm.mpi_comm(), calls, options.seconds_per_timing, options.repetitions);
      auto& at = times.emplace_back();
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        at[candidates[i]] = measured.ratio_to_mpi[i];
        if (samples) samples->push_back({c, bytes, candidates[i], measured.seconds[i], measured.ratio_to_mpi[i]});
      }
    }
    if (c == collective::gatherv || c == collective::scatterv) {
      table.set(c, {{comm_tuning::unbounded, detail::overall_winner(times, options.margin)}});
      continue;
    }
    // Consecutive sizes with the same winner form one rule; boundaries lie halfway (on a log
    // scale) between the measured sizes.
    const std::vector<comm_algorithm> best = detail::winners(times, options.margin);
    std::vector<tuning_rule> rules;
    for (std::size_t i = 0; i < best.size(); ++i) {
      if (i + 1 < best.size() && best[i + 1] == best[i]) continue;
      const std::size_t bound =
          i + 1 < best.size() ? static_cast<std::size_t>(
                                    std::sqrt(static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1])))
                              : comm_tuning::unbounded;
      rules.push_back({bound, best[i]});
    }
    table.set(c, std::move(rules));
  }
  return table;
}

}  // namespace hetero

#endif  // HETERO_TOOLS_COMM_TUNE_HPP
