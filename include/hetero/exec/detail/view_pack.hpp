/// @file
/// Loop bodies with the views of their mirrored arrays bound: what runs on each side is the
/// user's functor called with the index, that side's views and (for reductions) the update.
/// A recursive pack rather than std::tuple, which is not usable in device code.
#ifndef HETERO_EXEC_DETAIL_VIEW_PACK_HPP
#define HETERO_EXEC_DETAIL_VIEW_PACK_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace hetero::detail {

template <class... Views>
struct view_pack {};

template <class View, class... Rest>
struct view_pack<View, Rest...> {
  View head;
  view_pack<Rest...> tail;
};

template <std::size_t I, class Pack>
KOKKOS_INLINE_FUNCTION const auto& get_view(const Pack& pack) {
  if constexpr (I == 0) {
    return pack.head;
  } else {
    return get_view<I - 1>(pack.tail);
  }
}

inline view_pack<> make_view_pack() { return {}; }

template <class View, class... Rest>
view_pack<View, Rest...> make_view_pack(const View& head, const Rest&... rest) {
  return {head, make_view_pack(rest...)};
}

// The bodies come in two forms: host-device for a GPU side (the user's functor must then be
// device code, and nvcc checks it), host-only for a host side, where a plain lambda is a valid
// body and a host-device wrapper around it would draw nvcc's cross-space warnings.

/// `f(i, views...)`: the element body of `parallel_for`.
template <class Functor, class Pack, class Indices, bool Device>
struct for_body;

template <class Functor, class Pack, std::size_t... Is>
struct for_body<Functor, Pack, std::index_sequence<Is...>, true> {
  Functor functor;
  Pack views;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { functor(i, get_view<Is>(views)...); }
};

template <class Functor, class Pack, std::size_t... Is>
struct for_body<Functor, Pack, std::index_sequence<Is...>, false> {
  Functor functor;
  Pack views;
  void operator()(const std::int64_t i) const { functor(i, get_view<Is>(views)...); }
};

/// `f(i, views..., update)`: the element body of `parallel_reduce`.
template <class Functor, class Pack, class Value, class Indices, bool Device>
struct reduce_body;

template <class Functor, class Pack, class Value, std::size_t... Is>
struct reduce_body<Functor, Pack, Value, std::index_sequence<Is...>, true> {
  using value_type = Value;
  Functor functor;
  Pack views;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, Value& update) const {
    functor(i, get_view<Is>(views)..., update);
  }
};

template <class Functor, class Pack, class Value, std::size_t... Is>
struct reduce_body<Functor, Pack, Value, std::index_sequence<Is...>, false> {
  using value_type = Value;
  Functor functor;
  Pack views;
  void operator()(const std::int64_t i, Value& update) const { functor(i, get_view<Is>(views)..., update); }
};

template <class... Views>
auto pack_views(const std::tuple<Views...>& views) {
  return std::apply([](const auto&... v) { return make_view_pack(v...); }, views);
}

/// The body one side runs: the user's functor itself without mirrored arrays, else the functor
/// bound to that side's views (`Value`: void for `parallel_for`, the reduction's value type;
/// `Device`: the side runs on a GPU).
template <class Value, bool Device, class Functor, class... Views>
auto side_body(const Functor& f, const std::tuple<Views...>& views) {
  using pack = view_pack<Views...>;
  using indices = std::index_sequence_for<Views...>;
  if constexpr (sizeof...(Views) == 0) {
    return f;
  } else if constexpr (std::is_void_v<Value>) {
    return for_body<Functor, pack, indices, Device>{f, pack_views(views)};
  } else {
    return reduce_body<Functor, pack, Value, indices, Device>{f, pack_views(views)};
  }
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_VIEW_PACK_HPP
