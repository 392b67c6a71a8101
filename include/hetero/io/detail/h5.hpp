/// @file
/// The io module's ground: HDF5 identifiers that close themselves, the lock every call into
/// HDF5 holds, HDF5's error stack turned into `hetero::io_error`, and the HDF5 type of each
/// element type hetero writes.
#ifndef HETERO_IO_DETAIL_H5_HPP
#define HETERO_IO_DETAIL_H5_HPP

#include <hdf5.h>
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/wait.hpp"
#include "hetero/io/detail/io_thread.hpp"

#if !defined(H5_HAVE_PARALLEL)
#error \
    "hetero: hetero/io.hpp needs a parallel HDF5 (built with MPI); link hetero::io from find_package(hetero COMPONENTS io)"
#endif

namespace hetero {

/// An element type the io module writes and reads: the arithmetic types (not bool) and
/// `std::complex` of float or double (stored as the compound {r, i} h5py reads as complex).
template <class T>
concept h5_element = (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                     std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

namespace detail {

/// One HDF5 identifier, closed by its destructor with the close function of its kind.
class h5_id {
 public:
  h5_id() = default;
  h5_id(hid_t id, herr_t (*close)(hid_t)) noexcept : m_id(id), m_close(close) {}
  h5_id(h5_id&& other) noexcept
      : m_id(std::exchange(other.m_id, H5I_INVALID_HID)), m_close(std::exchange(other.m_close, nullptr)) {}
  h5_id& operator=(h5_id&& other) noexcept {
    if (this != &other) {
      reset();
      m_id = std::exchange(other.m_id, H5I_INVALID_HID);
      m_close = std::exchange(other.m_close, nullptr);
    }
    return *this;
  }
  h5_id(const h5_id&) = delete;
  h5_id& operator=(const h5_id&) = delete;
  ~h5_id() { reset(); }

  [[nodiscard]] hid_t get() const noexcept { return m_id; }
  [[nodiscard]] bool valid() const noexcept { return m_id >= 0; }
  /// Closes now; returns what the close returned (0 when there was nothing to close).
  herr_t reset() noexcept {
    herr_t result = 0;
    if (m_id >= 0 && m_close) result = m_close(m_id);
    m_id = H5I_INVALID_HID;
    return result;
  }

 private:
  hid_t m_id = H5I_INVALID_HID;
  herr_t (*m_close)(hid_t) = nullptr;
};

/// The HDF5 that Linux distributions ship is built without thread safety: every call hetero
/// makes into HDF5 holds this lock (the io module's own I/O thread included).
inline std::recursive_mutex& h5_lock() {
  static std::recursive_mutex lock;
  return lock;
}

/// For a scope: the asynchronous writes started before it finished (program order, see
/// io_thread.hpp), the lock, and HDF5's automatic error printing off (hetero reports errors
/// with its own messages; the user's printing setting is restored on exit).
class h5_scope {
 public:
  h5_scope() : m_drained((drain_io_thread(), true)), m_hold(h5_lock()) {
    H5Eget_auto2(H5E_DEFAULT, &m_print, &m_data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  h5_scope(const h5_scope&) = delete;
  h5_scope& operator=(const h5_scope&) = delete;
  ~h5_scope() { H5Eset_auto2(H5E_DEFAULT, m_print, m_data); }

 private:
  [[maybe_unused]] bool m_drained;
  std::lock_guard<std::recursive_mutex> m_hold;
  H5E_auto2_t m_print = nullptr;
  void* m_data = nullptr;
};

/// The innermost descriptions on HDF5's error stack ("truncated file: eof = ...; unable to
/// open file"), and the stack cleared.
inline std::string h5_stack_text() {
  std::string text;
  auto walk = [](unsigned n, const H5E_error2_t* entry, void* data) -> herr_t {
    auto& out = *static_cast<std::string*>(data);
    if (n >= 3 || !entry->desc || !*entry->desc) return 0;
    if (!out.empty()) out += "; ";
    out += entry->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? std::string("no detail") : text;
}

/// Throws `io_error` about `path`: `parts` then what HDF5 said.
template <class... Parts>
[[noreturn]] void raise_h5(const std::string& path, const Parts&... parts) {
  const std::string said = h5_stack_text();
  throw io_error(message("hetero::io: ", parts..., " (HDF5 says: ", said, ")"), path);
}

/// Throws `io_error` about `path` with `parts` as the message.
template <class... Parts>
[[noreturn]] void raise_io(const std::string& path, const Parts&... parts) {
  throw io_error(message("hetero::io: ", parts...), path);
}

/// Whether `ok` holds on every rank of `comm` (core's `allreduce_max`, waited with the
/// communicator's policy, so a rank that never comes is a `deadlock_error` naming `what`):
/// hetero agrees on every outcome that one rank alone could see (a write the file system
/// refused on one aggregator), so that every rank raises the same error or none does.
inline bool all_ranks(MPI_Comm comm, bool ok, std::string_view what) {
  return allreduce_max<1>({ok ? 0U : 1U}, comm, make_wait_policy(comm), what)[0] == 0;
}

/// Whether the type `stored` of a dataset or attribute is, in memory, the type `wanted`.
inline bool same_element_type(hid_t stored, hid_t wanted) {
  h5_id native(H5Tget_native_type(stored, H5T_DIR_ASCEND), H5Tclose);
  return native.valid() && H5Tequal(native.get(), wanted) > 0;
}

/// The HDF5 memory type of `T` (a copy, closed with the handle).
template <h5_element T>
h5_id h5_type_of() {
  auto copy = [](hid_t native) { return h5_id(H5Tcopy(native), H5Tclose); };
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using part = typename T::value_type;
    h5_id type(H5Tcreate(H5T_COMPOUND, sizeof(T)), H5Tclose);
    const hid_t native = std::is_same_v<part, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    H5Tinsert(type.get(), "r", 0, native);
    H5Tinsert(type.get(), "i", sizeof(part), native);
    return type;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (sizeof(T) == sizeof(float)) return copy(H5T_NATIVE_FLOAT);
    if constexpr (sizeof(T) == sizeof(double)) return copy(H5T_NATIVE_DOUBLE);
    if constexpr (sizeof(T) > sizeof(double)) return copy(H5T_NATIVE_LDOUBLE);
  } else if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1) return copy(H5T_NATIVE_INT8);
    if constexpr (sizeof(T) == 2) return copy(H5T_NATIVE_INT16);
    if constexpr (sizeof(T) == 4) return copy(H5T_NATIVE_INT32);
    if constexpr (sizeof(T) == 8) return copy(H5T_NATIVE_INT64);
  } else {
    if constexpr (sizeof(T) == 1) return copy(H5T_NATIVE_UINT8);
    if constexpr (sizeof(T) == 2) return copy(H5T_NATIVE_UINT16);
    if constexpr (sizeof(T) == 4) return copy(H5T_NATIVE_UINT32);
    if constexpr (sizeof(T) == 8) return copy(H5T_NATIVE_UINT64);
  }
}

/// A type's description for messages: "float64", "int32", "uint8", "compound of 16 bytes"...
inline std::string h5_type_text(hid_t type) {
  const auto size = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT: return "float" + std::to_string(size);
    case H5T_INTEGER: return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(size);
    case H5T_COMPOUND:
      if (H5Tget_nmembers(type) == 2) {
        h5_id part(H5Tget_member_type(type, 0), H5Tclose);
        if (part.valid() && H5Tget_class(part.get()) == H5T_FLOAT)
          return "complex of float" + std::to_string(8 * H5Tget_size(part.get()));
      }
      return "compound of " + std::to_string(size / 8) + " bytes";
    case H5T_STRING: return "string";
    default: return "an HDF5 type of class " + std::to_string(static_cast<int>(H5Tget_class(type)));
  }
}

}  // namespace detail
}  // namespace hetero

#endif  // HETERO_IO_DETAIL_H5_HPP
