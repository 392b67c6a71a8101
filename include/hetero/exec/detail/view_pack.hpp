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

/// `f(i, views...)`: the element body of `parallel_for`.
template <class Functor, class Pack, class Indices>
struct for_body;

template <class Functor, class Pack, std::size_t... Is>
struct for_body<Functor, Pack, std::index_sequence<Is...>> {
  Functor functor;
  Pack views;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { functor(i, get_view<Is>(views)...); }
};

/// `f(i, views..., update)`: the element body of `parallel_reduce`.
template <class Functor, class Pack, class Value, class Indices>
struct reduce_body;

template <class Functor, class Pack, class Value, std::size_t... Is>
struct reduce_body<Functor, Pack, Value, std::index_sequence<Is...>> {
  using value_type = Value;
  Functor functor;
  Pack views;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, Value& update) const {
    functor(i, get_view<Is>(views)..., update);
  }
};

/// Binds a tuple of views to `f` for `parallel_for`.
template <class Functor, class... Views>
auto bind_for(const Functor& f, const std::tuple<Views...>& views) {
  using pack = view_pack<Views...>;
  return for_body<Functor, pack, std::index_sequence_for<Views...>>{
      f, std::apply([](const auto&... v) { return make_view_pack(v...); }, views)};
}

/// Binds a tuple of views to `f` for `parallel_reduce` with values of type `Value`.
template <class Value, class Functor, class... Views>
auto bind_reduce(const Functor& f, const std::tuple<Views...>& views) {
  using pack = view_pack<Views...>;
  return reduce_body<Functor, pack, Value, std::index_sequence_for<Views...>>{
      f, std::apply([](const auto&... v) { return make_view_pack(v...); }, views)};
}

/// The body one side runs: the user's functor itself without mirrored arrays, else the functor
/// bound to that side's views (`Value`: void for `parallel_for`, the reduction's value type).
template <class Value, class Functor, class... Views>
auto side_body(const Functor& f, const std::tuple<Views...>& views) {
  if constexpr (sizeof...(Views) == 0) {
    return f;
  } else if constexpr (std::is_void_v<Value>) {
    return bind_for(f, views);
  } else {
    return bind_reduce<Value>(f, views);
  }
}

}  // namespace hetero::detail

#endif  // HETERO_EXEC_DETAIL_VIEW_PACK_HPP
