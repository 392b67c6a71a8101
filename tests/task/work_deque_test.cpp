// The scheduler's building blocks under contention: the work-stealing deque loses and
// duplicates nothing, and the idle event wakes a sleeper that was notified.
#include <hetero/task/detail/idle.hpp>
#include <hetero/task/detail/work_deque.hpp>

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

TEST_CASE("a work-stealing deque under three thieves: every item taken exactly once", "[task]") {
  constexpr int items = 200000;
  std::vector<int> storage(items);
  std::vector<std::atomic<int>> taken(items);
  hetero::detail::work_deque<int*> deque(8);  // small: it grows while thieves steal
  std::atomic<bool> done{false};
  std::atomic<int> count{0};
  const auto take = [&](int* p) {
    taken[static_cast<std::size_t>(p - storage.data())].fetch_add(1);
    count.fetch_add(1);
  };
  std::vector<std::thread> thieves;
  for (int t = 0; t < 3; ++t)
    thieves.emplace_back([&] {
      while (!done.load() || deque.size_hint() > 0)
        if (int* p = deque.steal()) take(p);
    });
  for (int i = 0; i < items; ++i) {
    if (i % 3 == 2) {
      int* batch[2] = {&storage[static_cast<std::size_t>(i)], nullptr};
      deque.push_bulk(std::span<int* const>(batch, 1));
    } else {
      deque.push(&storage[static_cast<std::size_t>(i)]);
    }
    if (i % 5 == 0)
      if (int* p = deque.pop()) take(p);
  }
  while (int* p = deque.pop()) take(p);
  done = true;
  for (auto& t : thieves) t.join();
  CHECK(count.load() == items);
  int wrong = 0;
  for (auto& t : taken) wrong += t.load() != 1;
  CHECK(wrong == 0);
}

namespace {

// One producer hands 20000 items, one at a time, to one sleeper; `noise` more threads call
// notify_one without making work, which makes notifications land inside the sleeper's
// prepare_wait far more often than the producer alone does. A lost wake-up leaves the sleeper
// asleep while an item waits: the producer then gives up after `patience` (a failure, not a
// hang) and wakes it with notify_all.
int items_consumed_with_noise(int noise, std::chrono::seconds patience) {
  constexpr int items = 20000;
  hetero::detail::idle_event idle;
  std::atomic<int> work{0};
  std::atomic<bool> stop{false};
  std::atomic<int> consumed{0};
  std::thread sleeper([&] {
    while (!stop.load()) {
      if (work.load() > 0) {
        work.fetch_sub(1);
        consumed.fetch_add(1);
        continue;
      }
      const auto ticket = idle.prepare_wait();
      if (work.load() > 0 || stop.load()) {
        idle.cancel_wait();
        continue;
      }
      idle.wait(ticket, std::chrono::nanoseconds(0));  // untimed: only a notification wakes it
    }
  });
  std::vector<std::thread> notifiers;
  for (int i = 0; i < noise; ++i)
    notifiers.emplace_back([&] {
      while (!stop.load()) {
        idle.notify_one();
        std::this_thread::yield();
      }
    });
  for (int i = 0; i < items && !stop.load(); ++i) {
    work.fetch_add(1, std::memory_order_seq_cst);
    idle.notify_one();
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (work.load() > 0)
      if (std::chrono::steady_clock::now() > deadline) {
        stop = true;  // the sleeper missed a wake-up
        break;
      } else {
        std::this_thread::yield();
      }
  }
  stop = true;
  idle.notify_all();
  sleeper.join();
  for (auto& t : notifiers) t.join();
  return consumed.load();
}

}  // namespace

TEST_CASE("an idle event never loses a wake-up", "[task]") {
  CHECK(items_consumed_with_noise(0, std::chrono::seconds(10)) == 20000);
  CHECK(items_consumed_with_noise(1, std::chrono::seconds(10)) == 20000);
  CHECK(items_consumed_with_noise(2, std::chrono::seconds(10)) == 20000);
}
