/// @file
/// The lock-free ring through which one application thread hands its wait transitions to the
/// monitor's reader: single producer, single consumer, fixed capacity, no allocation after
/// construction (each thread writes only its own ring, the reader only reads).
#ifndef HETERO_POWER_DETAIL_EVENT_RING_HPP
#define HETERO_POWER_DETAIL_EVENT_RING_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "hetero/core/error.hpp"

namespace hetero::power::detail {

/// What happened to one thread.
enum class activity_event_type : std::uint32_t {
  attach,      ///< the thread joined the rank's tracked threads
  detach,      ///< the thread left (exited, or its entry was taken after the monitor was destroyed)
  wait_begin,  ///< the thread started waiting (outermost wait scope)
  wait_end,    ///< the thread stopped waiting
  phase_mark   ///< the application marked the end of a phase
};

/// One transition of one thread, at `time_ns` on the monitor's clock (steady clock, ns since the
/// monitor's epoch).
struct activity_event {
  std::int64_t time_ns;
  activity_event_type type;
  std::uint32_t kind;  ///< the `hetero::wait_kind` of a wait_begin
};

/// A single-producer single-consumer ring of events. The producer publishes with a release
/// store of its head; the consumer reads up to an acquired head and frees with a release store
/// of its tail, which the producer reads only when its cached copy says the ring is full.
class event_ring {
 public:
  /// A ring of `capacity` events, rounded up to a power of two.
  explicit event_ring(std::size_t capacity) {
    HETERO_EXPECTS(capacity >= 2 && capacity <= (std::size_t{1} << 30), "event ring capacity ", capacity,
                   "; allowed: 2 to 2^30 events");
    std::size_t size = 2;
    while (size < capacity) size *= 2;
    // Default-initialised (not zeroed): pages are touched only as events are written.
    m_events.reset(new activity_event[size]);
    m_mask = size - 1;
  }

  /// Capacity in events.
  [[nodiscard]] std::size_t capacity() const noexcept { return m_mask + 1; }

  /// Producer: appends `e`; false (and nothing written) when the ring is full.
  bool push(const activity_event& e) noexcept {
    const std::uint64_t head = m_head.load(std::memory_order_relaxed);
    if (head - m_cached_tail > m_mask) {
      m_cached_tail = m_tail.load(std::memory_order_acquire);
      if (head - m_cached_tail > m_mask) return false;
    }
    m_events[head & m_mask] = e;
    m_head.store(head + 1, std::memory_order_release);
    return true;
  }

  /// Consumer: events published and not yet consumed.
  [[nodiscard]] std::uint64_t available() const noexcept {
    return m_head.load(std::memory_order_acquire) - m_tail.load(std::memory_order_relaxed);
  }
  /// Consumer: the `i`-th unconsumed event (i < available()).
  [[nodiscard]] const activity_event& peek(std::uint64_t i) const noexcept {
    return m_events[(m_tail.load(std::memory_order_relaxed) + i) & m_mask];
  }
  /// Consumer: frees the `n` oldest events.
  void pop(std::uint64_t n) noexcept {
    m_tail.store(m_tail.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  /// Empties the ring; only while no producer uses it (a slot being handed to a new thread).
  void reset() noexcept {
    m_head.store(0, std::memory_order_relaxed);
    m_tail.store(0, std::memory_order_relaxed);
    m_cached_tail = 0;
  }

 private:
  std::unique_ptr<activity_event[]> m_events;
  std::size_t m_mask = 0;
  // Producer and consumer indices on separate cache lines, so that neither side's stores
  // invalidate the line the other side polls.
  alignas(64) std::atomic<std::uint64_t> m_head{0};
  std::uint64_t m_cached_tail = 0;  // producer's last view of m_tail
  alignas(64) std::atomic<std::uint64_t> m_tail{0};
};

}  // namespace hetero::power::detail

#endif  // HETERO_POWER_DETAIL_EVENT_RING_HPP
