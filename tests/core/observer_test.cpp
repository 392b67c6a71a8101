#include <hetero/core/observer.hpp>

#include <catch2/catch_test_macros.hpp>

#include <mutex>
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
