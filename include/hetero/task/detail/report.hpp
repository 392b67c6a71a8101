/// @file
/// The text of a `hetero::deadlock_error`: the nodes a rank still waits for, the events they
/// use, and the notifications that did not arrive.
#ifndef HETERO_TASK_DETAIL_REPORT_HPP
#define HETERO_TASK_DETAIL_REPORT_HPP

#include <cstddef>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hetero/core/wait_timeout.hpp"
#include "hetero/task/detail/node.hpp"
#include "hetero/task/detail/remote.hpp"

namespace hetero::detail {

/// Collects the pending nodes of one rank into a readable report.
class pending_report {
 public:
  static constexpr std::size_t shown_at_most = 24;

  pending_report(int rank, remote_channel& channel) : m_rank(rank), m_channel(channel) {}

  /// Adds `n`, which has not finished.
  void add(const node& n) {
    ++m_count;
    if (m_lines.size() < shown_at_most) m_lines.push_back(describe(n));
  }

  /// "rank 1: 2 node(s) pending (...):\n  task ..." or "rank 0: no pending task ...".
  [[nodiscard]] std::string text(bool in_barrier) const {
    std::ostringstream out;
    out << "rank " << m_rank << ": ";
    if (m_count == 0) {
      out << "no pending task"
          << (in_barrier ? " (its part of the graph finished; it waits in wait() for the other ranks)" : "")
          << '\n';
      return out.str();
    }
    out << m_count << " node(s) pending, none running or ready:\n";
    for (const auto& line : m_lines) out << "  " << line << '\n';
    if (m_count > m_lines.size()) out << "  ... and " << m_count - m_lines.size() << " more\n";
    return out.str();
  }

 private:
  [[nodiscard]] std::string describe(const node& n) const {
    std::ostringstream out;
    const auto label = [&] {
      return n.extra.label.empty() ? std::string("(no label)") : "'" + n.extra.label + "'";
    };
    switch (n.kind) {
      case node_kind::cpu:
      case node_kind::device: {
        out << (n.kind == node_kind::device ? "device task #" : "task #") << n.sequence << ' ' << label();
        append_uses(out, n);
        const int pending = n.pending.load(std::memory_order_relaxed);
        if (pending == 0 && n.kind == node_kind::cpu) {
          // Not finished and nothing to wait for: queued (a rank told by another's report), or
          // its body ran and the inner tasks of its subgraph or composed recording have not all
          // finished (they depend only on one another, so they are never what a stuck graph
          // waits for: they are not listed one by one).
          out << " has no unfinished dependency: it is queued, or its body ran and the inner tasks of its "
                 "subgraph "
                 "or composed recording have not all finished";
        } else {
          out << " waits for " << pending << " unfinished dependenc" << (pending == 1 ? "y" : "ies");
        }
        break;
      }
      case node_kind::receive: {
        const receive_info& r = *n.extra.receive;
        const event_state* e = n.extra.uses.empty() ? nullptr : n.extra.uses.front().event;
        out << "notification of " << (e ? e->name() : std::string("?")) << " (write #" << r.key.generation;
        if (r.key.plan != 0) out << " of recording " << r.key.plan << ", replay " << r.key.run;
        out << " by task '" << r.writer_label << "' on rank(s) " << r.senders.to_string()
            << "): " << m_channel.received(r.key) << " of " << r.expected << " message(s) received";
        break;
      }
      case node_kind::external:
        if (n.extra.data.kind == data_node_kind::send_done || n.extra.data.kind == data_node_kind::receive_done) {
          out << "tile move " << label() << ": not complete";
          if (n.pending.load(std::memory_order_relaxed) > 1) out << " (not started)";
          break;
        }
        out << "adopted operation " << label();
        append_uses(out, n);
        out << ": not complete";
        break;
      case node_kind::marker: out << "wait(event) of the calling thread"; break;
      case node_kind::transfer: {
        const int pending = n.pending.load(std::memory_order_relaxed);
        out << "start of tile move " << label() << " waits for " << pending << " unfinished dependenc"
            << (pending == 1 ? "y" : "ies");
        break;
      }
    }
    return out.str();
  }

  static void append_uses(std::ostringstream& out, const node& n) {
    const auto list = [&](event_access mode, const char* name) {
      bool first = true;
      for (const event_use& u : n.extra.uses) {
        if (u.mode != mode) continue;
        out << (first ? std::string(" ") + name + "(" : std::string(", ")) << u.event->name();
        first = false;
      }
      if (!first) out << ')';
    };
    list(event_access::read, "in");
    list(event_access::write, "out");
  }

  int m_rank;
  remote_channel& m_channel;
  std::size_t m_count = 0;
  std::vector<std::string> m_lines;
};

/// What the text of a task graph's `deadlock_error` says after the wait: the likely causes,
/// and the knob that set the limit (`inherited`: the process-wide wait timeout, else the
/// graph's own `task_options::no_progress_timeout`).
inline std::string no_progress_advice(bool inherited) {
  std::string text =
      "; a rank waits for a notification nobody sends, a rank left the graph (returned before declaring or "
      "waiting for its part), is busy elsewhere for longer than the limit, or the ranks declared different graphs";
  if (inherited)
    return text + wait_timeout_advice() +
           " (the graph's limit is task_options::no_progress_timeout, which inherits this wait timeout unless it "
           "is given)";
  return text + wait_timeout_advice("task_options::no_progress_timeout") +
         " (without it the graph would inherit hetero's wait timeout: HETERO_WAIT_TIMEOUT, "
         "runtime_options::wait_timeout or hetero::set_wait_timeout)";
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_REPORT_HPP
