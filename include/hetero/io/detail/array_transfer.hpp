/// @file
/// One distributed array to or from one dataset: every rank selects the elements it owns in
/// the file's global dataset and its block (without shadows) in its storage, and one
/// collective `H5Dwrite`/`H5Dread` moves them all. Device blocks go through a host copy.
#ifndef HETERO_IO_DETAIL_ARRAY_TRANSFER_HPP
#define HETERO_IO_DETAIL_ARRAY_TRANSFER_HPP

#include <hdf5.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/distributed_array.hpp"
#include "hetero/io/detail/checksum.hpp"
#include "hetero/io/detail/copy_memory.hpp"
#include "hetero/io/detail/h5.hpp"
#include "hetero/io/detail/selection.hpp"
#include "hetero/io/detail/writeback.hpp"

namespace hetero::detail {

/// Attribute names hetero writes on each dataset.
inline constexpr const char* checksum_attribute = "hetero_checksum";
inline constexpr const char* distribution_attribute = "hetero_distribution";
inline constexpr const char* grid_attribute = "hetero_process_grid";

/// What an open file hands to the transfers.
struct h5_target {
  hid_t file;
  MPI_Comm comm;
  const std::string& path;
};

/// "block,cyclic,block_cyclic(16),gen_block(3,5)": how `space` is distributed, for the file.
template <int Rank>
std::string distribution_text(const index_space<Rank>& space) {
  std::string text;
  for (int d = 0; d < Rank; ++d) {
    const auto& format = space.axis(d).format();
    if (d) text += ',';
    text += to_string(format.kind());
    if (format.kind() == distribution_kind::block_cyclic) text += "(" + std::to_string(format.width()) + ")";
    if (format.kind() == distribution_kind::gen_block) {
      text += "(";
      for (std::size_t p = 0; p < format.sizes().size(); ++p) {
        if (p) text += ',';
        text += std::to_string(format.sizes()[p]);
      }
      text += ")";
    }
  }
  return text;
}

/// Raises the same error on every rank when the collective call `ok` (this rank's outcome)
/// failed somewhere.
inline void agree(const h5_target& at, bool ok, const std::string& what) {
  if (all_ranks(at.comm, ok, "hetero::io: " + what)) return;
  if (!ok) raise_h5(at.path, what);
  H5Eclear2(H5E_DEFAULT);
  raise_io(at.path, what, " failed on another rank (that rank's error says why)");
}

/// Writes attribute `name` of `object` (collective, same value on every rank), replacing it.
/// HDF5's attribute calls are collective (and the file's metadata writes too): every rank makes
/// each of them, and the ranks agree on each outcome before the next, so that a failure on one
/// rank alone is an error on every rank and no rank skips a call the others make.
inline void write_attribute(const h5_target& at, hid_t object, const char* name, hid_t type, hid_t space,
                            const void* value) {
  const std::string replacing = std::string("replacing attribute '") + name + "'";
  const std::string writing = std::string("writing attribute '") + name + "'";
  const htri_t exists = H5Aexists(object, name);
  agree(at, exists >= 0, replacing);
  if (exists > 0) agree(at, H5Adelete(object, name) >= 0, replacing);
  h5_id attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  agree(at, attribute.valid(), writing);
  agree(at, H5Awrite(attribute.get(), type, value) >= 0, writing);
}

/// Writes a string attribute.
inline void write_text_attribute(const h5_target& at, hid_t object, const char* name, const std::string& text) {
  h5_id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), text.size() + 1);
  h5_id scalar(H5Screate(H5S_SCALAR), H5Sclose);
  write_attribute(at, object, name, type.get(), scalar.get(), text.c_str());
}

/// For tests: set, the next host_storage of this process fails as if there were no memory for
/// its staging buffer (std::bad_alloc; host arrays too, which need none), and clears it.
inline std::atomic<bool>& refuse_next_staging() noexcept {
  static std::atomic<bool> refuse{false};
  return refuse;
}

/// A host buffer of at least `bytes` that this thread keeps for its next transfer of a device
/// array: staging a block costs one copy, not an allocation whose pages are then faulted in
/// one by one (a third of a 64 MiB write's time on an H200 node). It holds the largest block
/// this thread has staged until the thread ends.
inline std::byte* staging_bytes(std::size_t bytes) {
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local std::size_t size = 0;
  if (bytes > size) {
    buffer.reset();
    size = 0;  // a failed allocation below leaves no buffer, and no size that says there is one
    buffer.reset(new std::byte[bytes]);
    size = bytes;
  }
  return buffer.get();
}

/// The array's storage as the host can read it: the storage itself where the host can, else a
/// host copy in this thread's staging buffer, with the storage's values when `with_values` (a
/// read that fills the whole storage needs none; one that keeps the shadows does, as it
/// copies the whole back).
template <class T, int Rank, class MemorySpace>
auto host_storage(const distributed_array<T, Rank, MemorySpace>& array, bool with_values = true) {
  if (refuse_next_staging().load(std::memory_order_relaxed) && refuse_next_staging().exchange(false))
    throw std::bad_alloc();
  const auto& storage = array.local_with_shadow();
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible) {
    return storage;
  } else {
    using storage_view = std::remove_cvref_t<decltype(storage)>;
    using host_view = Kokkos::View<typename storage_view::data_type, typename storage_view::array_layout,
                                   Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const host_view host(reinterpret_cast<T*>(staging_bytes(storage.span() * sizeof(T))), storage.layout());
    if (with_values) {
      const region staging("io", "stage");
      Kokkos::deep_copy(host, storage);
    }
    return host;
  }
}

/// This rank's block in its host storage, as HDF5 sees memory: a dataspace over the storage's
/// rows that the block has, and the element at which those rows start.
struct memory_block {
  h5_id space;
  std::size_t offset = 0;
};

/// The memory side of a transfer of this rank's block (`local` extents past `lower` in the host
/// storage `storage`). The dataspace starts at the block's first row, so shadows on axis 0 are
/// left out by the offset, not by a selection; where the storage has no shadows on the other
/// axes either, the block's rows are contiguous and the whole dataspace is selected. HDF5 1.10
/// with ROMIO reads contiguous rows selected as a box of a larger memory space in time that
/// grows with the square of the rows (a plain HDF5 program, from the page cache: 4096 and 8192
/// rows of 1024 doubles 169 and 656 ms, as a dataspace of their own 6 and 15 ms); a box whose
/// rows have gaps (shadows on the other axes) reads in linear time, about 1.7x contiguous.
template <int Rank, class HostView>
memory_block block_selection(const HostView& storage, const std::array<std::int64_t, Rank>& lower,
                             const std::array<std::int64_t, Rank>& local, const std::string& path) {
  std::array<hsize_t, Rank> dims{}, start{}, count{};
  bool empty = false, inner_whole = true;
  for (int d = 0; d < Rank; ++d) {
    const auto extent = static_cast<hsize_t>(local[d]);
    dims[d] = d == 0 ? extent : static_cast<hsize_t>(storage.extent(d));
    start[d] = d == 0 ? 0 : static_cast<hsize_t>(lower[d]);
    count[d] = extent;
    empty = empty || extent == 0;
    inner_whole = inner_whole && dims[d] == extent;
  }
  for (auto& e : dims) e = e > 0 ? e : 1;  // a dataspace of no elements is not a simple one
  memory_block block{h5_id(H5Screate_simple(Rank, dims.data(), nullptr), H5Sclose)};
  herr_t selected = 0;  // a new dataspace selects all of itself
  if (empty) {
    selected = H5Sselect_none(block.space.get());
  } else {
    if (!inner_whole)
      selected =
          H5Sselect_hyperslab(block.space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    block.offset = static_cast<std::size_t>(lower[0]) * storage.stride(0);  // the block's first row
  }
  if (!block.space.valid() || selected < 0) raise_h5(path, "selecting this rank's block in its storage");
  return block;
}

/// For tests: set, the next select_transfer of this process fails as if HDF5 could not make its
/// selections (an `io_error`), and clears it.
inline std::atomic<bool>& refuse_next_selection() noexcept {
  static std::atomic<bool> refuse{false};
  return refuse;
}

/// Both sides of a collective transfer of this rank's block: the block in its host storage, and
/// the dataset's dataspace with the elements this rank owns selected.
struct block_transfer {
  memory_block memory;
  h5_id file_space;
};

/// The dataspace of a dataset of `space`'s shape (nothing selected yet).
template <int Rank>
h5_id file_space_of(const index_space<Rank>& space) {
  std::array<hsize_t, Rank> dims{};
  for (int d = 0; d < Rank; ++d) dims[d] = static_cast<hsize_t>(space.extent(d));
  return h5_id(H5Screate_simple(Rank, dims.data(), nullptr), H5Sclose);
}

/// The selections of a transfer of this rank's block of `space` (its storage `host`, the block
/// past `lower`) from or to `file_space`, the block placed at `origin` of the dataset. Made
/// before the collective transfer, inside the step the ranks agree on (`agreed_step`): HDF5 may
/// fail to make them on one rank alone, which would leave the others waiting in the transfer.
/// Its `io_error` begins with `what` (the call: "writing dataset 'u'"), which the other ranks'
/// errors name too.
template <int Rank, class HostView>
block_transfer select_transfer(h5_id file_space, const HostView& host, const index_space<Rank>& space,
                               const std::array<std::int64_t, Rank>& lower,
                               const std::array<std::int64_t, Rank>& origin, const std::string& path,
                               const std::string& what) {
  try {
    if (refuse_next_selection().load(std::memory_order_relaxed) && refuse_next_selection().exchange(false))
      raise_io(path, "selecting this rank's block (refused by the test hook)");
    if (!file_space.valid()) raise_h5(path, "making the dataset's dataspace");
    select_owned<Rank>(file_space.get(), space, space.grid().rank(), origin, path);
    return {block_selection<Rank>(host, lower, space.local_extents(), path), std::move(file_space)};
  } catch (const io_error& e) {
    constexpr std::string_view prefix = "hetero::io: ";
    std::string_view said = e.what();
    if (said.starts_with(prefix)) said.remove_prefix(prefix.size());
    raise_io(path, what, ": ", said);
  }
}

/// The start of a key that ranks agree on (`same_arguments`): the name's characters and its
/// length, so that a name and the numbers after it cannot run together ("a" then 98 is not "ab").
inline std::vector<std::int64_t> name_key(std::string_view name) {
  std::vector<std::int64_t> key(name.begin(), name.end());
  key.push_back(static_cast<std::int64_t>(name.size()));
  return key;
}

/// What every rank writing dataset `name` of `space`'s shape must pass alike (HDF5 creates and
/// writes datasets collectively): a hash of the name and the extents, for `agreed_step`.
template <int Rank>
same_arguments same_dataset(const std::string& name, const index_space<Rank>& space) {
  auto key = name_key(name);
  for (int d = 0; d < Rank; ++d) key.push_back(space.extent(d));
  return {hash_of(key), "dataset names or array shapes"};
}

/// A transfer property list for one collective MPI-IO call per dataset.
inline h5_id collective_transfer() {
  h5_id list(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(list.get(), H5FD_MPIO_COLLECTIVE);
  return list;
}

/// Runs `step`, a part of a collective call that may fail on one rank alone (no memory for its
/// staging buffer), and agrees on its outcome, and on `same` (a hash of the arguments every
/// rank must pass alike), before any rank goes on into the collective transfer, where the others
/// would wait for it for ever (`agree_on_step`, waited with the communicator's policy).
/// Arguments that differ are an `invalid_argument` on every rank; else the failing rank raises
/// its own error (a `hetero::error` as it is, anything else as an `io_error` naming `what`) and
/// the others an `io_error` saying that it failed on the lowest failing rank.
template <class Step>
void agreed_step(const h5_target& at, const std::string& what, Step&& step, const same_arguments& same = {}) {
  const step_agreement agreed =
      agree_on_step(at.comm, make_wait_policy(at.comm), "hetero::io: " + what, std::forward<Step>(step), same);
  if (agreed.arguments_differ)
    raise<invalid_argument>("hetero::io: ", what, " of ", at.path, ": the ranks passed different ", same.what,
                            "; every rank must pass the same (this rank's may be the one that differs)");
  if (agreed.failed_rank < 0) return;
  if (!agreed.failure)
    raise_io(at.path, what, " failed on another rank (rank ", agreed.failed_rank, "; that rank's error says why)");
  try {
    std::rethrow_exception(agreed.failure);
  } catch (const error&) {
    throw;
  } catch (const std::exception& e) {
    raise_io(at.path, what, ": ", e.what());
  } catch (...) {
    raise_io(at.path, what, ": an exception that is not a std::exception");
  }
}

template <class T, int Rank, class MemorySpace>
void check_same_ranks(const h5_target& at, const distributed_array<T, Rank, MemorySpace>& array,
                      const char* what) {
  if (!congruent(at.comm, array.space().grid().mpi_comm()))
    raise<invalid_argument>("hetero::io: ", what, " array '", array.options().label, "' and file ", at.path,
                            ": the array's process grid is not over the file's ranks (open the file on the "
                            "communicator of the array's grid)");
}

/// Writes the block `host` (this rank's storage on the host, its block past `lower`) of an
/// array on `space` as dataset `name` (collective): created at the global shape, or an
/// existing dataset of the same type and shape overwritten. `local_sum()` returns the block's
/// local_checksum; it is called once the data is in the file system's cache, so that a sum
/// computed there can overlap the disk's work (writeback.hpp).
template <class T, int Rank, class HostView, class LocalSum>
void write_block(const h5_target& at, const std::string& name, const index_space<Rank>& space,
                 const block_transfer& selected, const HostView& host, LocalSum&& local_sum) {
  const auto type = h5_type_of<T>();
  std::array<hsize_t, Rank> dims{};
  for (int d = 0; d < Rank; ++d) dims[d] = static_cast<hsize_t>(space.extent(d));
  const hid_t file_space = selected.file_space.get();
  h5_id dataset;
  if (H5Lexists(at.file, name.c_str(), H5P_DEFAULT) > 0) {
    dataset = h5_id(H5Dopen2(at.file, name.c_str(), H5P_DEFAULT), H5Dclose);
    agree(at, dataset.valid(), "opening dataset '" + name + "'");  // may fail on one rank alone
    h5_id old_space(H5Dget_space(dataset.get()), H5Sclose);
    h5_id old_type(H5Dget_type(dataset.get()), H5Tclose);
    std::array<hsize_t, Rank> old{};
    const bool same = H5Sget_simple_extent_ndims(old_space.get()) == Rank &&
                      H5Sget_simple_extent_dims(old_space.get(), old.data(), nullptr) == Rank && old == dims &&
                      H5Tequal(old_type.get(), type.get()) > 0;
    if (!same)
      raise_io(at.path, "writing dataset '", name,
               "': the file already holds a dataset of that name with another ",
               "shape or element type; write to a new name or a new file");
  } else {
    h5_id links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(links.get(), 1);
    h5_id creation(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER);  // every element is written next
    const region creating("io", "create dataset");
    dataset =
        h5_id(H5Dcreate2(at.file, name.c_str(), type.get(), file_space, links.get(), creation.get(), H5P_DEFAULT),
              H5Dclose);
    agree(at, dataset.valid(), "creating dataset '" + name + "'");
  }
  const auto transfer = collective_transfer();
  {
    const region data("io", "data");
    const bool written = H5Dwrite(dataset.get(), type.get(), selected.memory.space.get(), file_space,
                                  transfer.get(), host.data() + selected.memory.offset) >= 0;
    agree(at, written, "writing dataset '" + name + "'");
  }
  const std::uint64_t mine = local_sum();
  const region attributes("io", "attributes");
  const auto sum = sum_checksum(mine, at.comm);
  h5_id scalar(H5Screate(H5S_SCALAR), H5Sclose);
  write_attribute(at, dataset.get(), checksum_attribute, H5T_NATIVE_UINT64, scalar.get(), &sum);
  write_text_attribute(at, dataset.get(), distribution_attribute, distribution_text(space));
  std::array<std::int64_t, Rank> grid{};
  for (int d = 0; d < Rank; ++d) grid[d] = space.grid().extent(d);
  const hsize_t rank_count = Rank;
  h5_id grid_space(H5Screate_simple(1, &rank_count, nullptr), H5Sclose);
  write_attribute(at, dataset.get(), grid_attribute, H5T_NATIVE_INT64, grid_space.get(), grid.data());
}

/// write_block with the data sent on its way to disk while it goes into the file system's
/// cache (writeback.hpp): `early` starts before the data and hears that it is in once the
/// data is written (or the write failed first); `local_sum()` runs after that, while the disk
/// works.
template <class T, int Rank, class HostView, class LocalSum>
void write_block_early(const h5_target& at, const std::string& name, const index_space<Rank>& space,
                       const block_transfer& selected, const HostView& host, writebacks& early,
                       LocalSum&& local_sum) {
  struct data_in {
    writebacks& early;
    ~data_in() { early.written(); }
  } const ends{early};
  early.start(at.path);
  write_block<T, Rank>(at, name, space, selected, host, [&] {
    early.written();
    return local_sum();
  });
}

/// Writes `array` as dataset `name` (collective), its data sent to disk early through `early`.
template <class T, int Rank, class MemorySpace>
void write_array(const h5_target& at, const std::string& name,
                 const distributed_array<T, Rank, MemorySpace>& array, writebacks& early) {
  // An array on other ranks than the file's (a caller's error that may be one rank's alone),
  // staging a device array's block in host memory (no memory on one rank), the selections, and
  // the dataset's name and shape, which every rank must pass alike: agreed before the
  // collective write.
  decltype(host_storage(array)) host;
  block_transfer selected;
  const std::string what = "writing dataset '" + name + "'";
  agreed_step(
      at, what,
      [&] {
        check_same_ranks(at, array, "writing");
        host = host_storage(array);
        selected = select_transfer<Rank>(file_space_of(array.space()), host, array.space(), array.shadow().lower,
                                         {}, at.path, what);
      },
      same_dataset(name, array.space()));
  // Called once the data went out, on this thread (it may run host kernels).
  const auto sum = [&] {
    const region summing("io", "checksum");
    return local_checksum<T, Rank>(host, array.shadow().lower, array.space());
  };
  write_block_early<T, Rank>(at, name, array.space(), selected, host, early, sum);
}

/// A host copy of `array`'s storage that the array's later changes do not reach: the values
/// in a plain heap block (no Kokkos reference count, whose atomics a thread checker cannot see,
/// crosses to the I/O thread; huge pages where it is large, copy_memory.hpp) and the storage's
/// extents. The block is not zero-filled first: the copy writes every element, and for a large
/// array the fill would be a second pass over its memory.
template <class T, int Rank>
struct block_copy {
  copy_memory<T> values;
  std::array<std::size_t, Rank> extents{};

  /// An unmanaged row-major View of the values.
  [[nodiscard]] auto view() {
    using unmanaged = Kokkos::View<typename view_data<T, Rank>::type, Kokkos::LayoutRight, Kokkos::HostSpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    if constexpr (Rank == 1) return unmanaged(values.get(), extents[0]);
    if constexpr (Rank == 2) return unmanaged(values.get(), extents[0], extents[1]);
    if constexpr (Rank == 3) return unmanaged(values.get(), extents[0], extents[1], extents[2]);
  }
};

template <class T, int Rank, class MemorySpace>
block_copy<T, Rank> snapshot(const distributed_array<T, Rank, MemorySpace>& array) {
  const auto& storage = array.local_with_shadow();
  block_copy<T, Rank> copy;
  for (int d = 0; d < Rank; ++d) copy.extents[d] = storage.extent(d);
  copy.values = allocate_copy_memory<T>(storage.span());
  Kokkos::deep_copy(copy.view(), storage);
  return copy;
}

/// The names of the objects at the file's root, for messages ("u, v"; "nothing").
inline std::string root_names(hid_t file) {
  std::string names;
  auto visit = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    auto& out = *static_cast<std::string*>(data);
    if (!out.empty()) out += ", ";
    out += name;
    return 0;
  };
  H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, visit, &names);
  return names.empty() ? std::string("nothing") : names;
}

/// Opens dataset `name` of `file`; throws `io_error` naming what the file holds when there is
/// none.
inline h5_id open_named_dataset(hid_t file, const std::string& path, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    raise_io(path, "no dataset '", name, "' in the file; its root holds: ", root_names(file));
  }
  h5_id dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) raise_h5(path, "opening dataset '", name, "'");
  return dataset;
}

/// Opens dataset `name` and checks that its elements are of `T` and that it has `Rank` axes;
/// returns it with its extents.
template <class T, int Rank>
std::pair<h5_id, std::array<hsize_t, Rank>> open_dataset(const h5_target& at, const std::string& name) {
  auto dataset = open_named_dataset(at.file, at.path, name);
  h5_id stored(H5Dget_type(dataset.get()), H5Tclose);
  const auto wanted = h5_type_of<T>();
  if (!same_element_type(stored.get(), wanted.get()))
    raise_io(at.path, "dataset '", name, "' holds elements of type ", h5_type_text(stored.get()),
             ", but the array's elements are ", h5_type_text(wanted.get()),
             "; read it into an array of that type (hetero does not convert)");
  h5_id space(H5Dget_space(dataset.get()), H5Sclose);
  const int axes = H5Sget_simple_extent_ndims(space.get());
  if (axes != Rank) raise_io(at.path, "dataset '", name, "' has ", axes, " dimensions, but the array has ", Rank);
  std::array<hsize_t, Rank> dims{};
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return {std::move(dataset), dims};
}

/// Reads dataset `name` into `array` (collective): the whole dataset, whose shape must be the
/// array's, or the box `from` of it, whose extents must be the array's. A whole dataset that
/// carries hetero's checksum is checked against it.
template <class T, int Rank, class MemorySpace>
void read_array(const h5_target& at, const std::string& name, const distributed_array<T, Rank, MemorySpace>& array,
                const std::optional<index_box<Rank>>& from) {
  const auto& space = array.space();
  std::array<hsize_t, Rank> wanted{};
  std::array<std::int64_t, Rank> origin{};
  for (int d = 0; d < Rank; ++d) wanted[d] = static_cast<hsize_t>(space.extent(d));
  // The dataset's name and the section must be the same on every rank (a rank with another
  // name or box, or with no box, would read something else, or go on into another collective):
  // agreed first, since opening the dataset is itself collective (the file's metadata reads
  // are: rank 0 reads, and broadcasts without a timeout). Then opening it, an array on other
  // ranks than the file's, staging a device array (no memory) and the selections may fail on
  // one rank alone: agreed before the collective read, where the other ranks would wait for
  // that one for ever.
  auto section = name_key(name);  // and the dataset's name
  section.push_back(from ? 1 : 0);
  for (int d = 0; from && d < Rank; ++d) {
    section.push_back(from->begin[d]);
    section.push_back(from->end[d]);
  }
  const std::string what = "reading dataset '" + name + "'";
  decltype(host_storage(array)) host;
  block_transfer selected;
  h5_id dataset;
  std::array<hsize_t, Rank> extents{};
  const auto prepare = [&] {
    auto opened = open_dataset<T, Rank>(at, name);
    dataset = std::move(opened.first);
    extents = opened.second;
    check_same_ranks(at, array, "reading into");
    if (!from && extents != wanted)
      raise_io(at.path, "dataset '", name, "' has shape ", format_array(extents), ", but the array's is ",
               format_array(wanted),
               "; read a section of it (read(name, array, box)) or into an array of its shape");
    if (from) {
      for (int d = 0; d < Rank; ++d) {
        const bool inside = from->begin[d] >= 0 && from->end[d] <= static_cast<std::int64_t>(extents[d]) &&
                            from->begin[d] <= from->end[d];
        if (!inside)
          raise<invalid_argument>("hetero::io: reading a section of dataset '", name, "' of ", at.path, ": axis ",
                                  d, " of the section is [", from->begin[d], ", ", from->end[d],
                                  "), outside the dataset's [0, ", extents[d], ")");
        if (static_cast<hsize_t>(from->extent(d)) != wanted[d])
          raise<invalid_argument>("hetero::io: reading a section of dataset '", name, "' of ", at.path, ": axis ",
                                  d, " of the section has ", from->extent(d), " indices, but the array has ",
                                  wanted[d], "; the section's shape must be the array's");
        origin[d] = from->begin[d];
      }
    }
    // The staged copy needs the storage's values only where the block does not fill it (shadows).
    std::size_t owned = 1;
    for (int d = 0; d < Rank; ++d) owned *= static_cast<std::size_t>(space.local_extents()[d]);
    host = host_storage(array, owned != array.local_with_shadow().span());
    selected = select_transfer<Rank>(h5_id(H5Dget_space(dataset.get()), H5Sclose), host, space,
                                     array.shadow().lower, origin, at.path, what);
  };
  agreed_step(at, what, [] {},
              {hash_of(section), "dataset names or sections (read(name, array, box), or no box)"});
  agreed_step(at, what, prepare);
  const auto type = h5_type_of<T>();
  const auto transfer = collective_transfer();
  {
    const region data("io", "data");
    const bool done = H5Dread(dataset.get(), type.get(), selected.memory.space.get(), selected.file_space.get(),
                              transfer.get(), host.data() + selected.memory.offset) >= 0;
    agree(at, done, "reading dataset '" + name + "'");
  }
  if (!from && H5Aexists(dataset.get(), checksum_attribute) > 0) {
    const region checking("io", "checksum");
    std::uint64_t expected = 0;
    h5_id attribute(H5Aopen(dataset.get(), checksum_attribute, H5P_DEFAULT), H5Aclose);
    agree(at, attribute.valid() && H5Aread(attribute.get(), H5T_NATIVE_UINT64, &expected) >= 0,
          "reading the checksum of dataset '" + name + "'");
    const auto sum = sum_checksum(local_checksum<T, Rank>(host, array.shadow().lower, space), at.comm);
    if (sum != expected)
      raise_io(at.path, "dataset '", name, "' does not match the checksum written with it (", expected,
               " written, ", sum, " read): the file is corrupted or was changed after hetero wrote it");
  }
  if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible) {
    const region staging("io", "stage");
    Kokkos::deep_copy(array.local_with_shadow(), host);
  }
}

}  // namespace hetero::detail

#endif  // HETERO_IO_DETAIL_ARRAY_TRANSFER_HPP
