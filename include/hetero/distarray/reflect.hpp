/// @file
/// `hetero::reflect`: refreshes the shadows of a distributed array from the neighbouring
/// blocks (XcalableMP's `reflect`), blocking or asynchronous.
#ifndef HETERO_DISTARRAY_REFLECT_HPP
#define HETERO_DISTARRAY_REFLECT_HPP

#include <array>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/detail/halo_plan.hpp"
#include "hetero/distarray/detail/plan_cache.hpp"  // plan_builds
#include "hetero/distarray/detail/transfer.hpp"
#include "hetero/distarray/distributed_array.hpp"

namespace hetero {

/// How a reflect treats the edges of the index space and the corners of the shadows.
template <int Rank>
requires supported_rank<Rank>
struct reflect_options {
  /// Per axis: the shadow below index 0 holds the last indices and the shadow above the last
  /// index holds the first ones. Non-periodic shadows past the edges are left as they are.
  std::array<bool, Rank> periodic{};
  /// Also refresh the corners and edges where shadows of two or more axes meet (needed by
  /// 9-point and 27-point stencils). Costs one exchange phase per axis with a shadow instead
  /// of one phase for all axes.
  bool corners = true;
};

template <class T, int Rank, class MemorySpace>
class reflect_handle;

namespace detail {

/// What a reflect of the array of `state` that gives up keeps (the storage its released sends
/// read) and marks (the array).
template <class State>
abandon_targets abandon_targets_of_reflect(State& state) noexcept {
  return {storage_keeper::of(state), &state.exchanges, "reflect"};
}

}  // namespace detail

/// Starts refreshing the shadows of `array` (collective) and returns at once; the shadows are
/// refreshed when the handle's wait() returns. The exchange plan is made on first use per
/// set of options and kept with the array.
/// <!-- snippet: fragment
/// hetero::index_space<2> space({64, 64}, hetero::process_grid<2>());
/// hetero::distributed_array<double, 2> u(space, {.shadow = hetero::shadow_width<2>::uniform(1)});
/// auto interior_sweep = [] {};
/// -->
/// @code
/// auto halo = hetero::reflect_async(u);
/// interior_sweep();  // work that does not read the shadows
/// halo.wait();
/// @endcode
template <class T, int Rank, class MemorySpace>
reflect_handle<T, Rank, MemorySpace> reflect_async(const distributed_array<T, Rank, MemorySpace>& array,
                                                   const reflect_options<Rank>& options = {});

/// An asynchronous reflect in flight: wait() completes it; test() reports progress. A handle
/// that is destroyed without wait() waits in its destructor. Only one reflect of an array may
/// be in flight at a time.
template <class T, int Rank, class MemorySpace>
class reflect_handle {
 public:
  reflect_handle(const reflect_handle&) = delete;
  reflect_handle& operator=(const reflect_handle&) = delete;
  /// Takes over `other`'s reflect; `other` is left with nothing in flight.
  reflect_handle(reflect_handle&& other) noexcept
      : m_array(std::move(other.m_array)), m_plan(std::move(other.m_plan)), m_phase(other.m_phase) {
    if (other.m_run) m_run.emplace(std::move(*other.m_run));
    other.m_run.reset();
    other.m_plan.reset();
  }
  reflect_handle& operator=(reflect_handle&&) = delete;

  ~reflect_handle() {
    if (!m_plan) return;
    try {
      wait();
    } catch (...) {  // a destructor must not throw; the error already reached whoever waits
      release();
    }
  }

  /// Completes the reflect: every shadow is refreshed on return.
  void wait() {
    if (!m_plan) return;
    try {
      while (m_run) {
        m_run->wait("reflect");
        next_phase();
      }
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  /// Progresses without blocking; true once the reflect is complete (wait() then returns at
  /// once). Later phases of a corner-refreshing reflect start here as earlier ones complete.
  bool test() {
    if (!m_plan) return true;
    try {
      while (m_run && m_run->test()) {
        m_run->wait("reflect");
        next_phase();
      }
    } catch (...) {
      release();
      throw;
    }
    if (m_run) return false;
    release();
    return true;
  }

  /// Whether the reflect has completed (by wait() or test()).
  [[nodiscard]] bool done() const noexcept { return !m_plan; }

 private:
  template <class U, int R, class M>
  friend reflect_handle<U, R, M> reflect_async(const distributed_array<U, R, M>&, const reflect_options<R>&);

  using plan_type = detail::halo_plan<T, MemorySpace>;

  reflect_handle(distributed_array<T, Rank, MemorySpace> array, std::shared_ptr<plan_type> plan)
      : m_array(std::move(array)), m_plan(std::move(plan)) {
    try {
      start_phase();
    } catch (...) {
      release();
      throw;
    }
  }

  void start_phase() {
    m_run.reset();
    if (m_phase >= m_plan->phases.size()) return;
    T* storage = m_array.local_with_shadow().data();
    m_run.emplace(m_plan->phases[m_phase], m_array.mpi_comm(), storage, storage,
                  detail::abandon_targets_of_reflect(m_array.state()));
    m_run->start();
  }
  void next_phase() {
    ++m_phase;
    start_phase();
  }
  void release() noexcept {
    m_run.reset();
    if (m_plan) m_array.state().reflect_in_flight = false;
    m_plan.reset();
  }
  distributed_array<T, Rank, MemorySpace> m_array;
  std::shared_ptr<plan_type> m_plan;
  std::size_t m_phase = 0;
  std::optional<detail::transfer_run<T, MemorySpace, MemorySpace>> m_run;
};

namespace detail {

/// Marks `array` as reflecting (refusing a second reflect in flight) and returns its plan for
/// `options`, made on first use. The mark makes this rank the only user of the array's halo
/// plans until it is cleared.
template <class T, int Rank, class MemorySpace>
std::shared_ptr<void>& begin_reflect(array_state<T, Rank, MemorySpace>& state,
                                     const reflect_options<Rank>& options) {
  state.exchanges.check("reflect", state.options.label);
  if (state.reflect_in_flight.exchange(true))
    raise<runtime_error>("reflect: a reflect of array '", state.options.label,
                         "' is still in flight; wait for its handle before starting another");
  std::size_t slot = options.corners ? 1 : 0;
  for (int d = 0; d < Rank; ++d) slot |= options.periodic[d] ? std::size_t{2} << d : 0;
  auto& cached = state.halo_plans[slot];
  try {
    if (!cached) {
      cached = make_halo_plan<T, Rank, MemorySpace>(state.space, state.options.shadow, options.periodic,
                                                    options.corners, state.staged);
      ++plan_builds();
    }
  } catch (...) {
    state.reflect_in_flight = false;
    throw;
  }
  return cached;
}

}  // namespace detail

template <class T, int Rank, class MemorySpace>
reflect_handle<T, Rank, MemorySpace> reflect_async(const distributed_array<T, Rank, MemorySpace>& array,
                                                   const reflect_options<Rank>& options) {
  const region running("distarray", "reflect_async");
  const auto& plan = detail::begin_reflect(array.state(), options);
  return reflect_handle<T, Rank, MemorySpace>(array,
                                              std::static_pointer_cast<detail::halo_plan<T, MemorySpace>>(plan));
}

/// Refreshes the shadows of `array` from the neighbouring blocks (collective); returns when
/// every shadow element is refreshed.
/// <!-- snippet: fragment
/// hetero::index_space<2> space({64, 64}, hetero::process_grid<2>());
/// hetero::distributed_array<double, 2> u(space, {.shadow = hetero::shadow_width<2>::uniform(1)});
/// -->
/// @code
/// hetero::reflect(u, {.periodic = {true, false}});
/// @endcode
template <class T, int Rank, class MemorySpace>
void reflect(const distributed_array<T, Rank, MemorySpace>& array, const reflect_options<Rank>& options = {}) {
  // The blocking form runs the phases in place: no handle, no reference counting.
  const region running("distarray", "reflect");
  auto& state = array.state();
  auto& plan = *static_cast<detail::halo_plan<T, MemorySpace>*>(detail::begin_reflect(state, options).get());
  struct release {
    std::atomic<bool>& flag;
    ~release() { flag = false; }
  } done{state.reflect_in_flight};
  T* storage = state.storage.data();
  for (auto& phase : plan.phases) {
    detail::transfer_run<T, MemorySpace, MemorySpace> run(phase, state.comm.get(), storage, storage,
                                                          detail::abandon_targets_of_reflect(state));
    run.start();
    run.wait("reflect");
  }
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_REFLECT_HPP
