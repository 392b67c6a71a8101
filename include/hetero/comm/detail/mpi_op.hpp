/// @file
/// MPI operations for any reduction: MPI's built-ins where it has them, otherwise a user
/// operation made once per functor type (or reached through a datatype attribute when the
/// functor has state), freed when MPI is finalised.
#ifndef HETERO_COMM_DETAIL_MPI_OP_HPP
#define HETERO_COMM_DETAIL_MPI_OP_HPP

#include <mpi.h>

#include <atomic>
#include <exception>
#include <type_traits>

#include "hetero/comm/detail/local_ops.hpp"
#include "hetero/comm/reduce_ops.hpp"
#include "hetero/core/mpi.hpp"
#include "hetero/core/mpi/datatype.hpp"
#include "hetero/core/mpi/known_defects.hpp"

namespace hetero::detail {

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

/// MPI's user functions compute inout[i] = in[i] op inout[i], `in` coming from lower ranks. An
/// exception must not unwind through MPI: in a blocking reduction it is recorded in the
/// thread's `op_failure` (local_ops.hpp) and raised once MPI's call has returned.
template <class T, class R>
void apply_user_op(const R& reduction, const void* in, void* inout, int len) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  op_failure* failure = t_op_failure;
  if (failure == nullptr) {
    for (int i = 0; i < len; ++i) b[i] = reduction.on_host(a[i], b[i]);
    return;
  }
  if (failure->failed.load(std::memory_order_relaxed)) return;
  try {
    for (int i = 0; i < len; ++i) b[i] = reduction.on_host(a[i], b[i]);
  } catch (...) {
    failure->record(std::current_exception());
  }
}

/// A reduction MPI can call: a built-in operation, or one made from the functor (also where the
/// installed MPI is known to get the built-in wrong, `core/mpi/known_defects.hpp`). Stateless
/// functors get one MPI_Op per type made once; a functor with state is reached through an
/// attribute on a datatype made for this call (MPI's callback only receives the datatype), so
/// it works from any thread that drives MPI's progress.
template <class T, class R>
class mpi_reduction {
 public:
  explicit mpi_reduction(const R& reduction) : m_reduction(reduction) {
    if constexpr (has_builtin_mpi_op<T, R>) {
      if (!mpi_reduction_is_wrong(builtin_mpi_op<T, R>(), mpi_type<T>())) {
        m_op = builtin_mpi_op<T, R>();
        m_type = mpi_type<T>();
        return;
      }
    }
    if constexpr (stateless) {
      m_op = cached_op();
      m_type = mpi_type<T>();
    } else {
      m_op = cached_op();
      m_owned_type = mpi_datatype::bytes(sizeof(T));
      HETERO_MPI_CHECK(MPI_Type_set_attr, m_owned_type.get(), keyval(), &m_reduction);
      m_type = m_owned_type.get();
    }
  }
  mpi_reduction(const mpi_reduction&) = delete;
  mpi_reduction& operator=(const mpi_reduction&) = delete;
  ~mpi_reduction() = default;

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
      HETERO_MPI_CHECK(MPI_Op_create, &call, commutative_for<R, T> ? 1 : 0, &o);
      at_mpi_finalize([o]() mutable { MPI_Op_free(&o); });
      return o;
    }();
    return op;
  }

  R m_reduction;
  MPI_Op m_op = MPI_OP_NULL;
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
  mpi_datatype m_owned_type;  // the type that carries the functor, for a functor with state
};

}  // namespace hetero::detail

#endif  // HETERO_COMM_DETAIL_MPI_OP_HPP
