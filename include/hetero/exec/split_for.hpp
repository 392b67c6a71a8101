/// @file
/// The chunk form of work sharing: `hetero::split_for` hands each side its execution space
/// instance and its chunk of the range, so that each side can call its own library (cuBLAS on
/// the device, CBLAS on the host) for DGEMM-style work.
#ifndef HETERO_EXEC_SPLIT_FOR_HPP
#define HETERO_EXEC_SPLIT_FOR_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "hetero/exec/access.hpp"
#include "hetero/exec/detail/guarded_functor.hpp"
#include "hetero/exec/detail/split_run.hpp"
#include "hetero/exec/split_policy.hpp"
#include "hetero/exec/work_sharing.hpp"

namespace hetero {

/// Calls `body(space, begin, end)` once for the device's chunk (with the device instance) and
/// once per host chunk (with the host instance), the device chunk and the host chunks at the
/// same time; the host chunks run one per core, in parallel when the host space is parallel (so
/// a host body should be single-threaded, e.g. CBLAS with one thread). Each call must leave its
/// work complete or enqueued on `space` (it is fenced after). Returns when all are done. An
/// exception of a body reaches the caller after both sides finished (the host's first, else the
/// device's); host chunks not yet started when one threw are skipped.
/// <!-- snippet: fragment
/// std::int64_t n = 64;
/// auto gemm_rows = [](const auto&, std::int64_t, std::int64_t) {};
/// -->
/// @code
/// hetero::split_for("dgemm", n, [&](const auto& space, std::int64_t begin, std::int64_t end) {
///   gemm_rows(space, begin, end);   // cuBLAS for Kokkos::Cuda, CBLAS for a host space
/// });
/// @endcode
template <split_range Range, class Body>
void split_for(std::string_view label, const Range& range, const Body& body) {
  split_for(label, range, access_list<>{}, body);
}

/// As above, with mirrored arrays: `body(space, begin, end, views...)` receives the views of
/// `arrays` on that side, after the rows it lacks were moved.
template <split_range Range, class... Accesses, class Body>
void split_for(std::string_view label, const Range& range, const access_list<Accesses...>& arrays,
               const Body& body) {
  split_for(default_work_sharing(), label, range, arrays, body);
}

/// `split_for` with the labels, settings and helper thread of `sharing` instead of the default
/// handle's.
template <split_range Range, class Body>
void split_for(const work_sharing& sharing, std::string_view label, const Range& range, const Body& body) {
  split_for(sharing, label, range, access_list<>{}, body);
}

/// `split_for` with mirrored arrays, in `sharing`.
template <split_range Range, class... Accesses, class Body>
void split_for(const work_sharing& sharing, std::string_view label, const Range& range,
               const access_list<Accesses...>& arrays, const Body& body) {
  const auto policy = detail::to_split_policy(range);
  using policy_t = std::decay_t<decltype(policy)>;
  using host_space = typename policy_t::host_space;
  detail::split_run(
      sharing, label, policy, arrays,
      [&](const detail::split_plan& plan, const detail::label_state&) {
        const auto space = detail::device_instance(policy.device(), plan.device_threads);
        try {
          std::apply([&](const auto&... views) { body(space, plan.device_begin, plan.device_end, views...); },
                     detail::side_views<true>(arrays));
        } catch (...) {
          space.fence();  // what the body queued before it threw ends before the caller sees its error
          throw;
        }
        space.fence();
      },
      [&](const detail::split_plan& plan, const detail::label_state& state) {
        const auto views = detail::side_views<false>(arrays);
        auto run_chunk = [&](int chunk) {
          const auto [begin, end] = plan.host_chunk(chunk);
          std::apply([&](const auto&... v) { body(policy.host(), begin, end, v...); }, views);
        };
        // An exception must not leave a parallel region: the first one is kept, chunks not yet
        // started are skipped, and it is rethrown after the fence.
        detail::first_exception error;
        if (plan.host_chunks == 1) {
          run_chunk(0);
        } else {
          Kokkos::parallel_for(
              state.host_kernel,
              Kokkos::RangePolicy<host_space>(policy.host(), 0, plan.host_chunks).set_chunk_size(1),
              [&](int chunk) {
                if (error.failed()) return;
                // This chunk's thread runs a part of the split loop: a split loop here is refused.
                const detail::running_split_scope part(detail::split_label(plan, state));
                try {
                  run_chunk(chunk);
                } catch (...) {
                  error.capture();
                }
              });
        }
        policy.host().fence();
        error.rethrow_if_failed();
      });
}

}  // namespace hetero

#endif  // HETERO_EXEC_SPLIT_FOR_HPP
