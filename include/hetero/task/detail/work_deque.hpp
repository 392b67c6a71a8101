/// @file
/// A work-stealing deque (Chase and Lev 2005, in the C11 form of Lê, Pop, Cohen and Zappa
/// Nardelli, PPoPP 2013). The owner pushes and pops at the bottom (newest first, keeping its
/// caches warm); thieves take the oldest item from the top with one CAS.
///
/// Where the published algorithm uses standalone fences, this version uses seq_cst operations
/// on `m_top` and `m_bottom` instead: equivalent on x86 (one locked instruction per push or pop
/// either way) and visible to ThreadSanitizer, which does not model fences. The seq_cst store
/// of `m_bottom` in `push` is also the "work is visible" half of the idle event's Dekker
/// handshake (see idle.hpp).
#ifndef HETERO_TASK_DETAIL_WORK_DEQUE_HPP
#define HETERO_TASK_DETAIL_WORK_DEQUE_HPP

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace hetero::detail {

/// A Chase-Lev deque of pointers. `push`, `push_bulk` and `pop` only by the owning thread;
/// `steal` and `size_hint` by any thread. Grows without bound (the task window bounds it).
template <class T>
class work_deque {
  static_assert(std::is_pointer_v<T>, "hetero: work_deque holds pointers");

  struct ring {
    explicit ring(std::int64_t capacity)
        : mask(capacity - 1), slots(std::make_unique<std::atomic<T>[]>(static_cast<std::size_t>(capacity))) {}
    [[nodiscard]] std::int64_t capacity() const noexcept { return mask + 1; }
    void put(std::int64_t i, T x) noexcept {
      slots[static_cast<std::size_t>(i & mask)].store(x, std::memory_order_relaxed);
    }
    [[nodiscard]] T get(std::int64_t i) const noexcept {
      return slots[static_cast<std::size_t>(i & mask)].load(std::memory_order_relaxed);
    }
    std::int64_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };

 public:
  explicit work_deque(std::int64_t capacity = 256) {
    std::int64_t c = 8;
    while (c < capacity) c *= 2;
    m_rings.push_back(std::make_unique<ring>(c));
    m_ring.store(m_rings.back().get(), std::memory_order_relaxed);
  }
  work_deque(const work_deque&) = delete;
  work_deque& operator=(const work_deque&) = delete;

  /// Owner: adds `x` at the bottom.
  void push(T x) {
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    ring* r = m_ring.load(std::memory_order_relaxed);
    if (b - t > r->capacity() - 1) r = grow(r, t, b, 1);
    r->put(b, x);
    m_bottom.store(b + 1, std::memory_order_seq_cst);
  }

  /// Owner: adds all of `xs` at the bottom with one publication (the last one is popped first).
  void push_bulk(std::span<T const> xs) {
    if (xs.empty()) return;
    const auto n = static_cast<std::int64_t>(xs.size());
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    ring* r = m_ring.load(std::memory_order_relaxed);
    if (b - t + n > r->capacity()) r = grow(r, t, b, n);
    for (std::int64_t i = 0; i < n; ++i) r->put(b + i, xs[static_cast<std::size_t>(i)]);
    m_bottom.store(b + n, std::memory_order_seq_cst);
  }

  /// Owner: takes the newest item, or nullptr when empty.
  T pop() {
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed) - 1;
    ring* r = m_ring.load(std::memory_order_relaxed);
    m_bottom.store(b, std::memory_order_seq_cst);  // store-load order with the load of top
    std::int64_t t = m_top.load(std::memory_order_seq_cst);
    if (t > b) {  // empty
      m_bottom.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T x = r->get(b);
    if (t == b) {  // the last item: race the thieves for it
      if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = nullptr;
      m_bottom.store(b + 1, std::memory_order_relaxed);
    }
    return x;
  }

  /// Any thread: takes the oldest item, or nullptr when empty or when another thief won.
  T steal() {
    std::int64_t t = m_top.load(std::memory_order_seq_cst);
    const std::int64_t b = m_bottom.load(std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    ring* r = m_ring.load(std::memory_order_acquire);
    T x = r->get(t);
    if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return nullptr;
    return x;
  }

  /// Any thread: an estimate of the number of items (exact when nobody else is active).
  [[nodiscard]] std::int64_t size_hint() const noexcept {
    const std::int64_t b = m_bottom.load(std::memory_order_seq_cst);
    const std::int64_t t = m_top.load(std::memory_order_seq_cst);
    return b > t ? b - t : 0;
  }

 private:
  // Owner only. Old rings stay alive until the deque dies: a thief may still read one.
  ring* grow(ring* old, std::int64_t t, std::int64_t b, std::int64_t extra) {
    std::int64_t capacity = old->capacity() * 2;
    while (capacity < b - t + extra) capacity *= 2;
    auto bigger = std::make_unique<ring>(capacity);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    ring* r = bigger.get();
    m_rings.push_back(std::move(bigger));
    m_ring.store(r, std::memory_order_release);
    return r;
  }

  alignas(64) std::atomic<std::int64_t> m_top{0};
  alignas(64) std::atomic<std::int64_t> m_bottom{0};
  std::atomic<ring*> m_ring{nullptr};
  std::vector<std::unique_ptr<ring>> m_rings;  // owner only
};

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_WORK_DEQUE_HPP
