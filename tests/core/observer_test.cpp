#include <hetero/core/observer.hpp>

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// Records every notification, from any thread.
class recorder : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind kind, std::string_view label) noexcept override {
    std::lock_guard lock(m_mutex);
    events.push_back("begin " + std::to_string(static_cast<int>(kind)) + " " + std::string(label));
  }
  void wait_end(hetero::wait_kind kind, std::string_view label) noexcept override {
    std::lock_guard lock(m_mutex);
    events.push_back("end " + std::to_string(static_cast<int>(kind)) + " " + std::string(label));
  }
  void phase_end() noexcept override {
    std::lock_guard lock(m_mutex);
    events.emplace_back("phase");
  }
  void split_loop_end(const hetero::split_loop_event& e) noexcept override {
    std::lock_guard lock(m_mutex);
    events.push_back("loop " + std::string(e.label) + " " + std::to_string(e.device_items) + "+" +
                     std::to_string(e.host_items));
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(m_mutex);
    return events;
  }
  std::vector<std::string> events;

 private:
  std::mutex m_mutex;
};

}  // namespace

TEST_CASE("wait scopes and phase marks reach the installed observer", "[core][observer]") {
  recorder r;
  REQUIRE(hetero::set_observer(&r) == nullptr);
  {
    hetero::wait_scope outer(hetero::wait_kind::collective, "allreduce");
    hetero::mark_phase();
  }
  { hetero::wait_scope user(hetero::wait_kind::user, "by hand"); }
  CHECK(hetero::set_observer(nullptr) == &r);
  { hetero::wait_scope unseen(hetero::wait_kind::halo, "reflect"); }  // nobody listens any more
  hetero::mark_phase();
  const std::vector<std::string> expected = {"begin 0 allreduce", "phase", "end 0 allreduce", "begin 4 by hand",
                                             "end 4 by hand"};
  CHECK(r.events == expected);
}

TEST_CASE("the observer is told from many threads", "[core][observer]") {
  recorder r;
  hetero::set_observer(&r);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 100; ++i) hetero::wait_scope w(hetero::wait_kind::task, "t");
    });
  for (auto& t : threads) t.join();
  hetero::set_observer(nullptr);
  CHECK(r.events.size() == 800);
}

namespace {

// Counts waits only (asks for nothing else).
class wait_counter : public hetero::observer {
 public:
  void wait_begin(hetero::wait_kind, std::string_view) noexcept override { begins.fetch_add(1); }
  void wait_end(hetero::wait_kind, std::string_view) noexcept override { ends.fetch_add(1); }
  void phase_end() noexcept override { phases.fetch_add(1); }
  [[nodiscard]] hetero::observer_events events() const noexcept override { return hetero::observer_events::waits; }
  std::atomic<int> begins{0}, ends{0}, phases{0};
};

// A random sequence of waits, phases and loop events; returns what a recorder must see.
std::vector<std::string> emit_random_events(std::mt19937_64& rng, int count) {
  std::vector<std::string> expected;
  const char* names[] = {"allreduce", "reflect", "task", "send", "by hand"};
  for (int i = 0; i < count; ++i) {
    switch (rng() % 3) {
      case 0: {
        const int kind = static_cast<int>(rng() % 5);
        hetero::wait_scope w(static_cast<hetero::wait_kind>(kind), names[kind]);
        expected.push_back("begin " + std::to_string(kind) + " " + names[kind]);
        expected.push_back("end " + std::to_string(kind) + " " + names[kind]);
        break;
      }
      case 1:
        hetero::mark_phase();
        expected.emplace_back("phase");
        break;
      default: {
        const auto device = static_cast<std::int64_t>(rng() % 1000),
                   host = static_cast<std::int64_t>(rng() % 1000);
        const std::string label = "loop" + std::to_string(rng() % 10);
        hetero::detail::notify_split_loop({.label = label,
                                           .device_seconds = 1e-3,
                                           .host_seconds = 2e-3,
                                           .cpu_weight = 0.5,
                                           .device_items = device,
                                           .host_items = host});
        expected.push_back("loop " + label + " " + std::to_string(device) + "+" + std::to_string(host));
      }
    }
  }
  return expected;
}

}  // namespace

TEST_CASE("two registered observers both receive every event, in order", "[core][observer]") {
  std::mt19937_64 rng(1234);
  auto first = std::make_shared<recorder>();
  recorder second;  // owned here, registered for a scope
  hetero::add_observer(first);
  hetero::add_observer(first);  // twice: still told once
  CHECK(hetero::has_observer(*first));
  std::vector<std::string> expected;
  {
    hetero::scoped_observer listening(second);
    CHECK(hetero::has_observer(second));
    expected = emit_random_events(rng, 200);
  }
  CHECK_FALSE(hetero::has_observer(second));
  CHECK(first->events == expected);
  CHECK(second.events == expected);
  // Only the first listens now.
  const auto more = emit_random_events(rng, 50);
  CHECK(hetero::remove_observer(*first));
  CHECK_FALSE(hetero::remove_observer(*first));
  emit_random_events(rng, 20);  // nobody listens
  expected.insert(expected.end(), more.begin(), more.end());
  CHECK(first->events == expected);
  CHECK(second.events.size() == expected.size() - more.size());
}

TEST_CASE("set_observer's observer listens beside the registered ones", "[core][observer]") {
  std::mt19937_64 rng(5);
  recorder single, listed;
  REQUIRE(hetero::set_observer(&single) == nullptr);
  CHECK(hetero::current_observer() == &single);
  hetero::scoped_observer listening(listed);
  const auto expected = emit_random_events(rng, 100);
  CHECK(hetero::set_observer(nullptr) == &single);
  CHECK(hetero::current_observer() == nullptr);
  CHECK(single.events == expected);
  CHECK(listed.events == expected);
}

TEST_CASE("an observer is told only the events it asks for", "[core][observer]") {
  std::mt19937_64 rng(77);
  wait_counter waits;
  recorder all;
  hetero::scoped_observer w(waits), a(all);
  const auto expected = emit_random_events(rng, 300);
  int wait_events = 0;
  for (const auto& e : expected) wait_events += e.starts_with("begin ") ? 1 : 0;
  CHECK(waits.begins.load() == wait_events);
  CHECK(waits.ends.load() == wait_events);
  CHECK(waits.phases.load() == 0);
  CHECK(all.events == expected);
}

TEST_CASE("a wait's end reaches the observers its begin reached", "[core][observer]") {
  recorder r;
  {
    hetero::scoped_observer listening(r);
    hetero::wait_scope w(hetero::wait_kind::halo, "reflect");
    hetero::remove_observer(r);
    { hetero::wait_scope unseen(hetero::wait_kind::user, "after removal"); }
  }
  const std::vector<std::string> expected = {"begin 1 reflect", "end 1 reflect"};
  CHECK(r.events == expected);
}

TEST_CASE("registration is thread-safe while events are emitted", "[core][observer]") {
  auto steady = std::make_shared<recorder>();
  hetero::add_observer(steady);
  std::atomic<bool> stop{false};
  std::vector<std::thread> emitters;
  for (int t = 0; t < 2; ++t)
    emitters.emplace_back([&] {
      for (int i = 0; i < 100 || !stop.load(); ++i) {
        hetero::wait_scope w(hetero::wait_kind::task, "t");
        hetero::mark_phase();
      }
    });
  std::vector<std::shared_ptr<wait_counter>> transient;
  for (int i = 0; i < 200; ++i) {
    transient.push_back(std::make_shared<wait_counter>());
    hetero::add_observer(transient.back());
    if (i % 2) hetero::remove_observer(*transient[static_cast<std::size_t>(i) / 2]);
  }
  stop.store(true);
  for (auto& t : emitters) t.join();
  for (const auto& c : transient) {
    hetero::remove_observer(*c);
    CHECK(c->begins.load() == c->ends.load());  // a begin seen is always ended
  }
  hetero::remove_observer(*steady);
  const auto events = steady->snapshot();
  int begins = 0, ends = 0;
  for (const auto& e : events) {
    begins += e.starts_with("begin") ? 1 : 0;
    ends += e.starts_with("end") ? 1 : 0;
  }
  CHECK(begins == ends);
  CHECK(begins > 0);
}
