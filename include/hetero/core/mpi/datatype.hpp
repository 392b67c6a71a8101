/// @file
/// The one map from C++ types to MPI datatypes: built-ins where MPI has them, otherwise a
/// contiguous byte type created once and freed inside MPI_Finalize; and the owner of derived
/// datatypes made for one use.
#ifndef HETERO_CORE_MPI_DATATYPE_HPP
#define HETERO_CORE_MPI_DATATYPE_HPP

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// Runs `cleanup` inside MPI_Finalize (through a delete callback on MPI_COMM_SELF, which MPI
/// calls first), so that cached MPI objects are freed while MPI still runs.
inline void at_mpi_finalize(std::function<void()> cleanup) {
  static std::mutex mutex;
  static std::vector<std::function<void()>> cleanups;
  static int keyval = MPI_KEYVAL_INVALID;
  const std::lock_guard lock(mutex);
  if (keyval == MPI_KEYVAL_INVALID) {
    auto run = [](MPI_Comm, int, void*, void*) -> int {
      const std::lock_guard inner(mutex);
      for (auto it = cleanups.rbegin(); it != cleanups.rend(); ++it) (*it)();
      cleanups.clear();
      return MPI_SUCCESS;
    };
    HETERO_MPI_CHECK(MPI_Comm_create_keyval, MPI_COMM_NULL_COPY_FN, run, &keyval, nullptr);
    HETERO_MPI_CHECK(MPI_Comm_set_attr, MPI_COMM_SELF, keyval, nullptr);
  }
  cleanups.push_back(std::move(cleanup));
}

/// Whether MPI has a built-in datatype for `T`. A compile-time flag, not a handle comparison:
/// MPI handles are not constant expressions in every MPI (Open MPI's are addresses).
template <class T>
constexpr bool has_builtin_mpi_type =
    std::is_arithmetic_v<std::remove_cv_t<T>> || std::is_same_v<std::remove_cv_t<T>, std::byte> ||
    std::is_same_v<std::remove_cv_t<T>, std::complex<float>> ||
    std::is_same_v<std::remove_cv_t<T>, std::complex<double>> ||
    std::is_same_v<std::remove_cv_t<T>, std::complex<long double>>;

/// MPI's built-in datatype for `T` (requires `has_builtin_mpi_type<T>`).
template <class T>
MPI_Datatype builtin_mpi_type() {
  using U = std::remove_cv_t<T>;
  static_assert(has_builtin_mpi_type<U>, "hetero: internal: no built-in MPI datatype");
  if constexpr (std::is_same_v<U, bool>)
    return MPI_CXX_BOOL;
  else if constexpr (std::is_same_v<U, std::byte>)
    return MPI_BYTE;
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return MPI_CXX_FLOAT_COMPLEX;
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return MPI_CXX_DOUBLE_COMPLEX;
  else if constexpr (std::is_same_v<U, std::complex<long double>>)
    return MPI_CXX_LONG_DOUBLE_COMPLEX;
  else if constexpr (std::is_same_v<U, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<U, signed char>)
    return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<U, unsigned char>)
    return MPI_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<U, wchar_t>)
    return MPI_WCHAR;
  else if constexpr (std::is_same_v<U, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>)
    return MPI_LONG_DOUBLE;
  else if constexpr (std::is_signed_v<U>) {  // other integers by size (short, long, char8_t, ...)
    if constexpr (sizeof(U) == 1)
      return MPI_INT8_T;
    else if constexpr (sizeof(U) == 2)
      return MPI_INT16_T;
    else if constexpr (sizeof(U) == 4)
      return MPI_INT32_T;
    else
      return MPI_INT64_T;
  } else {
    if constexpr (sizeof(U) == 1)
      return MPI_UINT8_T;
    else if constexpr (sizeof(U) == 2)
      return MPI_UINT16_T;
    else if constexpr (sizeof(U) == 4)
      return MPI_UINT32_T;
    else
      return MPI_UINT64_T;
  }
}

/// The datatype MPI moves `T` with: the built-in one, or `sizeof(T)` contiguous bytes
/// (created and committed once per type).
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (has_builtin_mpi_type<T>) {
    return builtin_mpi_type<T>();
  } else {
    static const MPI_Datatype type = [] {
      MPI_Datatype t = MPI_DATATYPE_NULL;
      HETERO_MPI_CHECK(MPI_Type_contiguous, static_cast<int>(sizeof(T)), MPI_BYTE, &t);
      HETERO_MPI_CHECK(MPI_Type_commit, &t);
      at_mpi_finalize([t]() mutable { MPI_Type_free(&t); });
      return t;
    }();
    return type;
  }
}

/// A committed MPI datatype, freed with its owner (unless MPI is already finalised).
class mpi_datatype {
 public:
  mpi_datatype() = default;
  explicit mpi_datatype(MPI_Datatype type) noexcept : m_type(type) {}
  mpi_datatype(mpi_datatype&& other) noexcept
      : m_type(std::exchange(other.m_type, MPI_DATATYPE_NULL)), m_owned(std::exchange(other.m_owned, true)) {}
  mpi_datatype& operator=(mpi_datatype&& other) noexcept {
    if (this != &other) {
      reset();
      m_type = std::exchange(other.m_type, MPI_DATATYPE_NULL);
      m_owned = std::exchange(other.m_owned, true);
    }
    return *this;
  }
  mpi_datatype(const mpi_datatype&) = delete;
  mpi_datatype& operator=(const mpi_datatype&) = delete;
  ~mpi_datatype() { reset(); }

  /// `bytes` contiguous bytes (committed here, freed with the owner).
  static mpi_datatype bytes(std::size_t bytes) {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    HETERO_MPI_CHECK(MPI_Type_contiguous, mpi_count(bytes, "element size in bytes"), MPI_BYTE, &type);
    HETERO_MPI_CHECK(MPI_Type_commit, &type);
    return mpi_datatype(type);
  }

  [[nodiscard]] MPI_Datatype get() const noexcept { return m_type; }

 private:
  // A predefined type: never freed.
  static mpi_datatype builtin(MPI_Datatype type) noexcept {
    mpi_datatype d(type);
    d.m_owned = false;
    return d;
  }
  void reset() noexcept {
    if (m_owned && m_type != MPI_DATATYPE_NULL && !mpi_finalized()) MPI_Type_free(&m_type);
    m_type = MPI_DATATYPE_NULL;
    m_owned = true;
  }
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
  bool m_owned = true;
};

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_DATATYPE_HPP
