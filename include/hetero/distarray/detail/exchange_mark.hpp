/// @file
/// The mark an array carries once one of its exchanges was abandoned (see `exchange_mark`).
#ifndef HETERO_DISTARRAY_DETAIL_EXCHANGE_MARK_HPP
#define HETERO_DISTARRAY_DETAIL_EXCHANGE_MARK_HPP

#include <atomic>
#include <string_view>

#include "hetero/core/error.hpp"

namespace hetero::detail {

/// Set on an array or coarray once a reflect, gmove or sync on its communicator gave up or failed
/// on this rank with messages in flight: a late rank's messages of that call would match the
/// next call's (the same peers and tags, or the next barrier), so the array refuses every later
/// exchange.
class exchange_mark {
 public:
  /// Marks the array; `what` (a string literal: "reflect", "gmove", "sync_all") names the call. The first
  /// mark is the one reported.
  void mark(const char* what) noexcept {
    const char* none = nullptr;
    m_what.compare_exchange_strong(none, what);
  }
  /// Raises `runtime_error` for the call `call` on the array labelled `label` once marked.
  void check(std::string_view call, std::string_view label) const {
    if (const char* what = m_what.load())
      raise<runtime_error>(call, ": array '", label, "' is out of step since a ", what,
                           " on it gave up waiting or failed on this rank with messages in flight, which a late "
                           "rank's next call would take; it refuses every later reflect, gmove and sync: create a "
                           "new array (collectively) or end the program");
  }

  /// Runs `sync(posted)`, the synchronisation `call` (a string literal) of the array labelled
  /// `label`: refused once marked. `sync` sets `posted` once it has put its part on the
  /// communicator (a barrier, messages); if it gives up or MPI fails after that, the array is
  /// marked (the late rank's part would meet the next sync's). Before it (completing gets that
  /// gave up earlier, which a later sync may still complete) nothing is marked.
  template <class Sync>
  void run_sync(const char* call, std::string_view label, Sync&& sync) {
    check(call, label);
    bool posted = false;
    try {
      sync(posted);
    } catch (const deadlock_error&) {
      if (posted) mark(call);
      throw;
    } catch (const mpi_error&) {
      if (posted) mark(call);
      throw;
    }
  }

 private:
  std::atomic<const char*> m_what{nullptr};
};

}  // namespace hetero::detail

#endif  // HETERO_DISTARRAY_DETAIL_EXCHANGE_MARK_HPP
