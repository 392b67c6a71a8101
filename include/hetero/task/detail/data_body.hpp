/// @file
/// The body of a task with data clauses (or with a host and a device body): when it runs, the
/// data registry has made its pieces valid where it runs (`node_data::place`); this wrapper
/// builds the Views of those copies, in clause order, and calls the user's body with them.
#ifndef HETERO_TASK_DETAIL_DATA_BODY_HPP
#define HETERO_TASK_DETAIL_DATA_BODY_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/task/data.hpp"
#include "hetero/task/detail/node.hpp"

namespace hetero::detail {

/// What a body receives for one argument: a View stays a View, the Views of a range become a
/// span of them.
template <class V>
const V& as_argument(const V& v) noexcept {
  return v;
}
template <class V>
std::span<const V> as_argument(const std::vector<V>& v) noexcept {
  return {v.data(), v.size()};
}

/// A body `Body` of kind `Kind` (0: cpu, 1: device, 2: either, a `host_or_device_body`)
/// receiving the data `Args`: `pieces` in clause order, argument `a` made of pieces
/// `first[a]` to `first[a + 1] - 1`.
template <class Space, int Kind, class Args, class Body>
struct data_task {
  Body body;
  std::vector<const data_state*> pieces;
  std::array<std::uint32_t, Args::size + 1> first{};

  void operator()(node& self, const void* device) {
    const int place = self.extra.data.place;
    if constexpr (Kind == 0) {
      call_host(body, place);
    } else if constexpr (Kind == 1) {
      call_device(body, *static_cast<const Space*>(device), place);
    } else if (device) {
      call_device(body.device, *static_cast<const Space*>(device), place);
    } else {
      call_host(body.host, place);
    }
  }

 private:
  // The View (or the Views of a range) of argument `I` in `place`, as `Memory` holds it.
  template <class Memory, std::size_t I, class A>
  auto argument(int place) const {
    using view = arg_view<Memory, A>;
    if constexpr (A::range) {
      std::vector<view> views;
      views.reserve(first[I + 1] - first[I]);
      for (std::uint32_t k = first[I]; k < first[I + 1]; ++k) views.push_back(data_view<view>(*pieces[k], place));
      return views;
    } else {
      return data_view<view>(*pieces[first[I]], place);
    }
  }

  template <class Memory, class... A>
  auto arguments(data_args<A...>, int place) const {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::make_tuple(argument<Memory, I, A>(place)...);
    }
    (std::make_index_sequence<sizeof...(A)>{});
  }

  template <class F>
  void call_host(F& f, int place) const {
    auto values = arguments<Kokkos::HostSpace>(Args{}, place);
    std::apply([&](const auto&... v) { std::invoke(f, as_argument(v)...); }, values);
  }
  template <class F>
  void call_device(F& f, const Space& space, int place) const {
    auto values = arguments<typename Space::memory_space>(Args{}, place);
    std::apply([&](const auto&... v) { std::invoke(f, space, as_argument(v)...); }, values);
  }
};

/// Stores `body` as the body of `n`, receiving the Views of `pieces` (argument `a` made of
/// `counts[a]` of them).
template <class Space, int Kind, class Args, class Body>
void set_data_body(node& n, std::vector<const data_state*> pieces, const std::vector<std::uint32_t>& counts,
                   Body&& body) {
  using task_type = data_task<Space, Kind, Args, std::decay_t<Body>>;
  struct call {
    void operator()(task_type& b, node& self, const void* device) const { b(self, device); }
  };
  task_type t{std::forward<Body>(body), std::move(pieces), {}};
  for (std::size_t a = 0; a < Args::size; ++a) t.first[a + 1] = t.first[a] + counts[a];
  store_body<call>(n, std::move(t));
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_BODY_HPP
