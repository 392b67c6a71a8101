/// @file
/// One-sided gmove (XcalableMP's `gmove in` / `gmove out`): one rank reads a section of a
/// distributed array from its owners, or writes one to them, through the array's RMA window
/// (created once with the array: `array_options::one_sided`). Not collective.
#ifndef HETERO_DISTARRAY_ONE_SIDED_HPP
#define HETERO_DISTARRAY_ONE_SIDED_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/distarray/detail/operand.hpp"
#include "hetero/distarray/detail/origin.hpp"
#include "hetero/distarray/detail/rows.hpp"
#include "hetero/distarray/detail/section_map.hpp"
#include "hetero/distarray/distributed_array.hpp"

namespace hetero {

namespace detail {

/// For one rank's one-sided access: per owner, the boxes in its storage; and the rows of
/// the local side, in the same element order (owner by owner).
template <int Rank, class LocalSpace>
struct one_sided_plan {
  struct target {
    int rank = 0;
    std::vector<strided_box<Rank>> boxes;
    std::int64_t first = 0;  ///< position of its elements in the contiguous origin buffer
    std::int64_t count = 0;
  };
  std::vector<target> targets;
  row_list<LocalSpace> local_rows;
  std::int64_t elements = 0;
  bool local_contiguous = false;  ///< the local side is one run: MPI may use it directly
  std::int64_t local_offset = 0;
};

template <class T, int Rank, class ArraySpace, class LocalSpace>
std::shared_ptr<one_sided_plan<Rank, LocalSpace>> one_sided_plan_for(const operand<T, Rank, ArraySpace>& array,
                                                                     const operand<T, Rank, LocalSpace>& local,
                                                                     bool get) {
  auto plan = std::make_shared<one_sided_plan<Rank, LocalSpace>>();
  std::vector<row> rows;
  const auto pairs = get ? exchange_boxes(array.side, local.side, walk::all, group::src_owner)
                         : exchange_boxes(local.side, array.side, walk::all, group::dst_owner);
  for (const auto& p : pairs) {
    typename one_sided_plan<Rank, LocalSpace>::target t;
    t.rank = p.peer;
    t.boxes = get ? p.src_boxes : p.dst_boxes;
    t.first = plan->elements;
    for (const auto& box : get ? p.dst_boxes : p.src_boxes) append_rows(box, rows, plan->elements, 0);
    t.count = plan->elements - t.first;
    plan->targets.push_back(std::move(t));
  }
  plan->local_contiguous = rows.size() == 1 && (rows[0].stride == 1 || rows[0].count == 1);
  if (plan->local_contiguous) plan->local_offset = rows[0].storage_offset;
  plan->local_rows = row_list<LocalSpace>(rows);
  return plan;
}

template <class T, int Rank, class ArraySpace, class LocalSpace>
void one_sided(const operand<T, Rank, ArraySpace>& array, const operand<T, Rank, LocalSpace>& local, bool get) {
  const char* name = get ? "gmove_get" : "gmove_put";
  if (array.shape() != local.shape())
    raise<invalid_argument>(name, ": the local section has shape ", format_array(local.shape()),
                            " but the array section has shape ", format_array(array.shape()),
                            "; both sections must have the same number of indices on every axis");
  auto& window = array.state->window;
  if (!window)
    raise<invalid_argument>(name, ": array '", array.state->options.label,
                            "' has no RMA window; create it with array_options::one_sided = true");
  plan_key key;
  key.add(static_cast<std::int64_t>(sizeof(T)));
  array.describe(key);
  local.describe(key);
  auto plan = array.state->plans.template get<one_sided_plan<Rank, LocalSpace>>(
      get ? "get" : "put", key.str(), false, [&] { return one_sided_plan_for(array, local, get); });
  if (plan->elements == 0) return;

  const origin_side<T, ArraySpace, LocalSpace> origin(
      window->staged(), plan->local_contiguous ? local.data + plan->local_offset : nullptr,
      static_cast<std::size_t>(plan->elements), name);
  if (get) {
    for (const auto& t : plan->targets) window->get(t.rank, t.boxes, origin.data() + t.first, name);
    origin.to_local(plan->local_rows, local.data);
  } else {
    origin.from_local(plan->local_rows, local.data);
    for (const auto& t : plan->targets) window->put(t.rank, t.boxes, origin.data() + t.first, name);
  }
}

}  // namespace detail

/// Reads the section `src` of a distributed array into `dst` (a local View or a section of
/// one, on this rank only) with one-sided gets from the owners; complete on return. Reads
/// what the owners held at their last `sync_all()` (or later writes, for host memory).
/// <!-- snippet: fragment
/// hetero::distributed_array<double, 1> a(hetero::block_space(100), {.one_sided = true});
/// Kokkos::View<double*, Kokkos::HostSpace> b("b", 25);
/// -->
/// @code
/// hetero::gmove_get(hetero::section(b, {hetero::slice{0, 25}}), a.section({hetero::slice{0, 25}}));
/// @endcode
template <class Dst, class T, int Rank, class MemorySpace>
void gmove_get(const Dst& dst, const distributed_section<T, Rank, MemorySpace>& src) {
  const auto local = detail::make_operand(dst, "gmove_get destination");
  static_assert(std::is_same_v<typename decltype(local)::value_type, T>,
                "hetero: gmove_get needs the same element type on both sides");
  static_assert(decltype(local)::rank == Rank, "hetero: gmove_get needs sections of the same rank");
  if (!local.writable) detail::raise<invalid_argument>("gmove_get: the destination is a View of const elements");
  detail::one_sided(detail::make_operand(src, "gmove_get source"), local, true);
}

/// Writes `src` (a local View or a section of one) into the section `dst` of a distributed
/// array with one-sided puts to the owners; complete at the owners on return, visible in
/// their `local()` after the next `sync_all()` of the array.
template <class T, int Rank, class MemorySpace, class Src>
void gmove_put(const distributed_section<T, Rank, MemorySpace>& dst, const Src& src) {
  const auto local = detail::make_operand(src, "gmove_put source");
  static_assert(std::is_same_v<typename decltype(local)::value_type, T>,
                "hetero: gmove_put needs the same element type on both sides");
  static_assert(decltype(local)::rank == Rank, "hetero: gmove_put needs sections of the same rank");
  detail::one_sided(detail::make_operand(dst, "gmove_put destination"), local, false);
}

}  // namespace hetero

#endif  // HETERO_DISTARRAY_ONE_SIDED_HPP
