/// @file
/// The body of a task with data clauses (or with a host and a device body): when it runs, the
/// data registry has made its pieces valid where it runs (`node_data::place`); this wrapper
/// builds the Views of those copies, in clause order, and calls the user's body with them.
#ifndef HETERO_TASK_DETAIL_DATA_BODY_HPP
#define HETERO_TASK_DETAIL_DATA_BODY_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/task/data.hpp"
#include "hetero/task/detail/node.hpp"

namespace hetero::detail {

/// The Views of a range argument: up to 8 inline (the common case: no allocation per task),
/// more on the heap.
template <class V>
class view_list {
 public:
  void reserve(std::size_t n) {
    if (n > m_inline.size()) m_heap.reserve(n);
  }
  void push_back(const V& v) {
    if (m_heap.capacity() > 0) {
      m_heap.push_back(v);
    } else {
      m_inline[m_count++] = v;
    }
  }
  [[nodiscard]] std::span<const V> span() const noexcept {
    return m_heap.capacity() > 0 ? std::span<const V>(m_heap) : std::span<const V>(m_inline.data(), m_count);
  }

 private:
  std::array<V, 8> m_inline{};
  std::size_t m_count = 0;
  std::vector<V> m_heap;
};

/// What a body receives for one argument: a View stays a View, the Views of a range become a
/// span of them.
template <class V>
const V& as_argument(const V& v) noexcept {
  return v;
}
template <class V>
std::span<const V> as_argument(const view_list<V>& v) noexcept {
  return v.span();
}

/// A body `Body` of kind `Kind` (0: cpu, 1: device, 2: either, a `host_or_device_body`)
/// receiving the data `Args`: the node's data uses in clause order (`node_data::uses`),
/// argument `a` made of uses `first[a]` to `first[a + 1] - 1`.
template <class Space, int Kind, class Args, class Body>
struct data_task {
  Body body;
  std::array<std::uint16_t, Args::size + 1> first{};

  void operator()(node& self, const void* device) {
    const node_data& d = self.extra.data;
    if constexpr (Kind == 0) {
      call_host(body, d);
    } else if constexpr (Kind == 1) {
      call_device(body, *static_cast<const Space*>(device), d);
    } else if (device) {
      call_device(body.device, *static_cast<const Space*>(device), d);
    } else {
      call_host(body.host, d);
    }
  }

 private:
  // The View (or the Views of a range) of argument `I` where the node runs, as `Memory` holds it.
  template <class Memory, std::size_t I, class A>
  auto argument(const node_data& d) const {
    using view = arg_view<Memory, A>;
    if constexpr (A::range) {
      view_list<view> views;
      views.reserve(first[I + 1] - first[I]);
      for (std::uint32_t k = first[I]; k < first[I + 1]; ++k)
        views.push_back(data_view<view>(*d.uses[k].data, d.place));
      return views;
    } else {
      return data_view<view>(*d.uses[first[I]].data, d.place);
    }
  }

  template <class Memory, class... A>
  auto arguments(data_args<A...>, const node_data& d) const {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::make_tuple(argument<Memory, I, A>(d)...);
    }
    (std::make_index_sequence<sizeof...(A)>{});
  }

  template <class F>
  void call_host(F& f, const node_data& d) const {
    auto values = arguments<Kokkos::HostSpace>(Args{}, d);
    std::apply([&](const auto&... v) { std::invoke(f, as_argument(v)...); }, values);
  }
  template <class F>
  void call_device(F& f, const Space& space, const node_data& d) const {
    auto values = arguments<typename Space::memory_space>(Args{}, d);
    std::apply([&](const auto&... v) { std::invoke(f, space, as_argument(v)...); }, values);
  }
};

/// Calls a `data_task` as `b(n, device)`.
struct data_call {
  template <class B>
  void operator()(B& b, node& self, const void* device) const {
    b(self, device);
  }
};

/// `body` made ready to be the body of a node, receiving the Views of the node's data uses
/// (argument `a` made of `counts[a]` of them): copied here, before the node is taken.
template <class Space, int Kind, class Args, class Body, std::size_t N>
auto prepare_data_body(const std::array<std::uint32_t, N>& counts, Body&& body) {
  using task_type = data_task<Space, Kind, Args, std::decay_t<Body>>;
  task_type t{std::forward<Body>(body), {}};
  std::size_t total = 0;
  for (std::size_t a = 0; a < Args::size; ++a) {
    total += counts[a];
    // More than max_data_uses: graph_engine::declare_with_data refuses the task, naming it, before
    // this body is stored.
    t.first[a + 1] = static_cast<std::uint16_t>(std::min<std::size_t>(total, max_data_uses));
  }
  return prepared_body<data_call, task_type>(std::move(t));
}

}  // namespace hetero::detail

#endif  // HETERO_TASK_DETAIL_DATA_BODY_HPP
