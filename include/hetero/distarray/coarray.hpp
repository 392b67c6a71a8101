/// @file
/// `hetero::coarray`: the local view (XcalableMP / Fortran 2008 coarrays): every image (rank)
/// holds an array of the same shape; any image reads or writes a section of any other's
/// with one-sided get/put, and sync_all / sync_images order the images.
#ifndef HETERO_DISTARRAY_COARRAY_HPP
#define HETERO_DISTARRAY_COARRAY_HPP

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/error.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/staging.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/concepts.hpp"
#include "hetero/distarray/detail/exchange_mark.hpp"
#include "hetero/distarray/detail/node_segment.hpp"
#include "hetero/distarray/detail/origin.hpp"
#include "hetero/distarray/detail/rows.hpp"
#include "hetero/distarray/detail/window.hpp"
#include "hetero/distarray/process_grid.hpp"
#include "hetero/distarray/section.hpp"

namespace hetero {

/// How a coarray is created.
struct coarray_options {
  device_buffer_path device_path = device_buffer_path::automatic;  ///< how transfers reach MPI
  std::string label = "hetero::coarray";                           ///< the View's label
  /// In host memory (`Kokkos::HostSpace`): the images of one node share their arrays, and a get
  /// or put between two of them is a copy by the calling thread, whether or not the target is
  /// inside MPI. `false`: MPI's one-sided calls, which MPICH serves only when the target next
  /// calls MPI. Other memory spaces always use MPI.
  bool shared_memory = true;
};

/// An array of `extents` on every image of a communicator, with one-sided access to the
/// other images' copies (images are the communicator's ranks, numbered from 0). A cheap
/// handle: copies share the array. Construction and destruction are collective. Data put to
/// an image is visible to it, and its writes to others, after a sync_all or a sync_images
/// naming both (or another synchronisation between the two, such as a task event one notifies
/// the other of). In host memory the array lies in memory the node's images share
/// (`coarray_options::shared_memory`), and `local()` is valid while a handle of it lives.
/// <!-- snippet: fragment
/// Kokkos::View<double*, Kokkos::HostSpace> b("b", 25);
/// -->
/// @code
/// hetero::coarray<double, 1> a({25});
/// if (a.this_image() == 3) a.get(0, {hetero::slice{0, 25}}, b);  // b = a[0:25]:[0]
/// a.sync_all();
/// @endcode
template <class T, int Rank, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
requires distributable<T> && supported_rank<Rank> && memory_space<MemorySpace>
class coarray {
 public:
  using value_type = T;              ///< The element type.
  using memory_space = MemorySpace;  ///< The Kokkos memory space of each image's array.
  /// One image's array, row-major.
  using local_view = detail::view_of<T, Rank, Kokkos::LayoutRight, MemorySpace>;
  static constexpr int rank = Rank;  ///< The number of axes (1 to 3).

  /// The options before the communicator, as in 0.1.
  [[deprecated(
      "hetero: the communicator comes before the options: coarray(extents, comm, options); "
      "docs/conventions.md")]] coarray(std::array<std::int64_t, Rank> extents, coarray_options options,
                                       MPI_Comm comm)
      : coarray(extents, images_of(comm), std::move(options)) {}
  /// The options before the communicator, as in 0.1.
  [[deprecated(
      "hetero: the communicator comes before the options: coarray(extents, comm, options); "
      "docs/conventions.md")]] coarray(std::array<std::int64_t, Rank> extents, coarray_options options,
                                       const communicator& comm)
      : coarray(extents, comm, std::move(options)) {}

  /// An empty handle.
  coarray() = default;

  /// Allocates the array (zero-initialised) on every rank of MPI_COMM_WORLD and its RMA window
  /// (collective); `comm()` is a new `hetero::communicator` on the world's ranks.
  explicit coarray(std::array<std::int64_t, Rank> extents, coarray_options options = {})
      : coarray(extents, images_of(MPI_COMM_WORLD), std::move(options)) {}

  /// The same on every image of `comm` (its ranks are the images); `comm()` is a new
  /// `hetero::communicator` on them.
  coarray(std::array<std::int64_t, Rank> extents, MPI_Comm comm, coarray_options options = {})
      : coarray(extents, images_of(comm), std::move(options)) {}

  /// The same on every image of `comm` (its ranks are the images), which `comm()` then shares.
  coarray(std::array<std::int64_t, Rank> extents, const communicator& comm, coarray_options options = {})
      : m_state(std::make_shared<state>(comm)) {
    for (int d = 0; d < Rank; ++d)
      HETERO_EXPECTS(extents[d] >= 0, "coarray extent ", extents[d], " on axis ", d, " is negative");
    auto& s = *m_state;
    s.extents = extents;
    s.label = std::move(options.label);
    s.staged = detail::must_stage<MemorySpace>(options.device_path, "coarray");
    const auto policy = detail::make_wait_policy(comm.mpi_comm());
    s.comm = detail::duplicate_on_arrival(comm.mpi_comm(), policy, "hetero::coarray construction");
    std::int64_t stride = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      s.strides[d] = stride;
      stride *= extents[d];
    }
    auto n = [&](int d) { return static_cast<std::size_t>(extents[d]); };
    // An image whose array cannot be allocated tells the others before the window's set-up;
    // images that passed other extents hear it.
    std::vector<std::int64_t> shape(extents.begin(), extents.end());
    shape.push_back(static_cast<std::int64_t>(sizeof(T)));
    // A label allocates the View, a pointer wraps memory allocated elsewhere.
    const auto shaped = [&](auto label_or_data) {
      if constexpr (Rank == 1) {
        return local_view(label_or_data, n(0));
      } else if constexpr (Rank == 2) {
        return local_view(label_or_data, n(0), n(1));
      } else {
        return local_view(label_or_data, n(0), n(1), n(2));
      }
    };
    const bool shared = std::is_same_v<MemorySpace, Kokkos::HostSpace> && !s.staged && options.shared_memory;
    // The node's images are found first, to check that their parts fit in its memory.
    detail::owned_comm node;
    if (shared) node = detail::node_segment<T>::node_of(s.comm.get(), policy);
    const auto allocate = [&] {
      if (shared) {
        detail::node_segment<T>::check_fits(stride, node.size(), "hetero::coarray");
      } else {
        s.storage = shaped(s.label);
      }
    };
    detail::agreed_setup_step(s.comm.get(), policy, "hetero::coarray construction (storage)", allocate,
                              {detail::hash_of(shape), "extents or element types"});
    if (shared) {
      s.segment = std::make_unique<detail::node_segment<T>>(s.comm.get(), std::move(node), stride, policy);
      s.storage = shaped(s.segment->local());
    }
    s.window = std::make_unique<detail::rma_window<T, Rank, MemorySpace>>(s.comm.get(), s.storage.data(), stride,
                                                                          s.staged, s.segment.get());
  }

  /// This image's array.
  [[nodiscard]] const local_view& local() const { return state_of().storage; }
  /// Image `image`'s array as this image maps it, where it shares that image's memory
  /// (`shares_memory_with(image)`); an empty View otherwise (this image's own too, where its
  /// array is not in the node's segment: `local()` always gives it). Loads and stores through it are
  /// ordered with that image's own as `get` and `put` are: by a synchronisation between the two
  /// (a sync_all, a sync_images naming both, a task event or task data one hands the other).
  /// `image` must be an image number.
  [[nodiscard]] local_view local(int image) const {
    HETERO_EXPECTS(image >= 0 && image < num_images(), "coarray::local: image ", image,
                   " is outside the coarray's ", num_images(), " image(s) (allowed: 0 to ", num_images() - 1, ")");
    if (!shares_memory_with(image)) return local_view();
    if (image == this_image()) return local();
    const auto& s = state_of();
    T* p = s.segment->peer(image);
    if constexpr (Rank == 1) {
      return local_view(p, s.storage.extent(0));
    } else if constexpr (Rank == 2) {
      return local_view(p, s.storage.extent(0), s.storage.extent(1));
    } else {
      return local_view(p, s.storage.extent(0), s.storage.extent(1), s.storage.extent(2));
    }
  }
  /// The extents (the same on every image).
  [[nodiscard]] const std::array<std::int64_t, Rank>& extents() const { return state_of().extents; }
  /// This image's number, from 0.
  [[nodiscard]] int this_image() const { return state_of().comm.rank(); }
  /// The number of images.
  [[nodiscard]] int num_images() const { return state_of().comm.size(); }
  /// Whether transfers go through host buffers.
  [[nodiscard]] bool staged() const { return state_of().staged; }
  /// Whether image `image`'s array lies in memory this image shares (the node's segment, host
  /// memory and `coarray_options::shared_memory`): its gets and puts are then loads and stores;
  /// otherwise they travel through MPI's window (an image on another node, say). True for this
  /// image itself only where it is in the segment. `image` must be an image number.
  [[nodiscard]] bool shares_memory_with(int image) const {
    HETERO_EXPECTS(image >= 0 && image < num_images(), "coarray::shares_memory_with: image ", image,
                   " is outside the coarray's ", num_images(), " image(s) (allowed: 0 to ", num_images() - 1, ")");
    return state_of().segment != nullptr && state_of().segment->peer(image) != nullptr;
  }
  /// The MPI communicator that carries the coarray's traffic (its own duplicate).
  [[nodiscard]] MPI_Comm mpi_comm() const { return state_of().comm.get(); }
  /// The images' communicator: hetero's collectives over the same ranks
  /// (`a.comm().allreduce(hetero::send_buf(local), hetero::op(hetero::ops::sum{}))`).
  [[nodiscard]] const communicator& comm() const { return state_of().images; }

  /// Reads the section `spec` of image `image`'s array into `into` (a View with the
  /// section's extents, in host memory or in `MemorySpace`); complete on return.
  template <class View>
  requires Kokkos::is_view<View>::value void get(int image, const section_spec<Rank>& spec,
                                                 const View& into) const {
    static_assert(std::is_same_v<typename View::value_type, T>, "hetero: coarray::get needs a View of T");
    transfer(image, spec, into, "coarray::get", true);
  }

  /// The section `spec` of image `image`'s array, in a new View in `MemorySpace`.
  [[nodiscard]] local_view get(int image, const section_spec<Rank>& spec) const {
    const auto shape = detail::section_shape(detail::resolve_section(spec, extents(), "coarray::get"));
    local_view into;
    auto n = [&](int d) { return static_cast<std::size_t>(shape[d]); };
    const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, "hetero::coarray::get");
    if constexpr (Rank == 1) {
      into = local_view(alloc, n(0));
    } else if constexpr (Rank == 2) {
      into = local_view(alloc, n(0), n(1));
    } else {
      into = local_view(alloc, n(0), n(1), n(2));
    }
    get(image, spec, into);
    return into;
  }

  /// Writes `from` (a View with the section's extents) into the section `spec` of image
  /// `image`'s array; complete at the target on return, visible to it after the next
  /// synchronisation between the two images.
  template <class View>
  requires Kokkos::is_view<View>::value void put(int image, const section_spec<Rank>& spec,
                                                 const View& from) const {
    static_assert(std::is_same_v<typename View::non_const_value_type, T>,
                  "hetero: coarray::put needs a View of T");
    transfer(image, spec, from, "coarray::put", false);
  }

  /// Waits until every image reaches its sync_all; puts and gets before it are then complete
  /// and visible on every image (collective).
  void sync_all() const {
    const region running("distarray", "sync_all");
    auto& s = state_of();
    s.exchanges.run_sync("sync_all", s.label, [&](bool& posted) { s.window->sync_all("sync_all", posted); });
  }

  /// Waits until every image of `images` reaches a sync_images naming this image; the
  /// transfers between them before it are then complete and visible.
  void sync_images(const std::vector<int>& images) const {
    const region running("distarray", "sync_images");
    auto& s = state_of();
    s.exchanges.run_sync("sync_images", s.label,
                         [&](bool& posted) { s.window->sync_images(images, "sync_images", posted); });
  }

 private:
  struct state {
    explicit state(const communicator& c) : images(c) {}
    std::array<std::int64_t, Rank> extents{};
    std::array<std::int64_t, Rank> strides{};
    std::string label;
    bool staged = false;
    communicator images;                                               // comm(): the collectives
    detail::owned_comm comm;                                           // the window's own duplicate
    std::unique_ptr<detail::node_segment<T>> segment;                  // host memory: the node's shared storage
    local_view storage;                                                // in `segment`, or a Kokkos allocation
    std::unique_ptr<detail::rma_window<T, Rank, MemorySpace>> window;  // destroyed first
    detail::exchange_mark exchanges;                                   // set once a sync gave up
  };

  // A communicator on `comm`'s ranks, its set-up named after the coarray's.
  static communicator images_of(MPI_Comm comm) {
    const detail::wait_call named{"hetero::", "coarray construction", -1, -1};
    const detail::wait_call_scope scope(named);
    return communicator(comm);
  }

  state& state_of() const {
    if (!m_state) detail::raise<invalid_argument>("hetero::coarray: the handle is empty");
    return *m_state;
  }

  template <class View>
  void transfer(int image, const section_spec<Rank>& spec, const View& view, const char* what, bool get) const {
    static_assert(static_cast<int>(View::rank) == Rank, "hetero: the View must have the coarray's rank");
    auto& s = state_of();
    HETERO_EXPECTS(image >= 0 && image < s.comm.size(), what, ": image ", image,
                   " is outside the communicator's images 0..", s.comm.size() - 1);
    const auto section = detail::resolve_section(spec, s.extents, what);
    const auto shape = detail::section_shape(section);
    std::array<std::int64_t, Rank> view_extents{};
    for (int d = 0; d < Rank; ++d) view_extents[d] = static_cast<std::int64_t>(view.extent(d));
    if (view_extents != shape)
      detail::raise<invalid_argument>(what, ": the View has extents ", detail::format_array(view_extents),
                                      " but the section has shape ", detail::format_array(shape));
    detail::strided_box<Rank> remote, mine;
    for (int d = 0; d < Rank; ++d) {
      remote.offset += section[d].begin * s.strides[d];
      remote.count[d] = mine.count[d] = shape[d];
      remote.stride[d] = section[d].step * s.strides[d];
      mine.stride[d] = static_cast<std::int64_t>(view.stride(d));
    }
    const auto n = static_cast<std::size_t>(remote.size());
    if (n == 0) return;
    using local_space = typename View::memory_space;
    T* data = const_cast<T*>(view.data());
    const detail::origin_side<T, MemorySpace, local_space> origin(s.staged, mine.contiguous() ? data : nullptr, n,
                                                                  what);
    detail::row_list<local_space> rows;
    if (!origin.direct()) {
      std::vector<detail::row> r;
      std::int64_t count = 0;
      detail::append_rows(mine, r, count, 0);
      rows = detail::row_list<local_space>(r);
    }
    const std::span<const detail::strided_box<Rank>> boxes(&remote, 1);
    if (get) {
      s.window->get(image, boxes, origin.data(), what);
      origin.to_local(rows, data);
    } else {
      origin.from_local(rows, data);
      s.window->put(image, boxes, origin.data(), what);
    }
  }

  std::shared_ptr<state> m_state;
};

}  // namespace hetero

#endif  // HETERO_DISTARRAY_COARRAY_HPP
