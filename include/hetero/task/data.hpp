/// @file
/// Task data: a Kokkos View, or the tiles of a matrix spread over ranks, registered with a
/// task graph once (`graph.data`, `graph.tiles`), and the clauses that use it in a task:
/// `hetero::reads`, `hetero::writes`, `hetero::updates`. A data clause orders the task as an
/// event would (OpenMP `depend` semantics, across ranks too) and hands the body a View of a
/// valid copy in the memory where the body runs; the graph moves the copies (host, device,
/// other ranks) as the tasks need them.
#ifndef HETERO_TASK_DATA_HPP
#define HETERO_TASK_DATA_HPP

#include <Kokkos_Core.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/concepts.hpp"
#include "hetero/core/error.hpp"
#include "hetero/task/detail/data_registry.hpp"
#include "hetero/task/detail/data_state.hpp"

namespace hetero {

/// A View that can be registered as task data: contiguous by its layout (`LayoutLeft` or
/// `LayoutRight`), in memory the host can address, of at most 8 dimensions.
template <class V>
concept task_data_view = Kokkos::is_view<V>::value && detail::host_addressable<typename V::memory_space> &&
    (std::same_as<typename V::array_layout, Kokkos::LayoutLeft> ||
     std::same_as<typename V::array_layout, Kokkos::LayoutRight>)&&(V::traits::rank >= 1 &&
                                                                    V::traits::rank <= detail::max_data_rank);

namespace detail {

/// Keeps pieces of data registered with a graph while a user's handle holds them; the last
/// handle gone drops them (the graph names the ones that tasks still used in `wait()`'s error).
struct data_registration {
  std::vector<std::shared_ptr<data_state>> pieces;
  std::thread::id declaring = std::this_thread::get_id();

  data_registration() = default;
  data_registration(const data_registration&) = delete;
  data_registration& operator=(const data_registration&) = delete;
  ~data_registration() {
    std::vector<std::shared_ptr<data_state>> live;
    for (const auto& p : pieces)
      if (p && p->registry) live.push_back(p);
    if (!live.empty()) live.front()->registry->drop(live);
  }
};

/// The View of piece `s` in `place` as `View` (unmanaged, the piece's extents).
template <class View>
View data_view(const data_state& s, int place) {
  // A tile of a rank of this node is read in place, in its owner's memory (only owners write).
  const void* from =
      place == host_place && s.node_source ? s.node_source : s.copies[static_cast<std::size_t>(place)].ptr;
  auto* p = static_cast<typename View::pointer_type>(const_cast<void*>(from));
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return View(p, static_cast<std::size_t>(s.extents[I])...);
  }
  (std::make_index_sequence<View::traits::rank>{});
}

/// The extents of `v`, checked to be a registrable View (contiguous memory).
template <class View>
std::array<std::int64_t, max_data_rank> checked_extents(const View& v, const std::string& name) {
  if (!v.span_is_contiguous())
    raise<invalid_argument>("task data '", name,
                            "' is a View whose elements are not contiguous (a strided subview?); allowed: "
                            "contiguous Views, e.g. a View of its own or a subview of whole columns (LayoutLeft) "
                            "or rows (LayoutRight)");
  std::array<std::int64_t, max_data_rank> e{};
  for (std::size_t d = 0; d < View::traits::rank; ++d) e[d] = static_cast<std::int64_t>(v.extent(d));
  return e;
}

}  // namespace detail

/// One piece of task data of a graph: a registered View, or one tile of a `tile_array`.
/// A cheap handle; the piece stays registered while a handle (or its tile array) is alive.
template <task_data_view View>
class task_data {
 public:
  /// The View registered (host memory).
  using view_type = View;
  /// The View a task body gets for this data in memory space `Memory`: unmanaged, the same
  /// layout and extents, of `const` elements when the task only reads it.
  template <class Memory, bool ReadOnly>
  using view_in = Kokkos::View<
      std::conditional_t<ReadOnly, typename View::const_data_type, typename View::non_const_data_type>,
      typename View::array_layout, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  task_data() = default;

  /// The name given at registration ("A", or "L[2][1]" for a tile). The accessors need a
  /// handle that names data (`operator bool`).
  [[nodiscard]] const std::string& name() const { return m_state->name; }
  /// The rank owning this tile, or -1 for data local to each rank (`graph.data`).
  [[nodiscard]] int owner() const noexcept { return m_state->owner; }
  /// Bytes of one copy.
  [[nodiscard]] std::size_t bytes() const noexcept { return m_state->bytes; }
  /// Whether this handle names a piece of data.
  explicit operator bool() const noexcept { return m_state != nullptr; }

  /// The internal state (for the graph).
  [[nodiscard]] detail::data_state* state() const noexcept { return m_state; }
  /// Wraps a registered piece (for the graph).
  task_data(std::shared_ptr<detail::data_registration> registration, detail::data_state* state) noexcept
      : m_registration(std::move(registration)), m_state(state) {}

 private:
  std::shared_ptr<detail::data_registration> m_registration;
  detail::data_state* m_state = nullptr;
};

/// The View a task body running on execution space `Space` receives for task data registered
/// as `View` (`ReadOnly`: in `reads`). Device bodies that launch kernels with KOKKOS_LAMBDA
/// name it instead of `auto`: nvcc refuses extended lambdas inside generic lambdas.
/// <!-- snippet: not compiled: a device task on Kokkos::Cuda (the test is built without CUDA) -->
/// @code
/// using x_view = hetero::data_view<Kokkos::Cuda, Kokkos::View<double*, Kokkos::HostSpace>>;
/// graph.spawn("twice", hetero::device(), hetero::updates(x), [](const Kokkos::Cuda& space, x_view d) {
///   Kokkos::parallel_for("twice", Kokkos::RangePolicy<Kokkos::Cuda>(space, 0, d.extent(0)),
///                        KOKKOS_LAMBDA(int i) { d(i) *= 2; });
/// });
/// @endcode
template <class Space, task_data_view View, bool ReadOnly = false>
using data_view = typename task_data<View>::template view_in<typename Space::memory_space, ReadOnly>;

/// Tiles of one matrix (or any array of equally shaped Views), `Rank` indices per tile, each
/// tile owned by one rank: its owner holds its memory and alone runs the tasks that write it;
/// the other ranks get copies of the versions they read. `L(i, k)` is tile (i, k) as task
/// data. Made collectively by `task_graph::tiles`; tiles are registered when first named.
template <task_data_view View, std::size_t Rank>
class tile_array {
 public:
  tile_array() = default;

  /// Tile `(indices...)`; an index out of range throws `invalid_argument`. Call it where tasks
  /// are declared (the thread that made the graph).
  template <std::integral... Index>
  requires(sizeof...(Index) == Rank) [[nodiscard]] task_data<View> operator()(Index... indices) const {
    return task_data<View>(m_shared->registration, m_shared->tile({static_cast<std::int64_t>(indices)...}));
  }
  /// Tiles along dimension `d`.
  [[nodiscard]] std::int64_t extent(std::size_t d) const noexcept { return d < Rank ? m_shared->count[d] : 0; }
  /// The name given at creation.
  [[nodiscard]] const std::string& name() const noexcept { return m_shared->name; }
  /// The rank owning tile `(indices...)` (registers the tile, as `operator()` does).
  template <std::integral... Index>
  requires(sizeof...(Index) == Rank) [[nodiscard]] int owner(Index... indices) const {
    return m_shared->tile({static_cast<std::int64_t>(indices)...})->owner;
  }

  /// What a tile array shares among its handles (made by the graph).
  struct shared {
    std::string name;                                                    ///< the name given at creation
    std::array<std::int64_t, Rank> count{};                              ///< tiles along each dimension
    std::array<std::int64_t, detail::max_data_rank> extents{};           ///< every tile's View extents
    std::size_t bytes = 0;                                               ///< bytes of one tile
    std::function<int(const std::array<std::int64_t, Rank>&)> owner_of;  ///< the rank owning a tile
    std::function<View(const std::array<std::int64_t, Rank>&)> view_of;  ///< an owned tile's View
    /// Another rank's tile as this process maps it, or an empty View (none given: empty)
    std::function<View(const std::array<std::int64_t, Rank>&)> peer_view_of;
    std::uint64_t first_id = 0;   ///< the data id of tile (0, ...); the others follow in row-major order
    int rank = 0;                 ///< this rank in the graph
    int ranks = 1;                ///< the graph's ranks
    const void* graph = nullptr;  ///< the graph's engine (identifies the graph)
    detail::data_registry* registry = nullptr;  ///< the graph's data registry, where tiles are registered
    std::weak_ptr<int> alive;                   ///< expires with the registry (the graph)
    std::thread::id declaring;                  ///< the thread that made the graph (tiles are named there)
    /// The tiles registered so far, by row-major tile index (null: not named yet).
    std::shared_ptr<detail::data_registration> registration = std::make_shared<detail::data_registration>();

    /// Tile `at`, registered the first time it is named (throws `invalid_argument` as `operator()` does).
    detail::data_state* tile(const std::array<std::int64_t, Rank>& at) {
      std::size_t linear = 0;
      for (std::size_t d = 0; d < Rank; ++d) {
        if (at[d] < 0 || at[d] >= count[d])
          detail::raise<invalid_argument>("tile index ", at[d], " in dimension ", d, " of tile array '", name,
                                          "' is out of range; allowed: 0 to ", count[d] - 1);
        linear = linear * static_cast<std::size_t>(count[d]) + static_cast<std::size_t>(at[d]);
      }
      auto& slot = registration->pieces[linear];
      if (slot) return slot.get();
      if (std::this_thread::get_id() != declaring)
        detail::raise<invalid_argument>(
            "tile array '", name,
            "': a tile is named for the first time on a thread other than the one that "
            "made the graph; name tiles where tasks are declared");
      if (alive.expired())
        detail::raise<invalid_argument>("tile array '", name, "' belongs to a task_graph that no longer exists");
      auto s = std::make_shared<detail::data_state>();
      s->name = name;
      // Appended piece by piece: GCC 12 at -O3 reports a bogus -Wrestrict for "[" + std::string.
      for (std::int64_t i : at) {
        s->name += '[';
        s->name += std::to_string(i);
        s->name += ']';
      }
      s->bytes = bytes;
      s->extents = extents;
      s->id = first_id + linear;
      s->owner = owner_of(at);
      if (s->owner < 0 || s->owner >= ranks)
        detail::raise<invalid_argument>("tile array '", name, "': the owner of tile ", s->name, " is rank ",
                                        s->owner, "; allowed: 0 to ", ranks - 1);
      s->sent.assign(static_cast<std::size_t>(ranks), detail::data_state::none);
      if (s->owner == rank) {
        View v = view_of(at);
        const auto e = detail::checked_extents(v, s->name);
        if (e != extents)
          detail::raise<invalid_argument>("tile array '", name, "': tile ", s->name,
                                          " is a View of other extents than the tile extents given to tiles(); "
                                          "allowed: every tile of the given extents");
        s->copies[detail::host_place].ptr = const_cast<void*>(static_cast<const void*>(v.data()));
        s->keep_alive = std::make_shared<View>(std::move(v));
      } else if (peer_view_of) {
        View v = peer_view_of(at);
        // The owner offers the tile's versions to the ranks of its node without being asked:
        // each must map it.
        if (!v.data() && registry->shares_node_with(s->owner))
          detail::raise<invalid_argument>(
              "tile array '", name, "': peer_view_of gives an empty View for tile ", s->name, " of rank ",
              s->owner,
              ", which shares this rank's node; allowed: the owner's tile as this process maps it for every "
              "owner of this node (a coarray in host memory with shared_memory on), or tiles() without "
              "peer_view_of");
        if (v.data()) {
          if (detail::checked_extents(v, s->name) != extents)
            detail::raise<invalid_argument>("tile array '", name, "': peer_view_of gives tile ", s->name,
                                            " as a View of other extents than the tile extents given to tiles(); "
                                            "allowed: the owner's tile, of the given extents, or an empty View");
          // Read in place only where the owner shares this rank's node (a View given for an
          // owner elsewhere is not used: its versions come through MPI).
          if (registry->shares_node_with(s->owner)) {
            s->node_source = static_cast<const void*>(v.data());
            s->keep_alive = std::make_shared<View>(std::move(v));
          }
        }
      }
      s->peer_views = static_cast<bool>(peer_view_of);
      registry->add(s, graph);
      slot = s;
      return slot.get();
    }
  };

  /// Wraps the shared part (for the graph).
  explicit tile_array(std::shared_ptr<shared> s) noexcept : m_shared(std::move(s)) {}

 private:
  std::shared_ptr<shared> m_shared;
};

namespace detail {

/// One argument of a task body, in clause order: the View type and mode of one piece, or
/// (`Range`) of a run-time number of pieces, which the body receives as a `std::span` of Views.
template <class View, data_mode Mode, bool Range = false>
struct data_arg {
  using view_type = View;
  static constexpr data_mode mode = Mode;
  static constexpr bool range = Range;
};
/// The data a body receives, in order.
template <class... Args>
struct data_args {
  static constexpr std::size_t size = sizeof...(Args);
};

}  // namespace detail

/// Task data a task uses with one mode (`reads`, `writes`, `updates`).
template <detail::data_mode Mode, task_data_view... Views>
class data_clause {
 public:
  /// A clause of these pieces (made by `reads`, `writes` and `updates`).
  explicit data_clause(const task_data<Views>&... data) : m_data{data.state()...} {}
  /// The pieces, in order.
  [[nodiscard]] const std::array<detail::data_state*, sizeof...(Views)>& pieces() const noexcept { return m_data; }
  static constexpr detail::data_mode mode = Mode;                    ///< How the task uses the pieces.
  using args = detail::data_args<detail::data_arg<Views, Mode>...>;  ///< What the body receives for them.

 private:
  std::array<detail::data_state*, sizeof...(Views)> m_data;
};

/// The task reads these pieces: it starts after their last writer, and its body gets a View of
/// `const` elements of each, valid where it runs.
template <task_data_view... Views>
[[nodiscard]] data_clause<detail::data_mode::read, Views...> reads(const task_data<Views>&... data) {
  static_assert(sizeof...(Views) >= 1, "hetero: reads(...) names at least one piece of task data");
  return data_clause<detail::data_mode::read, Views...>(data...);
}
/// The task writes every element of these pieces without reading them: their old values are
/// not moved to where it runs.
template <task_data_view... Views>
[[nodiscard]] data_clause<detail::data_mode::write, Views...> writes(const task_data<Views>&... data) {
  static_assert(sizeof...(Views) >= 1, "hetero: writes(...) names at least one piece of task data");
  return data_clause<detail::data_mode::write, Views...>(data...);
}
/// The task reads and writes these pieces (read-modify-write).
template <task_data_view... Views>
[[nodiscard]] data_clause<detail::data_mode::read_write, Views...> updates(const task_data<Views>&... data) {
  static_assert(sizeof...(Views) >= 1, "hetero: updates(...) names at least one piece of task data");
  return data_clause<detail::data_mode::read_write, Views...>(data...);
}

/// A run-time number of pieces of task data of one View type, used with one mode: the body
/// receives them as one `std::span` of Views (made by `reads`, `writes`, `updates` of a range).
template <detail::data_mode Mode, task_data_view View>
class data_range_clause {
 public:
  /// A clause of `pieces` (made by `reads`, `writes` and `updates` of a range).
  explicit data_range_clause(std::vector<detail::data_state*> pieces) : m_data(std::move(pieces)) {}
  /// The pieces, in order.
  [[nodiscard]] const std::vector<detail::data_state*>& pieces() const noexcept { return m_data; }
  static constexpr detail::data_mode mode = Mode;                      ///< How the task uses the pieces.
  using args = detail::data_args<detail::data_arg<View, Mode, true>>;  ///< What the body receives: one span.

 private:
  std::vector<detail::data_state*> m_data;
};

/// A range of task data handles of one View type (`std::vector<task_data<V>>`, a view of one).
template <class R>
concept task_data_range = std::ranges::input_range<R> && requires {
  typename std::ranges::range_value_t<R>::view_type;
  requires std::same_as<std::ranges::range_value_t<R>,
                        task_data<typename std::ranges::range_value_t<R>::view_type>>;
};

namespace detail {
template <data_mode Mode, class R>
auto range_clause(const R& range) {
  using view = typename std::ranges::range_value_t<R>::view_type;
  std::vector<data_state*> pieces;
  for (const auto& d : range) pieces.push_back(d.state());
  return data_range_clause<Mode, view>(std::move(pieces));
}
}  // namespace detail

/// The task reads every piece of `range` (its body gets a `std::span` of `const` Views).
template <task_data_range R>
[[nodiscard]] auto reads(const R& range) {
  return detail::range_clause<detail::data_mode::read>(range);
}
/// The task writes every element of every piece of `range` without reading them.
template <task_data_range R>
[[nodiscard]] auto writes(const R& range) {
  return detail::range_clause<detail::data_mode::write>(range);
}
/// The task reads and writes every piece of `range`.
template <task_data_range R>
[[nodiscard]] auto updates(const R& range) {
  return detail::range_clause<detail::data_mode::read_write>(range);
}

namespace detail {

template <class T>
struct is_data_clause : std::false_type {};
template <data_mode Mode, class... Views>
struct is_data_clause<data_clause<Mode, Views...>> : std::true_type {};
template <data_mode Mode, class View>
struct is_data_clause<data_range_clause<Mode, View>> : std::true_type {};

template <class... Lists>
struct concat_args;
template <>
struct concat_args<> {
  using type = data_args<>;
};
template <class... A>
struct concat_args<data_args<A...>> {
  using type = data_args<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_args<data_args<A...>, data_args<B...>, Rest...> {
  using type = typename concat_args<data_args<A..., B...>, Rest...>::type;
};

template <class Clause>
struct args_of_clause {
  using type = data_args<>;
};
template <data_mode Mode, class... Views>
struct args_of_clause<data_clause<Mode, Views...>> {
  using type = typename data_clause<Mode, Views...>::args;
};
template <data_mode Mode, class View>
struct args_of_clause<data_range_clause<Mode, View>> {
  using type = typename data_range_clause<Mode, View>::args;
};

/// The data a body receives from the clauses `Clauses`, in order.
template <class... Clauses>
using data_args_of = typename concat_args<typename args_of_clause<std::remove_cvref_t<Clauses>>::type...>::type;

/// The View of argument `A` in memory space `Memory` (one piece).
template <class Memory, class A>
using arg_view = typename task_data<typename A::view_type>::template view_in<Memory, A::mode == data_mode::read>;

/// What a body running in memory space `Memory` receives for argument `A`: a View, or a span of
/// Views for a range.
template <class Memory, class A>
using body_arg = std::conditional_t<A::range, std::span<const arg_view<Memory, A>>, arg_view<Memory, A>>;

/// The arguments a body running in memory space `Memory` receives for `Args`.
template <class Memory, class Args>
struct body_views;
template <class Memory, class... A>
struct body_views<Memory, data_args<A...>> {
  using type = std::tuple<body_arg<Memory, A>...>;
};

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_TASK_DATA_HPP
