// What a wait costs the application when the monitor listens: batches of 1000 empty wait
// scopes with no observer (the baseline: one atomic load each), with the monitor recording
// (its rings drained outside the timing), and with the monitor's reader merging each batch too.
#include <hetero/core/observer.hpp>
#include <hetero/power/monitor.hpp>

#include "bench_main.hpp"

namespace {

constexpr int batch = 1000;

void scopes() {
  for (int i = 0; i < batch; ++i) {
    hetero::wait_scope waiting(hetero::wait_kind::collective, "bench");
    benchmark::ClobberMemory();
  }
}

void no_observer(benchmark::State& state) {
  for (auto _ : state) scopes();
}

template <bool Reader>
void monitored(benchmark::State& state) {
  hetero::power::monitor m;
  m.install();
  for (auto _ : state) {
    scopes();
    if constexpr (Reader) {
      m.update_until(m.seconds());
    } else {
      state.PauseTiming();
      m.update_until(m.seconds());
      state.ResumeTiming();
    }
  }
  m.uninstall();
  if (m.lost_events() != 0) state.SkipWithError("the monitor lost events");
}

const auto configure = [](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kMicrosecond); };
const int registered[] = {hetero::bench::add("wait_scope_x1000/baseline_no_observer", no_observer, configure),
                          hetero::bench::add("wait_scope_x1000/monitor", monitored<false>, configure),
                          hetero::bench::add("wait_scope_x1000/monitor_and_reader", monitored<true>, configure)};

}  // namespace

HETERO_BENCHMARK_MAIN()
