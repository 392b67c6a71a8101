// work_sharing handles: copies share one state, two handles made apart do not see each other's
// labels, settings or tuners; the loops run in the handle they are given and report each run
// to hetero's observers.
#include <hetero/core/observer.hpp>
#include <hetero/exec/parallel_for.hpp>
#include <hetero/exec/split_for.hpp>
#include <hetero/exec/work_sharing.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "space_pairs.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

using split_pair = std::tuple_element_t<0, hetero::testing::split_space_pairs>;
using policy = hetero::split_policy<split_pair::device, split_pair::host>;

// Every loop event, copied.
class loop_recorder : public hetero::observer {
 public:
  struct record {
    std::string label;
    hetero::split_loop_event event;
  };
  void split_loop_end(const hetero::split_loop_event& e) noexcept override {
    std::scoped_lock lock(m_mutex);
    records.push_back({std::string(e.label), e});
  }
  [[nodiscard]] hetero::observer_events events() const noexcept override { return hetero::observer_events::loops; }
  std::vector<record> records;

 private:
  std::mutex m_mutex;
};

std::vector<double> random_values(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = value(rng);
  return v;
}

}  // namespace

TEST_CASE("two work_sharing handles keep their labels, weights and settings apart", "[exec][work_sharing]") {
  std::mt19937_64 rng(20240611);
  hetero::work_sharing a, b(hetero::split_config{.host_cores = 1, .initial_weight = 0.6});
  CHECK_FALSE(a == b);
  CHECK(b.config().initial_weight == 0.6);
  CHECK(a.config().initial_weight == hetero::split_config{}.initial_weight);
  std::uniform_real_distribution<double> weight(0.0, 1.0);
  std::vector<std::pair<std::string, double>> chosen;
  for (int i = 0; i < 8; ++i) {
    chosen.emplace_back("ws label " + std::to_string(rng() % 100000) + "/" + std::to_string(i), weight(rng));
    a.reset_weight(chosen.back().first, chosen.back().second);
  }
  for (const auto& [label, w] : chosen) {
    CHECK(a.cpu_weight(label) == w);
    CHECK(b.cpu_weight(label) == 0.6);  // b's initial weight: b never heard of it
    CHECK_THROWS_WITH(b.statistics(label), ContainsSubstring("no split loop labelled '" + label + "'"));
    CHECK_THROWS_AS(hetero::split_statistics(label), hetero::invalid_argument);  // nor did the default
  }
  CHECK(a.labels().size() == chosen.size());
  CHECK(b.labels().empty());

  // A copy is the same state.
  hetero::work_sharing copy = a;
  CHECK(copy == a);
  copy.reset_weight(chosen[0].first, 0.125);
  CHECK(a.cpu_weight(chosen[0].first) == 0.125);
  copy.set_tuner(chosen[1].first, hetero::tuner_kind::manual);
  CHECK(a.statistics(chosen[1].first).tuner == "manual");
  copy.set_config(hetero::split_config{.initial_weight = 0.3});
  CHECK(a.config().initial_weight == 0.3);
  CHECK(b.config().initial_weight == 0.6);

  CHECK_THROWS_WITH(b.set_config(hetero::split_config{.initial_weight = 1.5}),
                    ContainsSubstring("split_config::initial_weight is 1.5"));
  CHECK_THROWS_WITH(hetero::work_sharing(hetero::split_config{.host_cores = -2}),
                    ContainsSubstring("split_config::host_cores is -2"));
  CHECK_THROWS_WITH(a.reset_weight("x", -0.5), ContainsSubstring("is -0.5; allowed: a CPU weight in [0, 1]"));
  a.forget_labels();
  CHECK(a.labels().empty());
  CHECK(copy.labels().empty());
}

TEST_CASE("loops run in the handle they are given, every element right", "[exec][work_sharing]") {
  std::mt19937_64 rng(7);
  hetero::work_sharing a, b;
  const std::string label = "ws triad";
  hetero::forget_split_labels();
  for (int run = 0; run < 5; ++run) {
    const auto n = static_cast<std::int64_t>(1 + rng() % 5000);
    const auto x = random_values(rng, static_cast<std::size_t>(n));
    const double s = random_values(rng, 1)[0];
    std::vector<double> y(x.size(), 0.0);
    const double w = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    auto& sharing = run % 2 ? b : a;
    hetero::parallel_for(sharing, label, policy(0, n).weight(w), [&](std::int64_t i) { y[i] = s * x[i] + 1.0; });
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(y[i] == s * x[i] + 1.0);

    double sum = 0, reference = 0;
    for (const double v : x) reference += v;
    hetero::parallel_reduce(
        sharing, label + " sum", policy(0, n).weight(w), [&](std::int64_t i, double& update) { update += x[i]; },
        sum);
    CHECK(std::abs(sum - reference) <= 1e-12 * static_cast<double>(n));

    std::vector<int> seen(x.size(), 0);
    std::mutex seen_mutex;
    hetero::split_for(sharing, label + " chunks", policy(0, n).weight(w),
                      [&](const auto&, std::int64_t begin, std::int64_t end) {
                        std::scoped_lock lock(seen_mutex);
                        for (std::int64_t i = begin; i < end; ++i) ++seen[i];
                      });
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(seen[i] == 1);
  }
  const std::vector<std::string> expected = {label, label + " chunks", label + " sum"};
  CHECK(a.labels() == expected);
  CHECK(b.labels() == expected);
  CHECK(a.statistics(label).runs == 3);
  CHECK(b.statistics(label).runs == 2);
  CHECK(hetero::split_labels().empty());  // the default handle saw nothing
}

TEST_CASE("every split run is reported to the observers with what it measured", "[exec][work_sharing]") {
  auto recorder = std::make_shared<loop_recorder>();
  hetero::scoped_observer listening(recorder);
  hetero::work_sharing sharing;
  std::mt19937_64 rng(99);
  std::vector<std::int64_t> sizes;
  for (int run = 0; run < 6; ++run) {
    sizes.push_back(static_cast<std::int64_t>(1 + rng() % 1000));
    hetero::parallel_for(sharing, "ws observed", policy(0, sizes.back()).weight(0.25), [](std::int64_t) {});
    const auto s = sharing.statistics("ws observed");
    REQUIRE(recorder->records.size() == sizes.size());
    const auto& r = recorder->records.back();
    CHECK(r.label == "ws observed");
    CHECK(r.event.device_items == s.device_items);
    CHECK(r.event.host_items == s.host_items);
    CHECK(r.event.device_items + r.event.host_items == sizes.back());
    CHECK(r.event.device_seconds == s.device.last);
    CHECK(r.event.host_seconds == s.host.last);
    CHECK(r.event.cpu_weight == s.last_weight);
  }
  CHECK(hetero::has_observer(*recorder));  // until the scope ends
}
