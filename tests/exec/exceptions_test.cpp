// Exceptions thrown by the bodies of split loops reach the caller, on every space pair: from an
// element of the device half, of the host half, of both (the host's wins), from parallel_reduce
// functors and from split_for chunks. Each arrives with its type and message after the other
// half finished; the elements that ran are right, a sequential half stops at the element that
// threw, and the next split loop works.
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "random.hpp"
#include "space_pairs.hpp"

namespace {

// Two exception types, so that the test sees which half's exception arrived.
struct device_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct host_failure : std::logic_error {
  using std::logic_error::logic_error;
};

// What a call threw: the type (of the test's two, or another) and the message.
struct thrown {
  std::string type, message;
};

template <class Call>
thrown what_throws(const Call& call) {
  try {
    call();
  } catch (const device_failure& e) {
    return {"device_failure", e.what()};
  } catch (const host_failure& e) {
    return {"host_failure", e.what()};
  } catch (const std::exception& e) {
    return {"another std::exception", e.what()};
  } catch (...) {
    return {"not a std::exception", ""};
  }
  return {"nothing", ""};
}

std::string message_at(std::int64_t i) { return "element " + std::to_string(i) + " failed"; }

std::int64_t value_of(std::int64_t i) { return (i * 7919) % 1009 - 500; }

// What an element of `out` holds before a loop wrote it: no value_of(i) (those are -500 to 508).
constexpr std::int64_t unwritten = -1'000'000;

// Which halves throw in a trial.
enum class failing { device, host, both };

failing pick_failing(int trial) { return static_cast<failing>(trial % 3); }

// One trial's range, weight and the elements that throw (-1: none).
struct trial_setup {
  std::int64_t begin, end;
  double weight;
  hetero::detail::split_plan plan;
  std::int64_t device_throw = -1, host_throw = -1;
};

// A range of 100 to 4000 elements with both halves non-empty (weight 0.1 to 0.9), and a random
// element to throw at in each failing half. With one space everything is the device half.
template <class Device, class Host>
trial_setup make_trial(failing which, std::mt19937_64& gen, int host_chunks = 1) {
  constexpr bool single = hetero::is_single_space<Device, Host>;
  trial_setup t{};
  t.begin = std::uniform_int_distribution<std::int64_t>(0, 300)(gen);
  t.end = t.begin + std::uniform_int_distribution<std::int64_t>(100, 4000)(gen);
  t.weight = std::uniform_real_distribution<double>(0.1, 0.9)(gen);
  t.plan = hetero::detail::make_split_plan(t.begin, t.end, single ? 0.0 : t.weight, host_chunks);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi - 1)(gen);
  };
  if (which != failing::host || single) t.device_throw = pick(t.plan.device_begin, t.plan.device_end);
  if (which != failing::device) {
    if (single) {  // a second element of the one half: either may be first
      do t.host_throw = pick(t.begin, t.end);
      while (t.host_throw == t.device_throw);
    } else {
      t.host_throw = pick(t.plan.host_begin, t.plan.host_end);
    }
  }
  return t;
}

// The exception expected from a trial: the host half's if it threw, else the device half's.
// With one space and two failing elements, whichever element threw first.
template <class Device, class Host>
void check_thrown(const thrown& got, const trial_setup& t) {
  INFO("thrown: " << got.type << ": " << got.message);
  if (hetero::is_single_space<Device, Host> && t.host_throw >= 0) {
    // Both failing elements are in the one (device) half; the element functor throws
    // host_failure at host_throw, device_failure at device_throw.
    CHECK(((got.type == "device_failure" && got.message == message_at(t.device_throw)) ||
           (got.type == "host_failure" && got.message == message_at(t.host_throw))));
  } else if (t.host_throw >= 0) {
    CHECK(got.type == "host_failure");
    CHECK(got.message == message_at(t.host_throw));
  } else {
    CHECK(got.type == "device_failure");
    CHECK(got.message == message_at(t.device_throw));
  }
}

// The first element of out over [lo, hi) that breaks the rule of a half that ran with `throw_at`
// failing (-1: none), or -1: without a failure every element is written; with one, the failing
// element is not, and a half that runs in order (`ordered`) wrote exactly the elements before
// it; a parallel half wrote each other element or skipped it.
template <class View>
std::int64_t first_wrong(const View& out, std::int64_t lo, std::int64_t hi, std::int64_t throw_at, bool ordered) {
  for (std::int64_t i = lo; i < hi; ++i) {
    const bool written = out(i) == value_of(i), untouched = out(i) == unwritten;
    bool right = written || untouched;
    if (throw_at < 0 || (ordered && i < throw_at)) {
      right = written;
    } else if (i == throw_at || ordered) {
      right = untouched;
    }
    if (!right) return i;
  }
  return -1;
}

template <class View>
void check_half(const View& out, std::int64_t lo, std::int64_t hi, std::int64_t throw_at, bool ordered) {
  const std::int64_t wrong = first_wrong(out, lo, hi, throw_at, ordered);
  INFO("half [" << lo << ", " << hi << ") failing at " << throw_at << (ordered ? ", in order" : ", in parallel")
                << ": element " << wrong << " is " << (wrong >= 0 ? out(wrong) : 0));
  CHECK(wrong == -1);
}

// Every element of out: value_of(i) inside [begin, end), unwritten outside.
template <class View>
void check_all_written(const View& out, std::int64_t begin, std::int64_t end) {
  std::int64_t wrong = -1;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(out.extent(0)) && wrong < 0; ++i)
    if (out(i) != (i >= begin && i < end ? value_of(i) : unwritten)) wrong = i;
  INFO("element " << wrong << " is " << (wrong >= 0 ? out(wrong) : 0));
  CHECK(wrong == -1);
}

// True for a space that runs a kernel's elements one after another, in order.
template <class Space>
constexpr bool runs_in_order =
#if defined(KOKKOS_ENABLE_SERIAL)
    std::is_same_v<Space, Kokkos::Serial>;
#else
    false;
#endif

}  // namespace

TEMPLATE_LIST_TEST_CASE("an exception of an element of either half of parallel_for reaches the caller",
                        "[exec][parallel_for][exceptions]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_gpu_space<device>) {
    SKIP("GPU device code cannot throw");
  } else {
    constexpr bool single = hetero::is_single_space<device, host>;
    auto gen = hetero::testing::rng(61);
    Kokkos::View<std::int64_t*, Kokkos::HostSpace> out("out", 4400);
    for (int trial = 0; trial < 18; ++trial) {
      const trial_setup t = make_trial<device, host>(pick_failing(trial), gen);
      INFO("range [" << t.begin << ", " << t.end << ") weight " << t.weight << ", host half from "
                     << t.plan.host_begin << ", throws at " << t.device_throw << " and " << t.host_throw);
      Kokkos::deep_copy(out, unwritten);
      const std::int64_t device_throw = t.device_throw, host_throw = t.host_throw;
      const auto policy = hetero::split_policy<device, host>(t.begin, t.end).weight(t.weight);
      const thrown got = what_throws([&] {
        hetero::parallel_for("test_element_throw", policy, [=](std::int64_t i) {
          if (i == device_throw) throw device_failure(message_at(i));
          if (i == host_throw) throw host_failure(message_at(i));
          out(i) = value_of(i);
        });
      });
      check_thrown<device, host>(got, t);
      if constexpr (single) {
        // Both failing elements are in the one half: neither wrote; the others ran or were skipped
        // (in order: up to the first failing element).
        CHECK(out(device_throw) == unwritten);
        if (host_throw >= 0) CHECK(out(host_throw) == unwritten);
        const std::int64_t first = host_throw < 0 ? device_throw : std::min(device_throw, host_throw);
        check_half(out, t.begin, t.end, first, runs_in_order<device>);
      } else {
        check_half(out, t.plan.device_begin, t.plan.device_end, device_throw, runs_in_order<device>);
        check_half(out, t.plan.host_begin, t.plan.host_end, host_throw, runs_in_order<host>);
      }

      // The next split loop (same label, same helper thread) runs every element.
      Kokkos::deep_copy(out, unwritten);
      hetero::parallel_for("test_element_throw", policy, [=](std::int64_t i) { out(i) = value_of(i); });
      check_all_written(out, t.begin, t.end);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("an exception of a parallel_reduce functor reaches the caller and leaves the result",
                        "[exec][parallel_reduce][exceptions]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_gpu_space<device>) {
    SKIP("GPU device code cannot throw");
  } else {
    auto gen = hetero::testing::rng(62);
    for (int trial = 0; trial < 18; ++trial) {
      const trial_setup t = make_trial<device, host>(pick_failing(trial), gen);
      INFO("range [" << t.begin << ", " << t.end << ") weight " << t.weight << ", throws at " << t.device_throw
                     << " and " << t.host_throw);
      const std::int64_t device_throw = t.device_throw, host_throw = t.host_throw;
      const auto policy = hetero::split_policy<device, host>(t.begin, t.end).weight(t.weight);
      const auto failing_term = [=](std::int64_t i) {
        if (i == device_throw) throw device_failure(message_at(i));
        if (i == host_throw) throw host_failure(message_at(i));
        return value_of(i);
      };
      const std::int64_t untouched = std::uniform_int_distribution<std::int64_t>(-1000, 1000)(gen);
      std::int64_t sum = untouched;
      check_thrown<device, host>(what_throws([&] {
                                   hetero::parallel_reduce(
                                       "test_reduce_throw", policy,
                                       [=](std::int64_t i, std::int64_t& s) { s += failing_term(i); }, sum);
                                 }),
                                 t);
      CHECK(sum == untouched);
      std::int64_t largest = untouched;
      check_thrown<device, host>(what_throws([&] {
                                   hetero::parallel_reduce(
                                       "test_reduce_throw", policy,
                                       [=](std::int64_t i, std::int64_t& m) { m = std::max(m, failing_term(i)); },
                                       Kokkos::Max<std::int64_t>(largest));
                                 }),
                                 t);
      CHECK(largest == untouched);

      // The next reductions (sum, Max, MinLoc) are right.
      std::int64_t expected_sum = 0, expected_max = std::numeric_limits<std::int64_t>::lowest();
      std::int64_t expected_min = std::numeric_limits<std::int64_t>::max(), expected_loc = -1;
      for (std::int64_t i = t.begin; i < t.end; ++i) {
        expected_sum += value_of(i);
        expected_max = std::max(expected_max, value_of(i));
        if (value_of(i) < expected_min) {
          expected_min = value_of(i);
          expected_loc = i;
        }
      }
      hetero::parallel_reduce(
          "test_reduce_throw", policy, [](std::int64_t i, std::int64_t& s) { s += value_of(i); }, sum);
      CHECK(sum == expected_sum);
      hetero::parallel_reduce(
          "test_reduce_throw", policy, [](std::int64_t i, std::int64_t& m) { m = std::max(m, value_of(i)); },
          Kokkos::Max<std::int64_t>(largest));
      CHECK(largest == expected_max);
      using min_loc = Kokkos::MinLoc<std::int64_t, std::int64_t>;
      typename min_loc::value_type smallest{};
      hetero::parallel_reduce(
          "test_reduce_throw", policy,
          [](std::int64_t i, typename min_loc::value_type& m) {
            // The first index of the minimum, whatever order the elements and partials come in.
            if (value_of(i) < m.val || (value_of(i) == m.val && i < m.loc)) {
              m.val = value_of(i);
              m.loc = i;
            }
          },
          min_loc(smallest));
      CHECK(smallest.val == expected_min);
      CHECK(value_of(smallest.loc) == expected_min);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("an exception of a split_for chunk reaches the caller after the other chunks finished",
                        "[exec][split_for][exceptions]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_gpu_space<device>) {
    SKIP("GPU device code cannot throw");
  } else {
    constexpr bool single = hetero::is_single_space<device, host>;
    auto gen = hetero::testing::rng(63);
    Kokkos::View<std::int64_t*, Kokkos::HostSpace> out("out", 4400);
    for (int trial = 0; trial < 18; ++trial) {
      const int chunks = std::uniform_int_distribution<int>(1, 4)(gen);
      const int host_chunks = std::min<int>(chunks, static_cast<int>(host().concurrency()));
      const trial_setup t = make_trial<device, host>(pick_failing(trial), gen, host_chunks);
      INFO("range [" << t.begin << ", " << t.end << ") weight " << t.weight << ", " << host_chunks
                     << " host chunks, throws at " << t.device_throw << " and " << t.host_throw);
      Kokkos::deep_copy(out, unwritten);
      const auto policy = hetero::split_policy<device, host>(t.begin, t.end).weight(t.weight).host_chunks(chunks);
      // Each call runs its chunk in order.
      const auto body = [&](const auto&, std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          if (i == t.device_throw) throw device_failure(message_at(i));
          if (i == t.host_throw) throw host_failure(message_at(i));
          out(i) = value_of(i);
        }
      };
      check_thrown<device, host>(what_throws([&] { hetero::split_for("test_chunk_throw", policy, body); }), t);
      if constexpr (single) {
        // One call for the whole range: it stopped at the first failing element.
        const std::int64_t first = t.host_throw < 0 ? t.device_throw : std::min(t.device_throw, t.host_throw);
        check_half(out, t.begin, t.end, first, true);
      } else {
        // The device half is one chunk, run in order up to its failing element.
        check_half(out, t.plan.device_begin, t.plan.device_end, t.device_throw, true);
        // Each host chunk ran in order to its end or its failing element, or was skipped.
        for (int k = 0; k < t.plan.host_chunks; ++k) {
          const auto [b, e] = t.plan.host_chunk(k);
          INFO("host chunk [" << b << ", " << e << ")");
          if (t.host_throw < 0 || (t.host_throw >= b && t.host_throw < e)) {
            check_half(out, b, e, t.host_throw, true);
          } else {  // run whole (it started before the failure) or skipped
            check_half(out, b, e, out(b) == unwritten ? b : -1, true);
          }
        }
      }
      // The next split loop runs every chunk.
      Kokkos::deep_copy(out, unwritten);
      hetero::split_for("test_chunk_throw", policy, [&](const auto&, std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) out(i) = value_of(i);
      });
      check_all_written(out, t.begin, t.end);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("an exception in a loop over mirrored arrays reaches the caller",
                        "[exec][parallel_for][mirror][exceptions]", hetero::testing::split_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  if constexpr (hetero::is_gpu_space<device>) {
    SKIP("GPU device code cannot throw");
  } else {
    using array = hetero::mirrored_array<double*, device, host>;
    auto gen = hetero::testing::rng(64);
    for (int trial = 0; trial < 6; ++trial) {
      const trial_setup t = make_trial<device, host>(pick_failing(trial), gen);
      INFO("range [" << t.begin << ", " << t.end << ") weight " << t.weight << ", throws at " << t.device_throw
                     << " and " << t.host_throw);
      array y(hetero::mirror_mode::separate, "y", t.end);
      const std::int64_t device_throw = t.device_throw, host_throw = t.host_throw;
      const auto policy = hetero::split_policy<device, host>(t.begin, t.end).weight(t.weight);
      check_thrown<device, host>(what_throws([&] {
                                   hetero::parallel_for("test_mirror_throw", policy,
                                                        hetero::access(hetero::writes(y)),
                                                        [=](std::int64_t i, hetero::loop_view<double*> yv) {
                                                          if (i == device_throw)
                                                            throw device_failure(message_at(i));
                                                          if (i == host_throw) throw host_failure(message_at(i));
                                                          yv(i) = static_cast<double>(value_of(i));
                                                        });
                                 }),
                                 t);
      hetero::parallel_for("test_mirror_throw", policy, hetero::access(hetero::writes(y)),
                           [](std::int64_t i, hetero::loop_view<double*> yv) { yv(i) = 2.0 * value_of(i); });
      y.sync_host();
      for (std::int64_t i = t.begin; i < t.end; ++i) REQUIRE(y.host_view()(i) == 2.0 * value_of(i));
    }
  }
}

TEMPLATE_LIST_TEST_CASE("a noexcept element functor runs unguarded, a throwing one guarded on host spaces",
                        "[exec][parallel_for][exceptions]", hetero::testing::all_space_pairs) {
  using device = typename TestType::device;
  using host = typename TestType::host;
  Kokkos::View<std::int64_t*, hetero::testing::shared_memory<TestType>> out("out", 4000);
  const auto may_throw = KOKKOS_LAMBDA(std::int64_t i) { out(i) = value_of(i); };
  const auto cannot_throw = KOKKOS_LAMBDA(std::int64_t i) noexcept { out(i) = 3 * value_of(i); };
  using hetero::detail::guards_elements;
  static_assert(guards_elements<host, void, decltype(may_throw)>);
  static_assert(!guards_elements<host, void, decltype(cannot_throw)>);
  static_assert(guards_elements<device, void, decltype(may_throw)> == !hetero::is_gpu_space<device>);
  static_assert(!guards_elements<device, void, decltype(cannot_throw)>);
  auto gen = hetero::testing::rng(65);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 4000)(gen);
  const double w = std::uniform_real_distribution<double>(0, 1)(gen);
  INFO("n " << n << " weight " << w);
  const auto policy = hetero::split_policy<device, host>(0, n).weight(w);
  hetero::parallel_for("test_noexcept", policy, may_throw);
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(out(i) == value_of(i));
  hetero::parallel_for("test_noexcept", policy, cannot_throw);
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(out(i) == 3 * value_of(i));
}

TEST_CASE("the blocks of a guarded part cover it once, balanced and at most max_block long",
          "[exec][exceptions]") {
  using hetero::detail::block_plan;
  auto gen = hetero::testing::rng(66);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t begin = std::uniform_int_distribution<std::int64_t>(0, 1000)(gen);
    const std::int64_t items = trial % 10 == 0 ? std::uniform_int_distribution<std::int64_t>(0, 20)(gen)
                                               : std::uniform_int_distribution<std::int64_t>(0, 3'000'000)(gen);
    const int threads = std::uniform_int_distribution<int>(1, 64)(gen);
    const int chunks = trial % 2 == 0 ? 0 : std::uniform_int_distribution<int>(1, threads)(gen);
    INFO("[" << begin << ", " << begin + items << ") on " << threads << " threads, " << chunks << " chunks");
    const block_plan plan = hetero::detail::plan_blocks(begin, begin + items, threads, chunks);
    CHECK(plan.begin == begin);
    CHECK(plan.end == begin + items);
    if (items == 0) {
      CHECK(plan.count == 0);
      continue;
    }
    // Blocks 0 .. count - 1 cover the part once: all full but the last, which is not empty.
    CHECK(plan.block >= 1);
    CHECK(plan.block <= block_plan::max_block);
    CHECK(plan.count * plan.block >= items);
    CHECK((plan.count - 1) * plan.block < items);
    if (plan.block > block_plan::line) CHECK(plan.block % block_plan::line == 0);
    if (chunks > 1) {
      // Static chunks of chunk_blocks blocks: each covers at least a host chunk of the plan.
      CHECK(plan.chunk_blocks * plan.block >= (items + chunks - 1) / chunks);
      CHECK((plan.chunk_blocks - 1) * plan.block < (items + chunks - 1) / chunks);
    } else {
      CHECK(plan.chunk_blocks == 0);
      // As many blocks per thread (rounding to whole lines may drop the last ones): no thread
      // gets more than one block, or one line per block, more than its share.
      const std::int64_t share = (items + threads - 1) / threads;
      const std::int64_t per_thread = (plan.count + threads - 1) / threads;
      CHECK(per_thread * plan.block <= share + per_thread * block_plan::line + plan.block);
    }
  }
}

#if HETERO_HAS_OPENMP() && HETERO_HAS_SERIAL()
TEST_CASE("a guarded part that ends at the largest index runs every element", "[exec][exceptions]") {
  // A block's end was first + block, past INT64_MAX for the last block of such a part: it
  // wrapped, and the last block ran nothing.
  const std::int64_t end = std::numeric_limits<std::int64_t>::max();
  auto gen = hetero::testing::rng(68);
  // Odd: on two or more threads the last block's first + block is then past INT64_MAX.
  const std::int64_t items = 2 * std::uniform_int_distribution<std::int64_t>(1, 20)(gen) + 1;
  std::atomic<std::int64_t> count{0}, sum_of_offsets{0};
  // Weight 0: every element on the OpenMP side, whose body (not noexcept) runs in guarded blocks.
  hetero::parallel_for("largest index",
                       hetero::split_policy<Kokkos::OpenMP, Kokkos::Serial>(end - items, end).weight(0),
                       [&](std::int64_t i) {
                         ++count;
                         sum_of_offsets += end - i;
                       });
  CHECK(count.load() == items);
  CHECK(sum_of_offsets.load() == items * (items + 1) / 2);
}
#endif

TEST_CASE("a part's copy of the body counts no View references, and the user's Views keep theirs",
          "[exec][exceptions]") {
  auto gen = hetero::testing::rng(67);
  const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 5000)(gen);
  Kokkos::View<double*, hetero::default_host_space> v("v", n);
  const int before = v.use_count();
  int seen_max = before + 1;
#if HETERO_HAS_SERIAL()  // one thread: the body may keep a plain maximum
  seen_max = 0;
  {
    // The body's copy (inside run_part) would raise the count while the part runs; a body that
    // reads it on one thread sees Kokkos' closure copy, which Kokkos makes untracked too.
    hetero::parallel_for("use_count", hetero::split_policy<Kokkos::Serial, Kokkos::Serial>(0, n),
                         [v, &seen_max](std::int64_t i) {
                           seen_max = std::max(seen_max, v.use_count());
                           v(i) = static_cast<double>(i);
                         });
  }
#endif
  CHECK(seen_max == before + 1);  // the lambda's own capture, made by the caller: tracked
  CHECK(v.use_count() == before);
#if HETERO_HAS_SERIAL()
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(v(i) == static_cast<double>(i));
#endif

  // The scope nests and restores what it found.
  {
    hetero::detail::untracked_copy_scope outer;
    {
      hetero::detail::untracked_copy_scope inner;
      auto copy = v;
      CHECK(v.use_count() == before);
    }
    auto copy = v;
    CHECK(v.use_count() == before);
  }
  auto tracked = v;
  CHECK(v.use_count() == before + 1);
}
