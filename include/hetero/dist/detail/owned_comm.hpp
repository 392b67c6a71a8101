/// @file
/// RAII owners of the MPI objects the dist module creates: a duplicated communicator whose
/// errors are returned (so that HETERO_MPI_CHECK sees them) and committed datatypes.
#ifndef HETERO_DIST_DETAIL_OWNED_COMM_HPP
#define HETERO_DIST_DETAIL_OWNED_COMM_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// A duplicate of a user communicator, shared by copies (a cheap handle) and freed with the
/// last copy. Errors on it are returned, never fatal. Duplicating is collective.
class owned_comm {
 public:
  owned_comm() = default;

  /// Duplicates `comm` (collective over `comm`) and installs `MPI_ERRORS_RETURN` on the copy.
  static owned_comm duplicate(MPI_Comm comm) {
    owned_comm c;
    auto owned = std::make_shared<holder>();
    HETERO_MPI_CHECK(MPI_Comm_dup, comm, &owned->comm);
    HETERO_MPI_CHECK(MPI_Comm_set_errhandler, owned->comm, MPI_ERRORS_RETURN);
    HETERO_MPI_CHECK(MPI_Comm_rank, owned->comm, &c.m_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, owned->comm, &c.m_size);
    c.m_holder = std::move(owned);
    return c;
  }

  /// The communicator (MPI_COMM_NULL for a default-constructed handle).
  [[nodiscard]] MPI_Comm get() const noexcept { return m_holder ? m_holder->comm : MPI_COMM_NULL; }
  /// This process's rank in it.
  [[nodiscard]] int rank() const noexcept { return m_rank; }
  /// Its number of ranks.
  [[nodiscard]] int size() const noexcept { return m_size; }

 private:
  struct holder {
    MPI_Comm comm = MPI_COMM_NULL;
    holder() = default;
    holder(const holder&) = delete;
    holder& operator=(const holder&) = delete;
    ~holder() {
      if (comm != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&comm);
    }
  };
  std::shared_ptr<holder> m_holder;
  int m_rank = 0;
  int m_size = 1;
};

/// Whether two communicators hold the same processes in the same order (so that a rank
/// number means the same process in both).
inline bool congruent(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  HETERO_MPI_CHECK(MPI_Comm_compare, a, b, &result);
  return result == MPI_IDENT || result == MPI_CONGRUENT;
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

  /// The element type of every transfer of `T`: MPI's own type for floating-point and integer
  /// types (MPICH takes its fast paths, notably for small RMA operations, only for those),
  /// else `sizeof(T)` contiguous bytes. Only the bits move, so an integer type of the same size
  /// serves whatever its signedness.
  template <class T>
  static mpi_datatype of() {
    if constexpr (std::is_same_v<T, float>) return builtin(MPI_FLOAT);
    if constexpr (std::is_same_v<T, double>) return builtin(MPI_DOUBLE);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if constexpr (sizeof(T) == 1) return builtin(MPI_UINT8_T);
      if constexpr (sizeof(T) == 2) return builtin(MPI_UINT16_T);
      if constexpr (sizeof(T) == 4) return builtin(MPI_UINT32_T);
      if constexpr (sizeof(T) == 8) return builtin(MPI_UINT64_T);
    }
    return bytes(sizeof(T));
  }

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

#endif  // HETERO_DIST_DETAIL_OWNED_COMM_HPP
