/// @file
/// What gmove and its one-sided forms need to know about either side of an assignment,
/// whether it is a distributed array (or a section of one) or a local Kokkos View (or a
/// section of one) present on every rank.
#ifndef HETERO_DISTARRAY_DETAIL_OPERAND_HPP
#define HETERO_DISTARRAY_DETAIL_OPERAND_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "hetero/core/mpi/staging.hpp"
#include "hetero/distarray/detail/plan_cache.hpp"
#include "hetero/distarray/detail/section_map.hpp"
#include "hetero/distarray/distributed_array.hpp"

namespace hetero {

/// A section of a local Kokkos View (an array every rank has its own copy of).
template <class View>
requires Kokkos::is_view<View>::value struct local_section {
  View view;
  section_spec<static_cast<int>(View::rank)> section{};
};

/// The section `spec` of the local View `view`, for gmove.
/// <!-- snippet: fragment
/// hetero::distributed_array<double, 2> a(hetero::index_space<2>({10, 10}, hetero::process_grid<2>()));
/// -->
/// @code
/// Kokkos::View<double**, Kokkos::HostSpace> b("b", 10, 10);
/// hetero::gmove(hetero::section(b, {hetero::slice{0, 5}, hetero::slice::all()}),
///               a.section({hetero::slice{0, 5}, hetero::slice::all()}));
/// @endcode
template <class View>
requires Kokkos::is_view<View>::value local_section<View> section(
    const View& view, const section_spec<static_cast<int>(View::rank)>& spec) {
  return {view, spec};
}

/// The section `spec` of the distributed array `array`.
template <class T, int Rank, class MemorySpace>
distributed_section<T, Rank, MemorySpace> section(const distributed_array<T, Rank, MemorySpace>& array,
                                                  const std::type_identity_t<section_spec<Rank>>& spec) {
  return array.section(spec);
}

namespace detail {

/// One side of a gmove, resolved.
template <class T, int Rank, class MemorySpace>
struct operand {
  using value_type = T;
  using memory_space = MemorySpace;
  static constexpr int rank = Rank;

  section_side<Rank> side;
  T* data = nullptr;
  std::size_t span = 0;
  bool staged = false;
  bool writable = true;
  array_state<T, Rank, MemorySpace>* state = nullptr;  ///< distributed only
  std::array<std::int64_t, Rank> extents{};

  [[nodiscard]] bool distributed() const noexcept { return state != nullptr; }
  [[nodiscard]] MPI_Comm comm() const noexcept { return state ? state->comm.get() : MPI_COMM_NULL; }
  [[nodiscard]] std::array<std::int64_t, Rank> shape() const { return section_shape(side.section); }

  /// What a cached plan depends on: the layout, the storage, the section, the staging.
  void describe(plan_key& key) const {
    key.add(distributed() ? side.space->describe() : std::vector<std::int64_t>{}).add(extents);
    key.add(side.shadow_lower).add(side.shadow_upper).add(side.local_strides);
    for (const auto& s : side.section) key.add(s.begin).add(s.end).add(s.step);
    key.add(MemorySpace::name()).add(staged ? 1 : 0);
  }
};

template <class T, int Rank, class MemorySpace>
operand<T, Rank, MemorySpace> make_operand(const distributed_section<T, Rank, MemorySpace>& s,
                                           std::string_view what) {
  auto& state = s.array.state();
  operand<T, Rank, MemorySpace> o;
  o.state = &state;
  o.extents = state.space.extents();
  o.side.space = &state.space;
  o.side.section = resolve_section(s.section, o.extents, what);
  o.side.shadow_lower = state.options.shadow.lower;
  o.side.shadow_upper = state.options.shadow.upper;
  o.data = state.storage.data();
  o.span = state.storage.span();
  o.staged = state.staged;
  return o;
}

template <class T, int Rank, class MemorySpace>
operand<T, Rank, MemorySpace> make_operand(const distributed_array<T, Rank, MemorySpace>& a,
                                           std::string_view what) {
  section_spec<Rank> all{};
  return make_operand(a.section(all), what);
}

template <class View>
auto make_operand(const local_section<View>& s, std::string_view what) {
  constexpr int rank = static_cast<int>(View::rank);
  using value = typename View::non_const_value_type;
  using space = typename View::memory_space;
  static_assert(rank >= 1 && rank <= max_dist_rank, "hetero: gmove takes Views of rank 1 to 3");
  operand<value, rank, space> o;
  for (int d = 0; d < rank; ++d) {
    o.extents[d] = static_cast<std::int64_t>(s.view.extent(d));
    o.side.local_strides[d] = static_cast<std::int64_t>(s.view.stride(d));
  }
  o.side.section = resolve_section(s.section, o.extents, what);
  o.data = const_cast<value*>(s.view.data());
  o.span = s.view.span();
  o.staged = must_stage<space>(device_buffer_path::automatic, "gmove");
  o.writable = !std::is_const_v<typename View::value_type>;
  return o;
}

template <class View>
requires Kokkos::is_view<View>::value auto make_operand(const View& v, std::string_view what) {
  section_spec<static_cast<int>(View::rank)> all{};
  return make_operand(local_section<View>{v, all}, what);
}

/// Whether two storages overlap in memory (then a gmove must not read what it writes).
inline bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_DISTARRAY_DETAIL_OPERAND_HPP
