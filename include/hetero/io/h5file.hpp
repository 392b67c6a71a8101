/// @file
/// `hetero::h5file`: an HDF5 file opened by every rank of a communicator, into which
/// distributed arrays are written in their global shape (one collective MPI-IO write per
/// array) and from which they are read into any distribution, with named scalars beside them.
#ifndef HETERO_IO_H5FILE_HPP
#define HETERO_IO_H5FILE_HPP

#include <hdf5.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/comm/communicator.hpp"
#include "hetero/core/mpi/owned_comm.hpp"
#include "hetero/core/mpi/world_nodes.hpp"
#include "hetero/core/observer.hpp"
#include "hetero/distarray/distributed_array.hpp"
#include "hetero/io/detail/array_transfer.hpp"
#include "hetero/io/detail/h5.hpp"
#include "hetero/io/detail/io_thread.hpp"
#include "hetero/io/detail/writeback.hpp"
#include "hetero/io/io_handle.hpp"

namespace hetero {

/// How an `h5file` is opened.
enum class file_mode {
  create,  ///< a new file; an existing one of that name is replaced
  read,    ///< an existing file, read only
  update   ///< an existing file, read and written
};

/// How an `h5file` talks to MPI-IO.
struct h5file_options {
  /// MPI-IO hints (`MPI_Info` key, value), e.g. {"cb_buffer_size", "67108864"} or
  /// {"striping_factor", "16"} on Lustre. They override hetero's own choice below.
  std::vector<std::pair<std::string, std::string>> hints;
  /// When every rank of the file is on one node, turn ROMIO's collective buffering off
  /// (romio_cb_write/romio_cb_read) and with it write data sieving (romio_ds_write), so that
  /// each rank writes its own pieces. On one node every rank writes into the same page cache,
  /// so the aggregator of two-phase I/O only adds a copy and an exchange (docs/results/io.md has the
  /// measurement). Off by default: pieces of a few bytes (a 1-D cyclic array) then become one
  /// system call each, and data sieving must stay off with it, since ROMIO 4.0 leaves its file
  /// lock held when a sieved write fails (a full disk then hangs the other ranks).
  bool independent_on_one_node = false;
};

/// An HDF5 file opened collectively by every rank of a communicator (through MPI-IO). Arrays
/// are stored as datasets in their global shape, row-major, so that h5py, h5dump or ParaView
/// read them as plain arrays; the distribution they had is kept as attributes. Every call is
/// collective, and a failure raises `hetero::io_error` on every rank. A move-only handle;
/// the destructor closes the file (collective).
/// <!-- snippet: fragment
/// hetero::process_grid<2> grid, other_grid;
/// hetero::distributed_array<double, 2> u(hetero::index_space<2>({256, 64}, grid));
/// hetero::distributed_array<double, 2> v(hetero::index_space<2>({256, 64}, other_grid));
/// -->
/// @code
/// hetero::h5file out("field.h5", hetero::file_mode::create, grid.comm());
/// out.write("u", u);                  // any distribution, host or device memory
/// out.set("iteration", std::int64_t{42});
///
/// hetero::h5file in("field.h5", hetero::file_mode::read, other_grid.comm());
/// in.read("u", v);                    // v may have another distribution and grid
/// @endcode
class h5file {
 public:
  /// Opens `path` as `mode` on every rank of `comm` (collective). Throws `io_error` when the
  /// file cannot be created or opened (missing, not HDF5, truncated, no permission).
  h5file(std::string path, file_mode mode, MPI_Comm comm = MPI_COMM_WORLD, const h5file_options& options = {})
      : m_path(std::move(path)), m_mode(mode), m_comm(detail::owned_comm::duplicate(comm)) {
    open(options);
  }
  /// Opens `path` on the ranks of `comm`.
  h5file(std::string path, file_mode mode, const communicator& comm, const h5file_options& options = {})
      : h5file(std::move(path), mode, comm.mpi_comm(), options) {}

  /// Takes over the other object's open file; the moved-from object is left closed.
  h5file(h5file&&) noexcept = default;
  /// Takes over the other object's open file, closing the one this object had open first as
  /// close() does (collective; its asynchronous writes finish before, errors are raised).
  h5file& operator=(h5file&& other) {
    if (this == &other) return *this;
    close();
    m_path = std::move(other.m_path);
    m_mode = other.m_mode;
    m_comm = std::move(other.m_comm);
    m_file = std::move(other.m_file);
    m_writebacks = std::move(other.m_writebacks);
    m_async_failed = std::move(other.m_async_failed);
    return *this;
  }
  h5file(const h5file&) = delete;
  h5file& operator=(const h5file&) = delete;
  ~h5file() {
    if (!m_file.valid()) return;
    const detail::h5_scope scope;
    m_file.reset();  // a destructor must not throw: close() reports errors, this does not
  }

  /// The file's path.
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  /// How it was opened.
  [[nodiscard]] file_mode mode() const noexcept { return m_mode; }
  /// Whether it is open.
  [[nodiscard]] bool is_open() const noexcept { return m_file.valid(); }
  /// The MPI communicator of its ranks.
  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return m_comm.get(); }

  /// Writes `array` as dataset `name` (slashes make groups) at its global shape; shadows are
  /// not written. Collective over the file's ranks, which must be the array grid's.
  template <class T, int Rank, class MemorySpace>
  void write(std::string_view name, const distributed_array<T, Rank, MemorySpace>& array) {
    static_assert(h5_element<T>,
                  "hetero: h5file writes arithmetic elements and std::complex<float/double>; "
                  "write each field of a struct as an array of its own");
    const region running("io", "write");
    const detail::h5_scope scope;
    detail::write_array(target("writing"), std::string(name), array, *m_writebacks);
  }

  /// Starts writing `array` as dataset `name` and returns at once (collective): the array's
  /// block is copied first, so the array may change as soon as this returns. The write runs on
  /// the io module's I/O thread, in the order writes were started; any other call into a file
  /// waits for the writes started before it. As with write(), the disk starts on the data while
  /// it goes into the file system's cache, so a flush() after it waits only for the rest. Needs
  /// MPI_THREAD_MULTIPLE (hetero::runtime asks for it).
  /// <!-- snippet: fragment
  /// hetero::process_grid<2> grid;
  /// hetero::distributed_array<double, 2> u(hetero::index_space<2>({256, 64}, grid));
  /// hetero::h5file out("field.h5", hetero::file_mode::create, grid.comm());
  /// auto sweep = [](const auto&) {};
  /// -->
  /// @code
  /// auto saved = out.write_async("u", u);
  /// sweep(u);        // computes while u's previous values go to the file
  /// saved.wait();
  /// @endcode
  template <class T, int Rank, class MemorySpace>
  [[nodiscard]] io_handle write_async(std::string_view name,
                                      const distributed_array<T, Rank, MemorySpace>& array) {
    static_assert(h5_element<T>,
                  "hetero: h5file writes arithmetic elements and std::complex<float/double>; "
                  "write each field of a struct as an array of its own");
    const region running("io", "write_async");
    const detail::h5_target at = target("writing");
    detail::require_thread_multiple("hetero::h5file::write_async writes from the io module's I/O thread and",
                                    " or use write()");
    // The copy and its checksum are made here: host kernels may only be launched from this
    // thread, not from the I/O thread. An array refused on one rank (its grid not over the
    // file's ranks) or a copy that fails there (no memory for it) is not thrown here, where the
    // other ranks' jobs would go on into the collective write alone: every rank's job first
    // agrees that all ranks checked and copied their blocks and made their selections, and that
    // they passed the same name and shape (on the I/O thread, in the jobs' order, beside no
    // other collective on the file's communicator), and wait() raises on all.
    // This rank's check failed: its own error's text, raised again by the job (as text, not as
    // an exception_ptr: no exception object is shared with the I/O thread, io_thread.hpp).
    std::string refused;
    try {
      detail::check_same_ranks(at, array, "writing");
    } catch (const invalid_argument& e) {
      refused = e.what();
    }
    detail::block_copy<T, Rank> copy;
    std::uint64_t local_sum = 0;
    std::string copy_error;  // this rank's copy failure, for its message; empty: copied
    if (refused.empty()) {
      try {
        {
          const region copying("io", "copy");
          copy = detail::snapshot(array);
        }
        const region summing("io", "checksum");
        local_sum = detail::local_checksum<T, Rank>(copy.view(), array.shadow().lower, array.space());
      } catch (const std::exception& e) {
        copy = {};  // freed now, not held by the job
        copy_error = std::string("copying this rank's block failed: ") + e.what();
      } catch (...) {
        copy = {};
        copy_error = "copying this rank's block failed: an exception that is not a std::exception";
      }
    }
    // The job releases the copy and the handles it holds before its future is ready: once
    // wait() returns, nothing of it is left for the I/O thread to free (after Kokkos or MPI
    // may have been finalised). (A constructor, not C++20's parenthesised aggregate
    // initialisation, which nvcc's front end does not accept.)
    struct held {
      held(detail::owned_comm c, index_space<Rank> s, detail::block_copy<T, Rank> b)
          : comm(std::move(c)), space(std::move(s)), block(std::move(b)) {}
      detail::owned_comm comm;
      index_space<Rank> space;
      detail::block_copy<T, Rank> block;
    };
    auto job = [file = m_file.get(), path = m_path, key = std::string(name), lower = array.shadow().lower,
                local_sum, copy_error, refused, early = m_writebacks, failed = m_async_failed,
                state =
                    std::make_shared<std::optional<held>>(std::in_place, m_comm, array.space(), std::move(copy))] {
      struct release {
        std::optional<held>& state;
        ~release() { state.reset(); }
      } at_end{*state};
      const region writing("io", "write_async");
      const detail::h5_scope scope;
      held& h = **state;
      try {
        const detail::h5_target at{file, h.comm.get(), path};
        const auto host = h.block.view();
        detail::block_transfer selected;
        const std::string what = "writing dataset '" + key + "' asynchronously";
        detail::agreed_step(
            at, what,
            [&] {
              if (!refused.empty()) throw invalid_argument(refused);
              if (!copy_error.empty()) detail::raise_io(path, what, ": ", copy_error, "; nothing was written");
              selected = detail::select_transfer<Rank>(detail::file_space_of(h.space), host, h.space, lower, {},
                                                       path, what);
            },
            detail::same_dataset(key, h.space));
        detail::write_block_early<T, Rank>(at, key, h.space, selected, host, *early,
                                           [local_sum] { return local_sum; });
      } catch (...) {
        failed->store(true);
        throw;
      }
    };
    return io_handle(detail::io_thread::instance().submit(std::move(job)));
  }

  /// Reads dataset `name` into `array`, whose global shape must be the dataset's; any
  /// distribution and grid (collective). Checks the element type and shape, and the data
  /// against the checksum hetero wrote with it.
  template <class T, int Rank, class MemorySpace>
  void read(std::string_view name, const distributed_array<T, Rank, MemorySpace>& array) {
    static_assert(h5_element<T>, "hetero: h5file reads arithmetic elements and std::complex<float/double>");
    const region running("io", "read");
    const detail::h5_scope scope;
    detail::read_array(target("reading"), std::string(name), array, std::optional<index_box<Rank>>());
  }

  /// Reads the box `from` of dataset `name` (global indices of the dataset) into `array`, whose
  /// extents must be the box's (collective).
  template <class T, int Rank, class MemorySpace>
  void read(std::string_view name, const distributed_array<T, Rank, MemorySpace>& array,
            const index_box<Rank>& from) {
    static_assert(h5_element<T>, "hetero: h5file reads arithmetic elements and std::complex<float/double>");
    const region running("io", "read");
    const detail::h5_scope scope;
    detail::read_array(target("reading"), std::string(name), array, std::optional<index_box<Rank>>(from));
  }

  /// Whether the file holds a dataset or group `name`.
  [[nodiscard]] bool contains(std::string_view name) const {
    const detail::h5_scope scope;
    check_open("looking up '" + std::string(name) + "'");
    const bool found = H5Lexists(m_file.get(), std::string(name).c_str(), H5P_DEFAULT) > 0;
    H5Eclear2(H5E_DEFAULT);
    return found;
  }

  /// The global extents of dataset `name`.
  [[nodiscard]] std::vector<std::int64_t> extents(std::string_view name) const {
    const detail::h5_scope scope;
    check_open("reading the extents of '" + std::string(name) + "'");
    const std::string key(name);
    const auto dataset = detail::open_named_dataset(m_file.get(), m_path, key);
    detail::h5_id space(H5Dget_space(dataset.get()), H5Sclose);
    const int axes = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (axes < 0) detail::raise_h5(m_path, "reading the shape of '", key, "'");
    std::vector<hsize_t> dims(static_cast<std::size_t>(axes));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    return {dims.begin(), dims.end()};
  }

  /// Stores the scalar `value` under `name` (an attribute of the file's root), replacing an
  /// earlier one (collective; every rank passes the same value).
  template <class T>
  void set(std::string_view name, const T& value) {
    static_assert(h5_element<T>, "hetero: h5file::set stores arithmetic values and std::complex<float/double>");
    const detail::h5_scope scope;
    const auto at = target("storing a scalar in");
    const auto type = detail::h5_type_of<T>();
    detail::h5_id scalar(H5Screate(H5S_SCALAR), H5Sclose);
    const std::string key(name);
    // Every rank must pass the same name, type and value (HDF5 writes one rank's value, silently,
    // where they differ, and creates the attribute collectively): a hash of them agreed first,
    // the value compared bit for bit (an x87 long double's 10 bytes, not its padding).
    auto bytes = detail::name_key(key);
    bytes.push_back(static_cast<std::int64_t>(H5Tget_class(type.get())));
    bytes.push_back(static_cast<std::int64_t>(H5Tget_size(type.get())));
    if (H5Tget_class(type.get()) == H5T_INTEGER)
      bytes.push_back(static_cast<std::int64_t>(H5Tget_sign(type.get())));
    constexpr std::size_t value_bytes =
        std::is_floating_point_v<T> && std::numeric_limits<T>::digits == 64 ? 10 : sizeof(T);
    const auto* raw = reinterpret_cast<const unsigned char*>(&value);
    bytes.insert(bytes.end(), raw, raw + value_bytes);
    detail::agreed_step(at, "storing scalar '" + key + "'", [] {},
                        {detail::hash_of(bytes), "scalar names, types or values"});
    detail::write_attribute(at, m_file.get(), key.c_str(), type.get(), scalar.get(), &value);
  }

  /// The scalar stored under `name`; throws `io_error` when there is none or it is of another
  /// type than `T`.
  template <class T>
  [[nodiscard]] T get(std::string_view name) const {
    static_assert(h5_element<T>, "hetero: h5file::get reads arithmetic values and std::complex<float/double>");
    const detail::h5_scope scope;
    check_open("reading a scalar");
    const std::string key(name);
    if (H5Aexists(m_file.get(), key.c_str()) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      detail::raise_io(m_path, "no scalar '", key, "' in the file");
    }
    detail::h5_id attribute(H5Aopen(m_file.get(), key.c_str(), H5P_DEFAULT), H5Aclose);
    detail::h5_id stored(H5Aget_type(attribute.get()), H5Tclose);
    const auto wanted = detail::h5_type_of<T>();
    if (!detail::same_element_type(stored.get(), wanted.get()))
      detail::raise_io(m_path, "scalar '", key, "' is of type ", detail::h5_type_text(stored.get()), ", not ",
                       detail::h5_type_text(wanted.get()));
    T value{};
    if (H5Aread(attribute.get(), wanted.get(), &value) < 0) detail::raise_h5(m_path, "reading scalar '", key, "'");
    return value;
  }

  /// Puts everything written so far on disk (`MPI_File_sync` underneath; collective).
  void flush() {
    const region running("io", "flush");
    const detail::h5_scope scope;
    const auto at = target("flushing");
    m_writebacks->wait();  // the pages the writes sent early are queued: the flush waits for the rest
    detail::agree(at, H5Fflush(m_file.get(), H5F_SCOPE_GLOBAL) >= 0, "flushing the file to disk");
  }

  /// Closes the file (collective); throws `io_error` on every rank when the file system
  /// refused the last of it. Closing a closed file does nothing.
  void close() {
    if (!m_file.valid()) return;
    const region running("io", "close");
    const detail::h5_scope scope;
    m_writebacks->release();  // they finish on their own: a close does not wait for the disk
    const bool closed = m_file.reset() >= 0;
    detail::agree({H5I_INVALID_HID, m_comm.get(), m_path}, closed, "closing the file");
  }

 private:
  void open(const h5file_options& options) {
    const region running("io", "open");
    const detail::h5_scope scope;
    MPI_Info hints = MPI_INFO_NULL;
    HETERO_MPI_CHECK(MPI_Info_create, &hints);
    struct free_info {
      MPI_Info& info;
      ~free_info() { MPI_Info_free(&info); }
    } free_hints{hints};
    if (options.independent_on_one_node && detail::world_nodes::node_size(m_comm.get()) == m_comm.size()) {
      HETERO_MPI_CHECK(MPI_Info_set, hints, "romio_cb_write", "disable");
      HETERO_MPI_CHECK(MPI_Info_set, hints, "romio_cb_read", "disable");
      HETERO_MPI_CHECK(MPI_Info_set, hints, "romio_ds_write", "disable");
    }
    for (const auto& [key, value] : options.hints)
      HETERO_MPI_CHECK(MPI_Info_set, hints, key.c_str(), value.c_str());
    detail::h5_id access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(access.get(), m_comm.get(), hints);
    // Metadata read by one rank and broadcast, written collectively: no storm of small reads.
    H5Pset_all_coll_metadata_ops(access.get(), 1);
    H5Pset_coll_metadata_write(access.get(), 1);
    hid_t id = H5I_INVALID_HID;
    const char* doing = "creating";
    switch (m_mode) {
      case file_mode::create: id = H5Fcreate(m_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()); break;
      case file_mode::read:
        doing = "opening for reading";
        id = H5Fopen(m_path.c_str(), H5F_ACC_RDONLY, access.get());
        break;
      case file_mode::update:
        doing = "opening for update";
        id = H5Fopen(m_path.c_str(), H5F_ACC_RDWR, access.get());
        break;
    }
    m_file = detail::h5_id(id, H5Fclose);
    try {
      detail::agree({H5I_INVALID_HID, m_comm.get(), m_path}, m_file.valid(), std::string(doing) + " " + m_path);
    } catch (...) {
      // Open here but not on every rank (or a rank never came): closed now, under this scope's
      // HDF5 lock, not by m_file's destructor once the failed constructor has left the scope.
      m_file.reset();
      throw;
    }
  }

  void check_open(const std::string& doing) const {
    if (!m_file.valid()) detail::raise_io(m_path, doing, " ", m_path, ": the file is closed");
  }
  detail::h5_target target(const std::string& doing) const {
    check_open(doing);
    return {m_file.get(), m_comm.get(), m_path};
  }

  std::string m_path;
  file_mode m_mode = file_mode::read;
  detail::owned_comm m_comm;
  detail::h5_id m_file;
  // Started by write() and by write_async's jobs on the I/O thread, waited for by flush(): one
  // thread at a time uses them, since every synchronous call first waits for the I/O thread.
  std::shared_ptr<detail::writebacks> m_writebacks = std::make_shared<detail::writebacks>();
  // Set by an asynchronous write that failed, also one refused before anything was written (a
  // failed copy, arguments that differ): its dataset may hold what was there before, with no
  // checksum to tell. A checkpoint does not commit such a file (checkpoint_writer::commit).
  std::shared_ptr<std::atomic<bool>> m_async_failed = std::make_shared<std::atomic<bool>>(false);

  friend class checkpoint_writer;
};

}  // namespace hetero

#endif  // HETERO_IO_H5FILE_HPP
