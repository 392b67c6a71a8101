/// @file
/// Element bodies that may throw, on a side that runs on host threads. An exception must not
/// leave an OpenMP region (libgomp calls std::terminate) nor unwind through a Kokkos launch, so
/// on such a side the body is wrapped: the kernel runs over blocks of elements, each block's
/// exception is caught inside the kernel, the first one is kept, the part's blocks not yet
/// started are skipped, and the part rethrows it on its own thread after its fence (`run_sides`
/// then hands it to the caller once both parts are done). GPU sides are never wrapped: device
/// code cannot throw. Nor are `noexcept` functors: they cannot throw.
#ifndef HETERO_EXEC_DETAIL_GUARDED_FUNCTOR_HPP
#define HETERO_EXEC_DETAIL_GUARDED_FUNCTOR_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hetero/core/detail/kokkos_compat.hpp"
#include "hetero/exec/detail/running_split.hpp"
#include "hetero/exec/detail/view_pack.hpp"
#include "hetero/exec/spaces.hpp"

namespace hetero::detail {

/// True for an execution space whose kernels run on host threads (OpenMP, Threads, Serial,
/// HPX): it can address host memory, so its bodies are host code and may throw. False for
/// CUDA, HIP, SYCL and OpenMPTarget.
template <class Space>
inline constexpr bool runs_on_host_threads = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

/// The first exception thrown by the elements of one side of a loop. Many threads may catch at
/// once; the first to set `m_failed` stores its exception, the others drop theirs. On a cache
/// line of its own: it lives in the launching thread's frame, which that thread writes while
/// the part runs, and every block of every thread loads its flag.
class alignas(64) first_exception {
 public:
  first_exception() = default;
  first_exception(const first_exception&) = delete;
  first_exception& operator=(const first_exception&) = delete;

  /// True once an element has thrown: the remaining blocks (chunks) are skipped. A relaxed load,
  /// one per block: a late skip only costs a block that would have run anyway.
  [[nodiscard]] bool failed() const noexcept { return m_failed.load(std::memory_order_relaxed); }

  /// Keeps the exception being handled if it is the first; call inside a catch block.
  void capture() noexcept {
    if (m_failed.exchange(true, std::memory_order_relaxed)) return;
    m_error = std::current_exception();
    // Publishes m_error without relying on the OpenMP barrier that ends the region, which a
    // thread sanitizer cannot see (libgomp is not instrumented).
    m_stored.store(true, std::memory_order_release);
  }

  /// Rethrows the kept exception, if any; call after the kernel has finished (fenced).
  void rethrow_if_failed() const {
    if (m_stored.load(std::memory_order_acquire)) std::rethrow_exception(m_error);
  }

 private:
  std::atomic<bool> m_failed{false};
  std::atomic<bool> m_stored{false};
  std::exception_ptr m_error;
};

/// How a guarded part is cut into blocks: the kernel runs over block indices, each block runs
/// its elements in a plain loop inside one try block, and the flag is loaded once per block. A
/// try block and an atomic load in the element loop stop it from vectorising (a triad of 1e4 to
/// 1e5 elements took 1.4 to 1.7 times as long with a guard per element, bench_exec_overhead's
/// guard_paired/split); per block the loop inside vectorises like Kokkos' own.
struct block_plan {
  std::int64_t begin = 0, end = 0;  ///< the part's elements
  std::int64_t block = 1;           ///< elements per block (the last may have fewer)
  std::int64_t count = 0;           ///< blocks
  int chunk_blocks = 0;             ///< blocks per thread for a static schedule; 0: Kokkos' default

  /// The most elements a thread runs after it last loaded the flag: what may still run after
  /// another element threw. Large enough that a block's fixed cost (the flag, the loop's alias
  /// check and remainder) is lost in its elements: with 4096, a triad of 1e4 elements on two
  /// threads (two blocks each) took 1.03-1.04 times the unguarded time, with 16384 (one block)
  /// 1.01-1.02 (guard_paired/one_space).
  static constexpr std::int64_t max_block = 16384;
  /// Blocks longer than this are a multiple of it.
  static constexpr std::int64_t line = 16;
};

/// Blocks of [begin, end) for a part on `threads` threads: blocks of at most `max_block`
/// elements, as many per thread, all of one length but the last, so that Kokkos' static schedule
/// (contiguous blocks per thread) stays balanced. `chunks` > 1: the part is cut into that many
/// chunks of ceil(n / chunks) elements, one per thread (as `host_part_policy`), each into whole
/// blocks.
inline block_plan plan_blocks(std::int64_t begin, std::int64_t end, int threads, int chunks) {
  block_plan plan;
  plan.begin = begin;
  plan.end = end;
  const std::int64_t items = end - begin;
  if (items <= 0) return plan;
  const auto blocks_of = [](std::int64_t n) { return (n + block_plan::max_block - 1) / block_plan::max_block; };
  if (chunks > 1) {
    const std::int64_t chunk = (items + chunks - 1) / chunks;
    const std::int64_t per_chunk = blocks_of(chunk);
    plan.block = (chunk + per_chunk - 1) / per_chunk;
    plan.chunk_blocks = static_cast<int>(std::min<std::int64_t>(per_chunk, INT_MAX));
  } else {
    const std::int64_t t = std::max(1, threads);
    const std::int64_t parts = t * blocks_of((items + t - 1) / t);
    plan.block = (items + parts - 1) / parts;
  }
  // Whole cache lines per block (16 elements: 128 bytes of doubles), so that blocks of aligned
  // arrays start aligned, as Kokkos' own chunks (powers of two) do: misaligned blocks made a
  // triad of 1e5 elements on two OpenMP threads 1.2 times as slow (guard_paired/one_space).
  if (plan.block > block_plan::line)
    plan.block = (plan.block + block_plan::line - 1) / block_plan::line * block_plan::line;
  plan.count = (items + plan.block - 1) / plan.block;
  return plan;
}

/// The elements' loop of a guarded block starts on a 64-byte boundary, whatever code precedes it
/// in the user's program: where a short loop falls relative to that boundary decided its speed
/// on AMD EPYC by up to 1.6x from build to build (docs/results/exec.md, "Overhead on one space"), a
/// lottery that no user flag should be needed to win. GCC only (Clang has no such attribute);
/// the function is then called once per block, not inlined into Kokkos' loop over blocks.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__NVCOMPILER) && \
    !defined(__INTEL_COMPILER)
#define HETERO_IMPL_ALIGNED_LOOPS __attribute__((noinline, optimize("align-loops=64")))
#else
#define HETERO_IMPL_ALIGNED_LOOPS
#endif

/// The element body `body` of one host part run block by block, each block's exception caught
/// into `*error` (`Value`: void for `parallel_for`, the reduction's value type). Host code only:
/// it runs on host spaces alone, and a try block is not device code. A named type, not a lambda,
/// so that nvcc's extended-lambda rules never apply to it.
template <class Body, class Value>
struct guarded_blocks {
  using value_type = Value;
  Body body;
  first_exception* error;
  std::int64_t begin, end, block;
  std::string_view split;  ///< the split loop running both sides (marks the block's thread), or empty

  HETERO_IMPL_ALIGNED_LOOPS void operator()(const std::int64_t k, Value& update) const {
    if (error->failed()) return;
    const running_split_scope part(split);
    const std::int64_t first = begin + k * block,
                       last = first + std::min(block, end - first);  // no overflow at INT64_MAX
    try {
      for (std::int64_t i = first; i < last; ++i) body(i, update);
    } catch (...) {
      error->capture();
    }
  }
};

template <class Body>
struct guarded_blocks<Body, void> {
  Body body;
  first_exception* error;
  std::int64_t begin, end, block;
  std::string_view split;  ///< the split loop running both sides (marks the block's thread), or empty

  HETERO_IMPL_ALIGNED_LOOPS void operator()(const std::int64_t k) const {
    if (error->failed()) return;
    const running_split_scope part(split);
    const std::int64_t first = begin + k * block,
                       last = first + std::min(block, end - first);  // no overflow at INT64_MAX
    try {
      for (std::int64_t i = first; i < last; ++i) body(i);
    } catch (...) {
      error->capture();
    }
  }
};

#undef HETERO_IMPL_ALIGNED_LOOPS

/// True when the user's element functor, called as a side calls it, is declared `noexcept`:
/// then nothing can throw and the body runs unwrapped (no per-element flag load).
template <class Value, class Functor, class... Views>
constexpr bool nothrow_element() {
  if constexpr (std::is_void_v<Value>) {
    return noexcept(std::declval<const Functor&>()(std::declval<std::int64_t>(), std::declval<const Views&>()...));
  } else {
    return noexcept(std::declval<const Functor&>()(std::declval<std::int64_t>(), std::declval<const Views&>()...,
                                                   std::declval<Value&>()));
  }
}

/// True when a part on `Space` runs `functor` guarded (in `guarded_blocks`): a host space and a
/// functor that is not `noexcept`.
template <class Space, class Value, class Functor, class... Views>
inline constexpr bool guards_elements =
    runs_on_host_threads<Space> && !nothrow_element<Value, Functor, Views...>();

/// The elements [begin, end) of one part, on `space`. `chunks` > 1: cut into that many
/// contiguous chunks, one per thread (a static schedule with the chunk size set to the chunk
/// length; the host part of a split); else Kokkos' default schedule.
/// Holds the space by reference: an instance of Kokkos 4 is a reference-counted handle, and each
/// copy is two atomic operations.
template <class Space>
struct part_range {
  const Space& space;
  std::int64_t begin = 0, end = 0;
  int chunks = 1;
};

/// Runs one part of a split `parallel_for` (no `reducer`) or `parallel_reduce` (one `reducer`):
/// `functor` bound to the part's `views` over `part`, as kernel `kernel`, then fences the part's
/// space. `split`: the loop's label where both of its sides run (a guarded block's thread is
/// then marked as the part's, `running_split_scope`), else empty. Guarded (`guards_elements`), the part runs in
/// blocks (`plan_blocks`), and the first exception of its elements is rethrown here, after the fence; otherwise
/// the kernel is the plain Kokkos launch of the bound functor. One Kokkos policy is made, the one launched.
template <class Value, class Space, class Functor, class... Views, class... Reducer>
void run_part(const std::string& kernel, std::string_view split, const part_range<Space>& part,
              const Functor& functor, const std::tuple<Views...>& views, const Reducer&... reducer) {
  using space = Space;
  using policy_type = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  static_assert(sizeof...(Reducer) == (std::is_void_v<Value> ? 0 : 1));
  // The body's Views are copied untracked, as Kokkos copies a functor into its kernel: the copy
  // lives in this frame, inside the caller's `functor` and `views`.
  auto body = [&] {
    untracked_copy_scope untracked;
    return side_body<Value, is_gpu_space<space>>(functor, views);
  }();
  const auto launch = [&](const auto& launch_policy, const auto& launch_body) {
    if constexpr (std::is_void_v<Value>) {
      Kokkos::parallel_for(kernel, launch_policy, launch_body);
    } else {
      Kokkos::parallel_reduce(kernel, launch_policy, launch_body, reducer...);
    }
  };
  if constexpr (guards_elements<space, Value, Functor, Views...>) {
    const block_plan blocks = plan_blocks(part.begin, part.end, part.space.concurrency(), part.chunks);
    policy_type block_policy(part.space, 0, blocks.count);
    if (blocks.chunk_blocks > 0) block_policy.set_chunk_size(blocks.chunk_blocks);
    first_exception error;
    // Moved into the wrapper: its untracked Views stay untracked.
    launch(block_policy, guarded_blocks<decltype(body), Value>{std::move(body), &error, blocks.begin, blocks.end,
                                                               blocks.block, split});
    part.space.fence();
    error.rethrow_if_failed();
  } else {
    policy_type policy(part.space, part.begin, part.end);
    if (part.chunks > 1) {
      const std::int64_t length = (part.end - part.begin + part.chunks - 1) / part.chunks;
      policy.set_chunk_size(static_cast<int>(std::min<std::int64_t>(length, INT_MAX)));
    }
    launch(policy, body);
    part.space.fence();
  }
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_GUARDED_FUNCTOR_HPP
