/// @file
/// MPI datatypes and operations for any transferable element type and reduction: built-ins
/// where MPI has them, otherwise a contiguous byte type and a user operation created once and
/// freed when MPI is finalised.
#ifndef HETERO_COMM_DETAIL_MPI_TYPE_HPP
#define HETERO_COMM_DETAIL_MPI_TYPE_HPP

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <type_traits>
#include <vector>

#include "hetero/comm/reduce_ops.hpp"
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

/// Whether MPI has a built-in operation for reduction `R` on `T` (MPI_SUM/PROD on numbers and
/// complex numbers, MPI_MIN/MAX on real numbers; never on bool, structs or user functors).
template <class T, class R>
constexpr bool has_builtin_mpi_op = [] {
  using U = std::remove_cv_t<T>;
  constexpr bool real = std::is_arithmetic_v<U> && !std::is_same_v<U, bool>;
  if constexpr (R::builtin == builtin_op::sum || R::builtin == builtin_op::prod) return real || is_std_complex<U>;
  if constexpr (R::builtin == builtin_op::min || R::builtin == builtin_op::max) return real;
  return false;
}();

/// MPI's built-in operation for `R` (requires `has_builtin_mpi_op<T, R>`).
template <class T, class R>
MPI_Op builtin_mpi_op() {
  static_assert(has_builtin_mpi_op<T, R>, "hetero: internal: no built-in MPI operation");
  switch (R::builtin) {
    case builtin_op::sum: return MPI_SUM;
    case builtin_op::prod: return MPI_PROD;
    case builtin_op::min: return MPI_MIN;
    default: return MPI_MAX;
  }
}

/// MPI's user functions compute inout[i] = in[i] op inout[i], `in` coming from lower ranks.
template <class T, class R>
void apply_user_op(const R& reduction, const void* in, void* inout, int len) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < len; ++i) b[i] = reduction.on_host(a[i], b[i]);
}

/// A reduction MPI can call: a built-in operation, or one made from the functor. Stateless
/// functors get one MPI_Op per type made once; a functor with state is reached through an
/// attribute on a datatype made for this call (MPI's callback only receives the datatype), so
/// it works from any thread that drives MPI's progress.
template <class T, class R>
class mpi_reduction {
 public:
  explicit mpi_reduction(const R& reduction) : m_reduction(reduction) {
    if constexpr (has_builtin_mpi_op<T, R>) {
      m_op = builtin_mpi_op<T, R>();
      m_type = mpi_type<T>();
    } else if constexpr (stateless) {
      m_op = cached_op();
      m_type = mpi_type<T>();
    } else {
      m_op = cached_op();
      HETERO_MPI_CHECK(MPI_Type_contiguous, static_cast<int>(sizeof(T)), MPI_BYTE, &m_owned_type);
      HETERO_MPI_CHECK(MPI_Type_commit, &m_owned_type);
      HETERO_MPI_CHECK(MPI_Type_set_attr, m_owned_type, keyval(), &m_reduction);
      m_type = m_owned_type;
    }
  }
  mpi_reduction(const mpi_reduction&) = delete;
  mpi_reduction& operator=(const mpi_reduction&) = delete;
  ~mpi_reduction() {
    if (m_owned_type != MPI_DATATYPE_NULL && !mpi_finalized()) MPI_Type_free(&m_owned_type);
  }

  [[nodiscard]] MPI_Op op() const noexcept { return m_op; }
  [[nodiscard]] MPI_Datatype type() const noexcept { return m_type; }

 private:
  static constexpr bool stateless = std::is_empty_v<R> && std::is_default_constructible_v<R>;

  static int keyval() {
    static const int key = [] {
      int k = MPI_KEYVAL_INVALID;
      HETERO_MPI_CHECK(MPI_Type_create_keyval, MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k, nullptr);
      at_mpi_finalize([k]() mutable { MPI_Type_free_keyval(&k); });
      return k;
    }();
    return key;
  }

  static void call(void* in, void* inout, int* len, MPI_Datatype* type) {
    if constexpr (stateless) {
      (void)type;
      apply_user_op<T>(R{}, in, inout, *len);
    } else {
      void* attribute = nullptr;
      int found = 0;
      MPI_Type_get_attr(*type, keyval(), &attribute, &found);
      if (!found) MPI_Abort(MPI_COMM_WORLD, 1);  // unreachable: every such type carries the attribute
      apply_user_op<T>(*static_cast<const R*>(attribute), in, inout, *len);
    }
  }

  static MPI_Op cached_op() {
    static const MPI_Op op = [] {
      MPI_Op o = MPI_OP_NULL;
      HETERO_MPI_CHECK(MPI_Op_create, &call, R::commutative ? 1 : 0, &o);
      at_mpi_finalize([o]() mutable { MPI_Op_free(&o); });
      return o;
    }();
    return op;
  }

  R m_reduction;
  MPI_Op m_op = MPI_OP_NULL;
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
  MPI_Datatype m_owned_type = MPI_DATATYPE_NULL;
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_MPI_TYPE_HPP
