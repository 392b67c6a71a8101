// Helpers of the comm tests: communicators for every buffer path, MPI's own collectives as the
// reference (started non-blocking and waited politely, so 3 ranks on 2 cores stay fast),
// random inputs that reduce exactly, and element-by-element comparison.
#ifndef HETERO_TESTS_COMM_TEST_SUPPORT_HPP
#define HETERO_TESTS_COMM_TEST_SUPPORT_HPP

#include <hetero/comm.hpp>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nodes.hpp"
#include "random.hpp"
#include "world.hpp"

namespace hetero::testing {

/// A trivially copyable struct with no MPI type and no operator+: reduced with a user functor.
struct pair_value {
  std::int32_t key;
  double weight;
  friend bool operator==(const pair_value&, const pair_value&) = default;
};

/// Keeps the larger key; on a tie adds the weights (associative and commutative).
struct pair_max {
  KOKKOS_INLINE_FUNCTION pair_value operator()(const pair_value& a, const pair_value& b) const {
    if (a.key != b.key) return a.key > b.key ? a : b;
    return {a.key, a.weight + b.weight};
  }
};

/// 2x2 integer matrices under multiplication: associative, not commutative.
struct matrix2 {
  std::int64_t a, b, c, d;
  friend bool operator==(const matrix2&, const matrix2&) = default;
  /// The product, so that `ops::prod` applies: it must keep rank order as the functor does.
  KOKKOS_INLINE_FUNCTION friend matrix2 operator*(const matrix2& x, const matrix2& y) {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
  }
};
struct matrix_product {
  KOKKOS_INLINE_FUNCTION matrix2 operator()(const matrix2& x, const matrix2& y) const { return x * y; }
};

/// Small integers, stored in T, so that sums and products are exact in any order.
template <class T>
T random_value(std::mt19937_64& gen) {
  if constexpr (std::is_same_v<T, pair_value>) {
    return {static_cast<std::int32_t>(gen() % 7), static_cast<double>(gen() % 100)};
  } else if constexpr (std::is_same_v<T, matrix2>) {
    const auto v = [&] { return static_cast<std::int64_t>(gen() % 3) - 1; };
    return {1 + v(), v(), v(), 1 + v()};
  } else if constexpr (std::is_same_v<T, std::complex<double>>) {
    return {static_cast<double>(static_cast<int>(gen() % 200) - 100), static_cast<double>(gen() % 50)};
  } else if constexpr (std::is_same_v<T, bool>) {
    return gen() % 2 == 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<int>(gen() % 2001) - 1000);
  } else if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(unsigned)) {
    // The whole range, top bit included: sums and products wrap modulo 2^bits, exact in any order.
    return static_cast<T>(gen());
  } else if constexpr (std::is_unsigned_v<T>) {
    // Narrower types promote to int, where a product could overflow: the top bit only for min/max.
    return static_cast<T>(gen() % 2 == 0 ? gen() % 100 : static_cast<T>(~T{}) - gen() % 100);
  } else {
    return static_cast<T>(gen() % 100);
  }
}

/// `n` values drawn for rank `rank` of a test step (every rank can draw any rank's values).
template <class T>
std::vector<T> values_of(std::uint64_t stream, int rank, std::size_t n) {
  auto gen = rng(stream * 1000 + static_cast<std::uint64_t>(rank));
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T>(gen);
  return v;
}

/// The serial reference of a reduction: every rank's inputs, `inputs(r)` (a vector), folded
/// element by element with `f` in rank order, on one rank, without MPI.
template <class Inputs, class F>
auto serial_fold_of(Inputs inputs, int ranks, F f) {
  auto result = inputs(0);
  using T = typename decltype(result)::value_type;
  for (int r = 1; r < ranks; ++r) {
    const auto theirs = inputs(r);
    for (std::size_t i = 0; i < result.size(); ++i) result[i] = static_cast<T>(f(result[i], theirs[i]));
  }
  return result;
}

/// `serial_fold_of` the ranks' `values_of(stream, r, n)`.
template <class T, class F>
std::vector<T> serial_fold(std::uint64_t stream, int ranks, std::size_t n, F f) {
  return serial_fold_of([&](int r) { return values_of<T>(stream, r, n); }, ranks, f);
}

/// Waits for a reference call's request (on MPI_COMM_WORLD, made by every rank), then until
/// every rank has its result: hetero's call after it starts on all ranks together, and its wait
/// limit times hetero's call alone. Unsynchronised, a rank that left a rooted reference early
/// counted the root's time in MPI against hetero's limit: at 32 ranks in 4 nodes of 8 on 2
/// cores, MPI's gather of up to 12,000 doubles per rank took 15-22 s at its root, and hetero's
/// gather after it raised deadlock_error naming the root and the ranks between it and the leaves.
inline void wait_reference(MPI_Request request) {
  polite_wait(request);
  polite_barrier();
}

/// The number of nodes MPI sees (one per host; emulated nodes count as hosts): the reference for
/// communicator::nodes().
inline int nodes_by_mpi() { return hetero::testing::node_layout_of().nodes(); }

/// Whether every node holds consecutive ranks of MPI_COMM_WORLD, the nodes in rank order.
inline bool nodes_in_rank_order() { return hetero::testing::node_layout_of().in_rank_order(); }

/// Records the parts of hetero's regions (`region_begin`'s third argument), per label.
class part_recorder final : public observer {
 public:
  void region_begin(std::string_view, std::string_view label, std::string_view part) noexcept override {
    const std::lock_guard lock(m_mutex);
    if (!part.empty()) m_parts.push_back(std::string(label) + ": " + std::string(part));
  }
  [[nodiscard]] observer_events events() const noexcept override { return observer_events::regions; }
  std::size_t count(const std::string& label_part) {
    const std::lock_guard lock(m_mutex);
    return static_cast<std::size_t>(std::count(m_parts.begin(), m_parts.end(), label_part));
  }

 private:
  std::mutex m_mutex;
  std::vector<std::string> m_parts;
};

/// The communicators a collective is tested on: every buffer path.
struct comm_case {
  std::string name;
  communicator comm;
};

inline communicator_options options_with(device_buffer_path path, bool shared_memory = true,
                                         std::size_t chunk = std::size_t{1} << 20) {
  communicator_options o;
  o.device_path = path;
  o.shared_memory = shared_memory;
  o.staging_chunk_bytes = chunk;
  return o;
}

/// The staged cases' chunk: 256 bytes per rank of MPI_COMM_WORLD. A gathering call's chunk holds
/// one block per rank, so a fixed 256 bytes left 2 ints per block at 32 ranks: a gather of
/// 6,783 ints became 3,392 rounds, and one of them outlasted the 30 s wait limit at 32 ranks in
/// 4 nodes of 8 on 2 cores. Per rank, every size moves the same 64 ints per block and round, and a test's
/// random counts (up to 12,000) still cross a chunk boundary many times.
inline std::size_t staged_chunk_bytes() { return 256 * static_cast<std::size_t>(world_size()); }

/// Keeps `make()`'s result until Kokkos is finalised. The runtime finalises Kokkos and then MPI,
/// both before statics are destroyed: a communicator destroyed as a static would free its
/// windows and Kokkos scratch after MPI_Finalize, i.e. never (LeakSanitizer reports it). A
/// Kokkos finalize hook releases it while both are still up, on every rank in the same order.
template <class T, class Make>
T& until_finalize(std::unique_ptr<T>& slot, Make make) {
  if (!slot) {
    slot = std::make_unique<T>(make());
    Kokkos::push_finalize_hook([&slot] { slot.reset(); });
  }
  return *slot;
}

/// Made once per test program (making a communicator is collective and, on an oversubscribed
/// node, slow); the first call is collective.
inline std::vector<comm_case>& comm_cases() {
  static std::unique_ptr<std::vector<comm_case>> cases;
  return until_finalize(cases, [] {
    std::vector<comm_case> c;
    c.push_back({"default (shared memory where possible)", communicator()});
    c.push_back({"no shared memory", communicator(options_with(device_buffer_path::automatic, false))});
    c.push_back({"staged through host buffers, chunks of 256 bytes per rank",
                 communicator(options_with(device_buffer_path::staged, true, staged_chunk_bytes()))});
    c.push_back({"direct (device code path: kernels, pointers to MPI)",
                 communicator(options_with(device_buffer_path::direct))});
    return c;
  });
}

/// The default communicator of the test program.
inline communicator& default_comm() { return comm_cases().front().comm; }

/// A communicator that agrees on every call's arguments first (errors raise on every rank).
inline communicator& verifying_comm() {
  static std::unique_ptr<communicator> comm;
  return until_finalize(comm, [] {
    communicator_options o;
    o.verify_arguments = true;
    return communicator(o);
  });
}

/// Checks that `call` raises `invalid_argument` on every rank: on `culprit` with `text`, on the
/// others naming the culprit.
template <class Call>
void check_rejected_everywhere(const communicator& comm, int culprit, Call&& call, const std::string& text) {
  try {
    call();
    FAIL("no error was raised");
  } catch (const invalid_argument& e) {
    const std::string what = e.what();
    INFO(what);
    if (comm.rank() == culprit)
      CHECK(what.find(text) != std::string::npos);
    else {  // "<call>: rank R rejected its arguments: <its message less its '<call>: '>" ("R (the root)")
      const std::string reason = text.substr(text.find(": ") == std::string::npos ? 0 : text.find(": ") + 2);
      const std::string rank = "rank " + std::to_string(culprit);
      CHECK((what.find(rank + " rejected its arguments: " + reason) != std::string::npos ||
             what.find(rank + " (the root) rejected its arguments: " + reason) != std::string::npos));
    }
  }
}

/// Sizes to draw from: 0, 1, small, around the shared-memory slot, and larger.
inline std::size_t random_count(std::mt19937_64& gen, std::size_t element_bytes) {
  switch (gen() % 6) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2 + gen() % 40;
    case 3: return 41 + gen() % 600;
    case 4: return (60 * 1024 + gen() % (16 * 1024)) / element_bytes;  // around a 64 KiB slot
    default: return 1000 + gen() % 20000;
  }
}

/// Counts of a v-collective (the same on every rank: drawn from the shared seed), some zero,
/// and displacements that place the blocks in reverse rank order with gaps between them.
struct v_layout {
  std::vector<int> counts, displs;
  std::size_t extent = 0;
};

inline v_layout random_layout(std::uint64_t stream, int ranks, std::size_t element_bytes) {
  auto gen = rng(stream);
  v_layout l;
  l.counts.resize(static_cast<std::size_t>(ranks));
  l.displs.resize(static_cast<std::size_t>(ranks));
  // Up to 12000 elements: blocks on both sides of a 64 KiB slot.
  for (auto& c : l.counts) c = gen() % 4 == 0 ? 0 : static_cast<int>(random_count(gen, element_bytes) % 12000);
  for (int r = ranks - 1; r >= 0; --r) {
    const auto i = static_cast<std::size_t>(r);
    l.displs[i] = static_cast<int>(l.extent + gen() % 3);
    l.extent = static_cast<std::size_t>(l.displs[i] + l.counts[i]);
  }
  return l;
}

/// What the returned form of a v-collective holds, given what MPI wrote into `full` (a buffer
/// of the layout's extent): every block in place, value-initialised elements between them, up
/// to the end of the last block that is not empty. Empty where `full` is (off the root).
template <class T>
std::vector<T> returned_blocks(const std::vector<T>& full, const v_layout& l) {
  std::vector<T> r;
  if (full.empty()) return r;
  for (std::size_t i = 0; i < l.counts.size(); ++i)
    if (l.counts[i] > 0) r.resize(std::max(r.size(), static_cast<std::size_t>(l.displs[i] + l.counts[i])));
  for (std::size_t i = 0; i < l.counts.size(); ++i)
    std::copy_n(full.begin() + l.displs[i], l.counts[i], r.begin() + l.displs[i]);
  return r;
}

/// Compares every element; reports the first difference and the count.
template <class T>
void check_equal(std::span<const T> got, std::span<const T> expected, const std::string& what) {
  REQUIRE(got.size() == expected.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == expected[i]) && wrong++ == 0) first = i;
  INFO(what << ": " << wrong << " of " << got.size() << " elements differ, the first at index " << first);
  CHECK(wrong == 0);
}

template <class T>
std::span<const T> as_span(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

/// Every algorithm `c` can be forced to, plus automatic.
inline std::vector<comm_algorithm> algorithms_of(collective c) {
  std::vector<comm_algorithm> out{comm_algorithm::automatic};
  for (comm_algorithm a : all_algorithms)
    if (implements(c, a)) out.push_back(a);
  return out;
}

/// Whether `a` can run for `c` on this communicator (forcing it must then work).
inline bool runnable(const communicator& comm, collective c, comm_algorithm a, std::size_t shm_bytes,
                     bool commutative = true, bool regroups_exactly = true) {
  if (a == comm_algorithm::shm) return comm.has_shared_memory() && shm_bytes <= comm.options().shm_slot_bytes;
  if (a == comm_algorithm::hierarchical) return comm.node_aware() && (commutative || nodes_in_rank_order());
  if (c == collective::allgather && a == comm_algorithm::recursive_doubling)
    return (comm.size() & (comm.size() - 1)) == 0;
  if (c == collective::allreduce && !commutative)
    return a != comm_algorithm::ring && a != comm_algorithm::dissemination &&
           a != comm_algorithm::recursive_halving;
  // Dissemination groups the operands per rank: integer built-in operations only.
  if (c == collective::allreduce && !regroups_exactly) return a != comm_algorithm::dissemination;
  return true;
}

}  // namespace hetero::testing

#endif  // HETERO_TESTS_COMM_TEST_SUPPORT_HPP
