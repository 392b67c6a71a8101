/// @file
/// The collectives on the shared-memory channel. Each is an operation object with `start()`
/// (publish this rank's data), `ready()` (what it reads has arrived) and `complete()` (read,
/// check, write results), run at once by `run_blocking` or queued as a non-blocking request.
/// Every rank folds reductions in rank order from the same published bytes, so results are
/// identical on all ranks and non-commutative operations are right.
#ifndef HETERO_COMM_DETAIL_SHM_COLLECTIVES_HPP
#define HETERO_COMM_DETAIL_SHM_COLLECTIVES_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetero/comm/algorithm.hpp"
#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/detail/shm_channel.hpp"
#include "hetero/comm/reduce_ops.hpp"
#include "hetero/core/error.hpp"

namespace hetero::detail {

/// memcpy for payloads that may be empty: an empty buffer's pointer may be null, which memcpy
/// must not be given even with a size of 0.
inline void copy_payload(void* dst, const void* src, std::size_t bytes) noexcept {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

/// Collective, operation, root and byte count in one word: a reader compares the writer's
/// word with its own to catch ranks that called different collectives or passed other counts.
constexpr std::uint64_t shm_signature(collective c, builtin_op op, int root, std::size_t bytes) noexcept {
  return (static_cast<std::uint64_t>(c) << 56) | (static_cast<std::uint64_t>(op) << 48) |
         (static_cast<std::uint64_t>((root + 1) & 0xffff) << 32) | (bytes & 0xffffffffULL);
}

inline std::string describe_signature(std::uint64_t s) {
  const auto c = static_cast<collective>(s >> 56);
  const int root = static_cast<int>((s >> 32) & 0xffff) - 1;
  static constexpr const char* op_names[] = {"", "sum", "prod", "min", "max"};
  const auto op = static_cast<std::size_t>((s >> 48) & 0xff);
  return message(to_string(c), " of ", s & 0xffffffffULL, " bytes", root >= 0 ? " from/to root " : "",
                 root >= 0 ? std::to_string(root) : "", op > 0 && op < 5 ? " with op " : "",
                 op < 5 ? op_names[op] : "?");
}

/// A signature that says "this rank rejected its arguments": no valid operation code (0xff), and
/// the length of its message in the payload (0xffffffff: the message did not fit).
inline constexpr std::uint64_t shm_rejection_mark = 0xffULL << 48;
inline constexpr std::uint64_t shm_reason_too_long = 0xffffffffULL;
constexpr bool is_rejection(std::uint64_t signature) noexcept { return ((signature >> 48) & 0xff) == 0xff; }

/// What a rank raises when another rank rejected its arguments (an `invalid_argument`; its own
/// type lets a reduction tell it from errors found by this rank).
class rejected_by_peer : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/// What the other ranks raise when rank `rank` rejected its arguments: "<collective>: rank R
/// (the root) rejected its arguments: <reason>", the reason without its own "<name>: " prefix.
inline std::string rejection_message(collective kind, int rank, bool root, std::string_view reason) {
  const std::size_t colon = reason.find(": ");
  if (colon != std::string_view::npos && colon > 0 &&
      reason.substr(0, colon).find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string_view::npos)
    reason.remove_prefix(colon + 2);
  return message(to_string(kind), ": rank ", rank, root ? " (the root)" : "", " rejected its arguments: ", reason);
}

/// What every shared-memory collective shares: its op number, signature and arrival cursor.
class shm_op : public shm_pending {
 public:
  shm_op(shm_channel& channel, collective kind, builtin_op reduction, int root, std::size_t bytes)
      : m_channel(channel),
        m_kind(kind),
        m_signature(shm_signature(kind, reduction, root, bytes)),
        m_op_root(root) {}

  /// The ranks whose data this rank still waits for (by default every rank that has not
  /// published; collectives that read the root's data only name the root).
  virtual void missing(std::vector<int>& out) const {
    for (int r = 0; r < m_channel.size(); ++r)
      if (r != m_channel.rank() && !m_channel.published(r, op)) out.push_back(r);
  }

 protected:
  // Every rank takes an op number, whether it publishes or not.
  void take_number() { op = m_channel.begin_op(); }
  std::byte* payload_area() { return m_channel.reserve(op, to_string(m_kind)); }
  void publish() noexcept { m_channel.publish(op, m_signature); }
  // Publishes this rank's rejection of its arguments (its message, if it fits) instead of data.
  void publish_rejection(std::string_view reason) {
    std::byte* area = payload_area();
    const bool fits = reason.size() <= m_channel.capacity();
    if (fits) copy_payload(area, reason.data(), reason.size());
    m_channel.publish(op, (static_cast<std::uint64_t>(m_kind) << 56) | shm_rejection_mark |
                              (fits ? reason.size() : shm_reason_too_long));
  }

  // True when every rank but this one has published (a cursor keeps the ranks seen).
  bool all_arrived() noexcept {
    while (m_next < m_channel.size() && (m_next == m_channel.rank() || m_channel.arrived(m_next, op))) ++m_next;
    return m_next == m_channel.size();
  }

  // Checks rank r's signature against `expected` (this rank's own by default).
  void check(int r) const { check(r, m_signature); }
  void check(int r, std::uint64_t expected) const {
    const std::uint64_t seen = m_channel.signature(r, op);
    if (seen != expected && is_rejection(seen)) {
      const std::uint64_t length = seen & 0xffffffffULL;
      const auto* text = reinterpret_cast<const char*>(m_channel.payload(r, op));
      raise<rejected_by_peer>(rejection_message(
          m_kind, r, r == m_op_root,
          length == shm_reason_too_long ? std::string_view("see its error") : std::string_view(text, length)));
    }
    if (seen != expected)
      raise<invalid_argument>(to_string(m_kind), ": rank ", r, " published a ", describe_signature(seen),
                              " where this rank (", m_channel.rank(), ") expected a ",
                              describe_signature(expected),
                              "; the ranks passed different counts, roots or operations, or called different "
                              "collectives");
  }
  void check_all() const {
    for (int r = 0; r < m_channel.size(); ++r)
      if (r != m_channel.rank()) check(r);
  }

  template <class T>
  const T* data_of(int r) const noexcept {
    return reinterpret_cast<const T*>(m_channel.payload(r, op));
  }

  shm_channel& m_channel;
  collective m_kind;
  std::uint64_t m_signature;
  int m_op_root;  // -1 for the collectives without a root
  int m_next = 0;
};

/// Runs a shared-memory operation to completion (after every queued one).
template <class Op>
void run_blocking(shm_channel& channel, Op& operation, std::string_view what) {
  operation.start();
  if (!channel.idle() || !operation.ready()) {
    const auto missing = [&](std::vector<int>& out) { operation.missing(out); };
    channel.wait_until([&] { return channel.idle() && operation.ready(); }, what, missing);
  }
  try {
    operation.complete();
  } catch (...) {
    channel.flag_failure(operation.op);
    channel.finish(operation.op);
    throw;
  }
  channel.finish(operation.op);
}

/// Makes the shared-memory operation `Op` of `args` and runs it to completion (`run_blocking`).
template <class Op, class... Args>
void run_shm(shm_channel& channel, std::string_view what, Args&&... args) {
  Op operation(channel, std::forward<Args>(args)...);
  run_blocking(channel, operation, what);
}

/// Starts a shared-memory operation and queues it; the caller keeps the pointer as its request.
template <class Op, class... Args>
std::shared_ptr<Op> start_queued(shm_channel& channel, Args&&... args) {
  auto operation = std::make_shared<Op>(channel, std::forward<Args>(args)...);
  operation->start();
  channel.enqueue(operation);
  return operation;
}

class shm_barrier final : public shm_op {
 public:
  explicit shm_barrier(shm_channel& channel) : shm_op(channel, collective::barrier, builtin_op::none, -1, 0) {}
  void start() {
    take_number();
    payload_area();
    publish();
  }
  bool ready() override { return all_arrived(); }
  void complete() override { check_all(); }
};

/// `argument_check::consistent`: the one op a blocking collective takes when its algorithm is
/// not the shared-memory one, so that every rank hears of any rank's rejection of its arguments
/// before data moves. Each rank that accepted publishes its (empty) slot, waits for every other
/// rank's slot and checks it: a rejection (`rejection`: that rank's message, published instead)
/// raises `rejected_by_peer` naming the rank, another root or collective raises a mismatch. A
/// rank that rejected only publishes and leaves: it cannot know which algorithm the others run
/// (where they run a shared-memory one, which reads the same op's slots, they raise there), so it
/// must not wait for slots that may never come; the op numbers stay in step either way.
class shm_root_status final : public shm_op {
 public:
  shm_root_status(shm_channel& channel, collective kind, int root, const std::string* rejection)
      : shm_op(channel, kind, builtin_op::none, root, 0), m_rejection(rejection) {}
  void start() {
    take_number();
    if (m_rejection) {
      m_channel.flag_failure(op);
      publish_rejection(*m_rejection);
    } else {
      payload_area();
      publish();
    }
  }
  bool ready() override { return m_rejection || all_arrived(); }
  void complete() override {
    if (!m_rejection) check_all();
  }
  void missing(std::vector<int>& out) const override {
    if (!m_rejection) shm_op::missing(out);
  }

 private:
  const std::string* m_rejection;
};

/// The root's `n` elements to every rank. `verdicts`: the root learns at its next call whether
/// a rank raised here (`shm_channel::settle`); false where the arguments were agreed on before.
template <class T>
class shm_broadcast final : public shm_op {
 public:
  shm_broadcast(shm_channel& channel, T* data, std::size_t n, int root, bool verdicts = true)
      : shm_op(channel, collective::broadcast, builtin_op::none, root, n * sizeof(T)),
        m_data(data),
        m_n(n),
        m_root(root),
        m_verdicts(verdicts) {}
  void start() {
    take_number();
    if (m_channel.rank() != m_root) return;
    copy_payload(payload_area(), m_data, m_n * sizeof(T));
    publish();
    if (m_verdicts) m_channel.expect_verdicts(op, "broadcast");
  }
  bool ready() override { return m_channel.rank() == m_root || m_channel.arrived(m_root, op); }
  void missing(std::vector<int>& out) const override {
    if (m_channel.rank() != m_root && !m_channel.published(m_root, op)) out.push_back(m_root);
  }
  void complete() override {
    if (m_channel.rank() == m_root) return;
    check(m_root);
    host_ops::copy(m_data, data_of<T>(m_root), m_n);
  }

 private:
  T* m_data;
  std::size_t m_n;
  int m_root;
  bool m_verdicts;
};

/// What reduce and gather share (and allreduce and allgather, root -1): the root, or every rank
/// without one, reads every rank's slot; with `root_status` the other ranks wait for the root's
/// slot and check it (its rejection, or another count or root, raises there too).
class shm_rooted_op : public shm_op {
 public:
  shm_rooted_op(shm_channel& channel, collective kind, builtin_op reduction, int root, std::size_t bytes,
                bool root_status)
      : shm_op(channel, kind, reduction, root, bytes), m_root(root), m_root_status(root_status && root >= 0) {}
  bool ready() override {
    if (reads()) return all_arrived();
    return !m_root_status || m_channel.arrived(m_root, op);
  }
  void missing(std::vector<int>& out) const override {
    if (reads()) return shm_op::missing(out);
    if (m_root_status && !m_channel.published(m_root, op)) out.push_back(m_root);
  }

 protected:
  bool reads() const noexcept { return m_root < 0 || m_root == m_channel.rank(); }
  /// A rank that does not read checks the root's status (if it waited for it) and is done: true.
  bool only_root_status() const {
    if (reads()) return false;
    if (m_root_status) check(m_root);
    return true;
  }

  int m_root;
  bool m_root_status;
};

/// reduce (root >= 0) and allreduce (root < 0): every rank publishes, the readers fold.
template <class T, class R>
class shm_reduce final : public shm_rooted_op {
 public:
  /// `root_status`: the other ranks of a reduce wait for the root's slot and check it (its
  /// rejection or another signature raises there too).
  shm_reduce(shm_channel& channel, const T* send, T* recv, std::size_t n, const R& reduction, int root,
             bool root_status = false)
      : shm_rooted_op(channel, root < 0 ? collective::allreduce : collective::reduce, R::builtin, root,
                      n * sizeof(T), root_status),
        m_send(send),
        m_recv(recv),
        m_n(n),
        m_reduction(reduction) {}
  void start() {
    take_number();
    copy_payload(payload_area(), m_send, m_n * sizeof(T));
    publish();
  }
  void complete() override {
    if (only_root_status()) return;
    check_all();
    const int p = m_channel.size();
    if (p == 2) {
      const T* x0 = data_of<T>(0);
      const T* x1 = data_of<T>(1);
      for (std::size_t i = 0; i < m_n; ++i) m_recv[i] = m_reduction.on_host(x0[i], x1[i]);
      return;
    }
    host_ops::copy(m_recv, data_of<T>(0), m_n);
    for (int r = 1; r < p; ++r) host_ops::combine(m_recv, data_of<T>(r), m_n, m_reduction, false);
  }

 private:
  const T* m_send;
  T* m_recv;
  std::size_t m_n;
  R m_reduction;
};

/// gather (root >= 0) and allgather (root < 0) of `n` elements per rank; `send` may be null
/// (in place: this rank's block already sits in recv).
template <class T>
class shm_gather final : public shm_rooted_op {
 public:
  /// `root_status`: the root of a gather publishes its (empty) slot first, and the others wait
  /// for it and check it: its rejection, or another count or root, raises there too.
  shm_gather(shm_channel& channel, const T* send, T* recv, std::size_t n, int root, bool root_status = false)
      : shm_rooted_op(channel, root < 0 ? collective::allgather : collective::gather, builtin_op::none, root,
                      n * sizeof(T), root_status),
        m_send(send),
        m_recv(recv),
        m_n(n) {}
  void start() {
    take_number();
    const int me = m_channel.rank();
    const T* mine = m_send ? m_send : m_recv + static_cast<std::size_t>(me) * m_n;
    if (m_root != me) copy_payload(payload_area(), mine, m_n * sizeof(T));
    if (m_root != me || m_root_status) {
      if (m_root == me) payload_area();
      publish();
    }
    if (reads() && m_send) host_ops::copy(m_recv + static_cast<std::size_t>(me) * m_n, m_send, m_n);
  }
  void complete() override {
    if (only_root_status()) return;
    for (int r = 0; r < m_channel.size(); ++r) {
      if (r == m_channel.rank() || r == m_root) continue;
      check(r);
      host_ops::copy(m_recv + static_cast<std::size_t>(r) * m_n, data_of<T>(r), m_n);
    }
  }

 private:
  const T* m_send;
  T* m_recv;
  std::size_t m_n;
};

/// allgatherv: rank r's block of counts[r] elements lands at recv + displs[r].
template <class T>
class shm_allgatherv final : public shm_op {
 public:
  shm_allgatherv(shm_channel& channel, const T* send, T* recv, std::span<const std::size_t> counts,
                 std::span<const std::size_t> displs)
      : shm_op(channel, collective::allgatherv, builtin_op::none, -1,
               counts[static_cast<std::size_t>(channel.rank())] * sizeof(T)),
        m_send(send),
        m_recv(recv),
        m_counts(counts),
        m_displs(displs) {}
  void start() {
    take_number();
    const auto me = static_cast<std::size_t>(m_channel.rank());
    const T* mine = m_send ? m_send : m_recv + m_displs[me];
    copy_payload(payload_area(), mine, m_counts[me] * sizeof(T));  // mine may be null
    publish();
    if (m_send) host_ops::copy(m_recv + m_displs[me], m_send, m_counts[me]);
  }
  bool ready() override { return all_arrived(); }
  void complete() override {
    for (int r = 0; r < m_channel.size(); ++r) {
      if (r == m_channel.rank()) continue;
      const auto i = static_cast<std::size_t>(r);
      check(r, shm_signature(collective::allgatherv, builtin_op::none, -1, m_counts[i] * sizeof(T)));
      host_ops::copy(m_recv + m_displs[i], data_of<T>(r), m_counts[i]);
    }
  }

 private:
  const T* m_send;
  T* m_recv;
  std::span<const std::size_t> m_counts;
  std::span<const std::size_t> m_displs;
};

/// scatter: the root publishes every block (p * n elements); `recv` may be null at the root
/// (in place: its block stays in send).
template <class T>
class shm_scatter final : public shm_op {
 public:
  shm_scatter(shm_channel& channel, const T* send, T* recv, std::size_t n, int root)
      : shm_op(channel, collective::scatter, builtin_op::none, root, n * sizeof(T)),
        m_send(send),
        m_recv(recv),
        m_n(n),
        m_root(root) {}
  void start() {
    take_number();
    if (m_channel.rank() != m_root) return;
    copy_payload(payload_area(), m_send, static_cast<std::size_t>(m_channel.size()) * m_n * sizeof(T));
    publish();
    m_channel.expect_verdicts(op, "scatter");
    if (m_recv) host_ops::copy(m_recv, m_send + static_cast<std::size_t>(m_root) * m_n, m_n);
  }
  bool ready() override { return m_channel.rank() == m_root || m_channel.arrived(m_root, op); }
  void missing(std::vector<int>& out) const override {
    if (m_channel.rank() != m_root && !m_channel.published(m_root, op)) out.push_back(m_root);
  }
  void complete() override {
    if (m_channel.rank() == m_root) return;
    check(m_root);
    host_ops::copy(m_recv, data_of<T>(m_root) + static_cast<std::size_t>(m_channel.rank()) * m_n, m_n);
  }

 private:
  const T* m_send;
  T* m_recv;
  std::size_t m_n;
  int m_root;
};

/// gatherv: ranks whose block fits a slot (`counts[r] * sizeof(T) <= limit`, decided alike by
/// the sender and the root) publish it; larger blocks travel as messages (see gatherv.hpp).
template <class T>
class shm_gatherv final : public shm_op {
 public:
  /// `root_status`: as for `shm_gather` (the root's slot says nothing of counts, which differ).
  shm_gatherv(shm_channel& channel, const T* send, std::size_t send_n, T* recv,
              std::span<const std::size_t> counts, std::span<const std::size_t> displs, int root,
              bool root_status = false)
      : shm_op(channel, collective::gatherv, builtin_op::none, root, send_n * sizeof(T)),
        m_send(send),
        m_send_n(send_n),
        m_recv(recv),
        m_counts(counts),
        m_displs(displs),
        m_root(root),
        m_root_status(root_status) {}
  void start() {
    take_number();
    const int me = m_channel.rank();
    if (me != m_root && fits(m_send_n)) {
      copy_payload(payload_area(), m_send, m_send_n * sizeof(T));
      publish();
    }
    if (me == m_root && m_root_status) {
      payload_area();
      m_channel.publish(op, status_signature());
    }
    if (me == m_root && m_send) host_ops::copy(m_recv + m_displs[static_cast<std::size_t>(me)], m_send, m_send_n);
  }
  bool ready() override {
    if (m_channel.rank() != m_root) return !m_root_status || m_channel.arrived(m_root, op);
    while (m_next < m_channel.size() && (m_next == m_root || !fits(m_counts[static_cast<std::size_t>(m_next)]) ||
                                         m_channel.arrived(m_next, op)))
      ++m_next;
    return m_next == m_channel.size();
  }
  void complete() override {
    if (m_channel.rank() != m_root) {
      if (m_root_status) check(m_root, status_signature());
      return;
    }
    for (int r = 0; r < m_channel.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r == m_root || !fits(m_counts[i])) continue;
      check(r, shm_signature(collective::gatherv, builtin_op::none, m_root, m_counts[i] * sizeof(T)));
      host_ops::copy(m_recv + m_displs[i], data_of<T>(r), m_counts[i]);
    }
  }
  /// Whether a block of `n` elements goes through shared memory.
  [[nodiscard]] bool fits(std::size_t n) const noexcept { return n * sizeof(T) <= m_channel.capacity(); }

 private:
  std::uint64_t status_signature() const noexcept {
    return shm_signature(collective::gatherv, builtin_op::none, m_root, 0);
  }

  const T* m_send;
  std::size_t m_send_n;
  T* m_recv;
  std::span<const std::size_t> m_counts, m_displs;
  int m_root;
  bool m_root_status;
};

/// Raises the error of a scatterv whose root sends `sent` elements to rank `rank`, which
/// expects `expected` (on the window's path and inline with the agreement alike).
[[noreturn]] inline void raise_scatterv_count(std::uint64_t sent, std::size_t rank, std::size_t expected) {
  raise<invalid_argument>("scatterv: the root sends ", sent, " element(s) to rank ", rank, " where it expects ",
                          expected, "; send_counts and recv_count disagree");
}

/// scatterv: the root's slot holds one region per rank (a 32-byte header with the block's byte
/// count, then the block); blocks that do not fit their region travel as messages (see
/// scatterv.hpp). Each rank checks its region's count against the one it expects.
template <class T>
class shm_scatterv final : public shm_op {
 public:
  /// `root_status`: a rank whose block travels as a message also waits for the root's slot and
  /// checks it (its rejection raises there too).
  shm_scatterv(shm_channel& channel, const T* send, std::span<const std::size_t> counts,
               std::span<const std::size_t> displs, T* recv, std::size_t recv_n, int root,
               bool root_status = false)
      : shm_op(channel, collective::scatterv, builtin_op::none, root, 0),
        m_send(send),
        m_counts(counts),
        m_displs(displs),
        m_recv(recv),
        m_recv_n(recv_n),
        m_root(root),
        m_root_status(root_status) {}
  /// Bytes of one rank's region, header included (a multiple of 32).
  [[nodiscard]] std::size_t region() const noexcept {
    return m_channel.capacity() / static_cast<std::size_t>(m_channel.size()) / 32 * 32;
  }
  /// Whether a block of `n` elements goes through shared memory.
  [[nodiscard]] bool fits(std::size_t n) const noexcept {
    return region() >= 32 && n * sizeof(T) <= region() - 32;
  }
  void start() {
    take_number();
    const int me = m_channel.rank();
    if (me != m_root) return;
    std::byte* area = payload_area();
    for (int r = 0; r < m_channel.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r == m_root || region() < 32) continue;
      // Every rank's header, also where its block travels as a message: a rank that expects
      // another count then sees this call's count, never an earlier call's.
      const std::uint64_t bytes = m_counts[i] * sizeof(T);
      std::memcpy(area + i * region(), &bytes, sizeof bytes);
      if (fits(m_counts[i])) copy_payload(area + i * region() + 32, m_send + m_displs[i], bytes);
    }
    publish();
    m_channel.expect_verdicts(op, "scatterv");
    if (m_recv) host_ops::copy(m_recv, m_send + m_displs[static_cast<std::size_t>(me)], m_recv_n);
  }
  bool ready() override {
    if (m_channel.rank() == m_root || (!fits(m_recv_n) && !m_root_status)) return true;
    return m_channel.arrived(m_root, op);
  }
  void missing(std::vector<int>& out) const override {
    if (m_channel.rank() != m_root && !m_channel.published(m_root, op)) out.push_back(m_root);
  }
  void complete() override {
    const int me = m_channel.rank();
    if (me == m_root) return;
    if (!fits(m_recv_n)) {
      if (!m_root_status) return;
      check(m_root);
      // This rank's block comes as a message. Where the root's count fits the region instead,
      // none comes: say so now rather than wait for it. A message of another count is found by
      // its receive (p2p_batch).
      if (region() >= 32 && fits(sent_count())) raise_mismatch();
      return;
    }
    check(m_root);
    if (sent_count() != m_recv_n) raise_mismatch();
    host_ops::copy(m_recv, reinterpret_cast<const T*>(my_region() + 32), m_recv_n);
  }

  /// The count the root sent this rank, once `complete()` raised that it differs from this
  /// rank's. Where it does not fit the region, its message is still on its way.
  [[nodiscard]] std::optional<std::size_t> mismatched_count() const noexcept { return m_mismatched; }

 private:
  [[nodiscard]] const std::byte* my_region() const {
    return m_channel.payload(m_root, op) + static_cast<std::size_t>(m_channel.rank()) * region();
  }
  [[nodiscard]] std::size_t sent_count() const {
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, my_region(), sizeof bytes);
    return static_cast<std::size_t>(bytes / sizeof(T));
  }
  [[noreturn]] void raise_mismatch() {
    m_mismatched = sent_count();
    raise_scatterv_count(*m_mismatched, static_cast<std::size_t>(m_channel.rank()), m_recv_n);
  }

  const T* m_send;
  std::span<const std::size_t> m_counts, m_displs;
  T* m_recv;
  std::size_t m_recv_n;
  int m_root;
  bool m_root_status;
  std::optional<std::size_t> m_mismatched;
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_SHM_COLLECTIVES_HPP
