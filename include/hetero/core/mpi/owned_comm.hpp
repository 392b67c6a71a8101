/// @file
/// The one owner of the MPI communicators hetero creates: a duplicate (or a split) whose
/// errors are returned (so that HETERO_MPI_CHECK sees them), shared by cheap copies and freed
/// with the last one, unless a wait on it gave up (`keep_communicator`). Every module that needs
/// a communicator of its own holds one of these.
#ifndef HETERO_CORE_MPI_OWNED_COMM_HPP
#define HETERO_CORE_MPI_OWNED_COMM_HPP

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "hetero/core/error.hpp"
#include "hetero/core/mpi.hpp"

namespace hetero::detail {

/// Keeps `comm` from ever being freed by an `owned_comm`: a wait on it gave up, and requests it
/// abandoned are still posted. Freed, its id could go to a new communicator, whose messages
/// those requests would then take.
inline std::mutex& kept_communicators_mutex() {
  static auto* const m = new std::mutex();  // never destroyed: an owned_comm may outlive statics
  return *m;
}
inline std::vector<MPI_Comm>& kept_communicators() {
  static auto* const kept = new std::vector<MPI_Comm>();  // never destroyed, on purpose
  return *kept;
}
inline void keep_communicator(MPI_Comm comm) {
  const std::lock_guard lock(kept_communicators_mutex());
  auto& kept = kept_communicators();
  if (std::find(kept.begin(), kept.end(), comm) == kept.end()) kept.push_back(comm);
}
/// Drops `comm` from the kept ones: hetero never frees a kept communicator, so a new one with the
/// same handle means the kept one was the user's, and the user freed it.
inline void forget_kept_communicator(MPI_Comm comm) {
  const std::lock_guard lock(kept_communicators_mutex());
  auto& kept = kept_communicators();
  kept.erase(std::remove(kept.begin(), kept.end(), comm), kept.end());
}
/// Whether `comm` must never be freed (`keep_communicator`).
inline bool communicator_kept(MPI_Comm comm) {
  const std::lock_guard lock(kept_communicators_mutex());
  const auto& kept = kept_communicators();
  return std::find(kept.begin(), kept.end(), comm) != kept.end();
}

/// A duplicate of a user communicator, shared by copies (a cheap handle) and freed with the
/// last copy unless kept (`keep_communicator`). Errors on it are returned, never fatal.
/// Duplicating is collective.
class owned_comm {
 public:
  owned_comm() = default;

  /// Duplicates `comm` (collective over `comm`) and installs `MPI_ERRORS_RETURN` on the copy.
  static owned_comm duplicate(MPI_Comm comm) {
    HETERO_EXPECTS(comm != MPI_COMM_NULL, "the MPI communicator to duplicate is MPI_COMM_NULL");
    auto owned = std::make_shared<holder>();
    HETERO_MPI_CHECK(MPI_Comm_dup, comm, &owned->comm);
    return adopted(std::move(owned));
  }

  /// The ranks of `comm` that pass the same `color` (`MPI_Comm_split`, ordered by `key`);
  /// collective over `comm`. A rank that passes `MPI_UNDEFINED` gets an empty handle.
  static owned_comm split(MPI_Comm comm, int color, int key) {
    auto owned = std::make_shared<holder>();
    HETERO_MPI_CHECK(MPI_Comm_split, comm, color, key, &owned->comm);
    if (owned->comm == MPI_COMM_NULL) return {};
    return adopted(std::move(owned));
  }

  /// The ranks of `comm` that share a node with this one (`MPI_Comm_split_type` with
  /// `MPI_COMM_TYPE_SHARED`, ordered as in `comm`); collective over `comm`.
  static owned_comm split_shared(MPI_Comm comm) {
    auto owned = std::make_shared<holder>();
    int rank = 0;
    HETERO_MPI_CHECK(MPI_Comm_rank, comm, &rank);
    HETERO_MPI_CHECK(MPI_Comm_split_type, comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &owned->comm);
    return adopted(std::move(owned));
  }

  /// Takes ownership of `comm`, a communicator hetero made (e.g. with `MPI_Comm_idup`).
  static owned_comm adopt(MPI_Comm comm) {
    auto owned = std::make_shared<holder>();
    owned->comm = comm;
    return adopted(std::move(owned));
  }

  /// The communicator (MPI_COMM_NULL for a default-constructed handle).
  [[nodiscard]] MPI_Comm get() const noexcept { return m_holder ? m_holder->comm : MPI_COMM_NULL; }
  /// This process's rank in it.
  [[nodiscard]] int rank() const noexcept { return m_rank; }
  /// Its number of ranks.
  [[nodiscard]] int size() const noexcept { return m_size; }

 private:
  struct holder;
  static owned_comm adopted(std::shared_ptr<holder> owned) {
    owned_comm c;
    forget_kept_communicator(owned->comm);
    HETERO_MPI_CHECK(MPI_Comm_set_errhandler, owned->comm, MPI_ERRORS_RETURN);
    HETERO_MPI_CHECK(MPI_Comm_rank, owned->comm, &c.m_rank);
    HETERO_MPI_CHECK(MPI_Comm_size, owned->comm, &c.m_size);
    c.m_holder = std::move(owned);
    return c;
  }

  struct holder {
    MPI_Comm comm = MPI_COMM_NULL;
    holder() = default;
    holder(const holder&) = delete;
    holder& operator=(const holder&) = delete;
    ~holder() {
      if (comm != MPI_COMM_NULL && !mpi_finalized() && !communicator_kept(comm)) MPI_Comm_free(&comm);
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

}  // namespace hetero::detail

#endif  // HETERO_CORE_MPI_OWNED_COMM_HPP
