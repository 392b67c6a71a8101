/// @file
/// `hetero::distributed_array`: an array aligned to a distributed index space (XcalableMP's
/// `align`), each rank holding its block, with optional shadows, in a Kokkos View.
#ifndef HETERO_DISTARRAY_DISTRIBUTED_ARRAY_HPP
#define HETERO_DISTARRAY_DISTRIBUTED_ARRAY_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/staging.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/exchange_mark.hpp"
#include "hetero/distarray/detail/plan_cache.hpp"
#include "hetero/distarray/detail/window.hpp"
#include "hetero/distarray/global_accessor.hpp"
#include "hetero/distarray/index_space.hpp"
#include "hetero/distarray/section.hpp"

namespace hetero {

/// Shadow (halo) widths below and above the block, per axis (XcalableMP's `shadow`).
template <int Rank>
requires supported_rank<Rank>
struct shadow_width {
  std::array<std::int64_t, Rank> lower{};  ///< elements before the block on each axis
  std::array<std::int64_t, Rank> upper{};  ///< elements after the block on each axis

  /// `width` on both sides of every axis.
  static shadow_width uniform(std::int64_t width) {
    shadow_width s;
    s.lower.fill(width);
    s.upper.fill(width);
    return s;
  }
  /// `lower` and `upper` on `axis` only.
  static shadow_width on_axis(int axis, std::int64_t lower, std::int64_t upper) {
    HETERO_EXPECTS(axis >= 0 && axis < Rank, "shadow axis ", axis, " is outside [0, ", Rank, ")");
    shadow_width s;
    s.lower[axis] = lower;
    s.upper[axis] = upper;
    return s;
  }
  /// Whether `axis` has a shadow on either side.
  [[nodiscard]] bool on(int axis) const noexcept { return lower[axis] > 0 || upper[axis] > 0; }
  /// Equal when both widths are equal on every axis.
  friend bool operator==(const shadow_width&, const shadow_width&) = default;
};

/// How a distributed array is created.
template <int Rank>
requires supported_rank<Rank>
struct array_options {
  shadow_width<Rank> shadow{};                                     ///< shadow widths (only block/gen-block axes)
  device_buffer_path device_path = device_buffer_path::automatic;  ///< how transfers reach MPI
  bool one_sided = false;                                          ///< create the RMA window (gmove_get/gmove_put)
  std::string label = "hetero::distributed_array";                 ///< the View's label
};

template <class T, int Rank, class MemorySpace>
requires distributable<T> && supported_rank<Rank> && memory_space<MemorySpace>
class distributed_array;

/// A section of a distributed array: the array and one slice per axis.
template <class T, int Rank, class MemorySpace>
struct distributed_section {
  distributed_array<T, Rank, MemorySpace> array;  ///< The array (a handle sharing its data).
  section_spec<Rank> section{};                   ///< One slice per axis, in global indices.
};

namespace detail {

/// What every copy of a distributed_array handle shares.
template <class T, int Rank, class MemorySpace>
struct array_state {
  array_state(index_space<Rank> s, array_options<Rank> o) : space(std::move(s)), options(std::move(o)) {}
  index_space<Rank> space;
  array_options<Rank> options;
  bool staged = false;
  owned_comm comm;  // the array's own duplicate: its traffic never meets another's
  view_of<T, Rank, Kokkos::LayoutRight, MemorySpace> storage;
  plan_cache plans;
  std::array<std::shared_ptr<void>, (2 << Rank)> halo_plans{};  // by periodic axes and corners
  std::unique_ptr<rma_window<T, Rank, MemorySpace>> window;
  std::atomic<bool> reflect_in_flight{false};  // also guards halo_plans: one reflect at a time
  exchange_mark exchanges;                     // set once a reflect, gmove or sync on it was abandoned
};

}  // namespace detail

/// A `Rank`-dimensional array of `T` aligned to an index space: every rank holds the block it
/// owns (plus shadows) in a row-major `Kokkos::View` in `MemorySpace`. A cheap handle like a
/// View: copies share the data. Construction and destruction are collective.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// -->
/// @code
/// hetero::index_space<2> space({n, n}, hetero::process_grid<2>({0, 1}));
/// hetero::distributed_array<double, 2> u(space, {.shadow = hetero::shadow_width<2>::uniform(1)});
/// auto block = u.local();               // owned elements only
/// auto with_halo = u.local_with_shadow();
/// @endcode
template <class T, int Rank, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
requires distributable<T> && supported_rank<Rank> && memory_space<MemorySpace>
class distributed_array {
 public:
  using value_type = T;              ///< The element type.
  using memory_space = MemorySpace;  ///< The Kokkos memory space of this rank's block.
  /// The block with its shadows, row-major.
  using storage_view = detail::view_of<T, Rank, Kokkos::LayoutRight, MemorySpace>;
  /// The owned block only (a strided view into the storage).
  using local_view = detail::view_of<T, Rank, Kokkos::LayoutStride, MemorySpace>;
  /// Access by global indices in kernels, any distribution.
  using accessor_type = global_accessor<T, Rank, MemorySpace, index_mapping::any>;
  /// Access by global indices in kernels, block and gen-block axes only.
  using block_accessor_type = global_accessor<T, Rank, MemorySpace, index_mapping::blocks>;
  static constexpr int rank = Rank;  ///< The number of axes (1 to 3).

  /// An empty handle.
  distributed_array() = default;

  /// Allocates this rank's block of `space`, zero-initialised (collective). Throws
  /// `distribution_error` for a shadow on a cyclic axis or wider than some rank's block.
  explicit distributed_array(index_space<Rank> space, array_options<Rank> options = {})
      : m_state(
            std::make_shared<detail::array_state<T, Rank, MemorySpace>>(std::move(space), std::move(options))) {
    auto& s = *m_state;
    const auto& shadow = s.options.shadow;
    // The widths are checked in the agreed step below: a rank whose widths differ from the
    // others' and do not fit its block then raises invalid_argument with them, not alone.
    const auto check_and_allocate = [&] {
      std::array<std::int64_t, Rank> extents{};
      const auto local = s.space.local_extents();
      for (int d = 0; d < Rank; ++d) {
        HETERO_EXPECTS(shadow.lower[d] >= 0 && shadow.upper[d] >= 0, "shadow widths on axis ", d, " are ",
                       shadow.lower[d], " and ", shadow.upper[d], "; widths must be >= 0");
        if (shadow.on(d)) check_shadow_fits(d);
        extents[d] = local[d] + shadow.lower[d] + shadow.upper[d];
      }
      s.storage = make_storage(s.options.label, extents);
    };
    s.staged = detail::must_stage<MemorySpace>(s.options.device_path, "distributed_array");
    const auto policy = detail::make_wait_policy(s.space.grid().mpi_comm());
    s.comm =
        detail::duplicate_on_arrival(s.space.grid().mpi_comm(), policy, "hetero::distributed_array construction");
    // A rank whose shadows do not fit or whose block cannot be allocated tells the others before
    // the window's set-up, and ranks that passed different spaces or shadows hear it before
    // their blocks meet.
    std::vector<std::int64_t> layout = s.space.describe();
    layout.insert(layout.end(), {static_cast<std::int64_t>(sizeof(T)), s.options.one_sided ? 1 : 0});
    layout.insert(layout.end(), shadow.lower.begin(), shadow.lower.end());
    layout.insert(layout.end(), shadow.upper.begin(), shadow.upper.end());
    detail::agreed_setup_step(s.comm.get(), policy, "hetero::distributed_array construction (storage)",
                              check_and_allocate,
                              {detail::hash_of(layout),
                               "index spaces (extents, distributions, grid shapes), shadow widths or one_sided"});
    if (s.options.one_sided)
      s.window = std::make_unique<detail::rma_window<T, Rank, MemorySpace>>(
          s.comm.get(), s.storage.data(), static_cast<std::int64_t>(s.storage.span()), s.staged);
  }

  /// Whether this handle holds an array.
  [[nodiscard]] bool valid() const noexcept { return m_state != nullptr; }
  /// The index space the array is aligned to.
  [[nodiscard]] const index_space<Rank>& space() const { return state().space; }
  /// The options it was created with.
  [[nodiscard]] const array_options<Rank>& options() const { return state().options; }
  /// The shadow widths.
  [[nodiscard]] const shadow_width<Rank>& shadow() const { return state().options.shadow; }
  /// Whether its transfers go through host buffers.
  [[nodiscard]] bool staged() const { return state().staged; }
  /// Whether it has an RMA window (created with `one_sided`).
  [[nodiscard]] bool one_sided() const { return state().window != nullptr; }
  /// The communicator of the array's grid: collectives over the ranks that hold the array
  /// (`u.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::max{}))`).
  [[nodiscard]] const communicator& comm() const { return state().space.grid().comm(); }
  /// The MPI communicator that carries the array's own traffic (reflect, gmove, its window): a
  /// duplicate of the grid's, so that it never meets other messages.
  [[nodiscard]] MPI_Comm mpi_comm() const { return state().comm.get(); }
  /// The extents of this rank's block.
  [[nodiscard]] std::array<std::int64_t, Rank> local_extents() const { return state().space.local_extents(); }

  /// This rank's block with its shadows: element l + shadow.lower of each axis is local
  /// index l.
  [[nodiscard]] const storage_view& local_with_shadow() const { return state().storage; }

  /// This rank's block without shadows.
  [[nodiscard]] local_view local() const {
    const auto& s = state();
    const auto e = s.space.local_extents();
    const auto& lo = s.options.shadow.lower;
    auto range = [&](int d) { return Kokkos::pair<std::int64_t, std::int64_t>(lo[d], lo[d] + e[d]); };
    if constexpr (Rank == 1) {
      return Kokkos::subview(s.storage, range(0));
    } else if constexpr (Rank == 2) {
      return Kokkos::subview(s.storage, range(0), range(1));
    } else {
      return Kokkos::subview(s.storage, range(0), range(1), range(2));
    }
  }

  /// Global-index access to this rank's block (and its shadows), for kernels, whatever the
  /// distribution. On arrays whose axes are all block or gen-block, block_view() is faster.
  [[nodiscard]] accessor_type global_view() const { return make_accessor<index_mapping::any>(); }

  /// Global-index access as fast as indexing a View, for arrays whose axes are all block or
  /// gen-block; throws `distribution_error` for a cyclic or block-cyclic axis.
  [[nodiscard]] block_accessor_type block_view() const {
    const auto& space = state().space;
    for (int d = 0; d < Rank; ++d)
      if (!space.axis(d).is_contiguous())
        detail::raise<distribution_error>("block_view: axis ", d, " is ", to_string(space.axis(d).kind()),
                                          "; block_view needs block or gen_block axes (use global_view)");
    return make_accessor<index_mapping::blocks>();
  }

  /// The section `spec` of the array (checked when used).
  [[nodiscard]] distributed_section<T, Rank, MemorySpace> section(const section_spec<Rank>& spec) const {
    return {*this, spec};
  }

  /// Completes every one-sided gmove_get/gmove_put of every rank on this array and makes the
  /// data visible (collective); a barrier for arrays without a window.
  void sync_all() const {
    auto& s = state();
    s.exchanges.run_sync("sync_all", s.options.label, [&](bool& posted) {
      if (s.window) {
        s.window->sync_all("sync_all", posted);
        return;
      }
      const detail::wait_call named{"hetero::distributed_array::", "sync_all", -1, -1};
      const detail::wait_call_scope scope(named);
      MPI_Request request = MPI_REQUEST_NULL;
      posted = true;  // also where MPI_Ibarrier fails: the peers' barrier is posted all the same
      HETERO_MPI_CHECK(MPI_Ibarrier, s.comm.get(), &request);
      detail::wait_one(request, detail::make_wait_policy(s.comm.get()), "sync_all", wait_kind::point_to_point);
    });
  }

  /// Internal state shared by the module's operations.
  [[nodiscard]] detail::array_state<T, Rank, MemorySpace>& state() const {
    if (!m_state) detail::raise<invalid_argument>("hetero::distributed_array: the handle is empty");
    return *m_state;
  }

 private:
  void check_shadow_fits(int d) const {
    const auto& s = *m_state;
    const auto& axis = s.space.axis(d);
    const auto& shadow = s.options.shadow;
    if (!axis.is_contiguous())
      detail::raise<distribution_error>("shadow on axis ", d, ", which is ", to_string(axis.kind()),
                                        "; shadows need a block or gen_block axis");
    const std::int64_t width = std::max(shadow.lower[d], shadow.upper[d]);
    for (int p = 0; p < axis.parts(); ++p)
      if (axis.local_size(p) < width)
        detail::raise<distribution_error>("shadow width ", width, " on axis ", d,
                                          " is wider than the local block of ", "part ", p, " on that axis (",
                                          axis.local_size(p), " elements); allowed: at most the smallest block");
  }

  template <index_mapping Mapping>
  global_accessor<T, Rank, MemorySpace, Mapping> make_accessor() const {
    const auto& s = state();
    Kokkos::Array<std::int64_t, Rank> lower;
    for (int d = 0; d < Rank; ++d) lower[d] = s.options.shadow.lower[d];
    return {s.storage, s.space.maps(), lower};
  }

  static storage_view make_storage(const std::string& label, const std::array<std::int64_t, Rank>& e) {
    auto n = [&](int d) { return static_cast<std::size_t>(e[d]); };
    if constexpr (Rank == 1) {
      return storage_view(label, n(0));
    } else if constexpr (Rank == 2) {
      return storage_view(label, n(0), n(1));
    } else {
      return storage_view(label, n(0), n(1), n(2));
    }
  }

  std::shared_ptr<detail::array_state<T, Rank, MemorySpace>> m_state;
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_DISTRIBUTED_ARRAY_HPP
