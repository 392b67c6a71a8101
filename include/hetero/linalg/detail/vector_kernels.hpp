/// @file
/// The vector kernels of CG and of the CSR product, as free functions over a range policy:
/// nvcc refuses extended (device) lambdas inside private member functions, so the solver and
/// the matrix call these instead of launching kernels of their own.
#ifndef HETERO_LINALG_DETAIL_VECTOR_KERNELS_HPP
#define HETERO_LINALG_DETAIL_VECTOR_KERNELS_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace hetero::detail {

/// f(i) for every index i of the range policy: a Kokkos::parallel_for, or on Kokkos::Serial a
/// plain loop on the calling thread while no Kokkos tool is loaded. On a small matrix Kokkos'
/// dispatch (its tool hooks, the functor's copy) costs as much as the kernels: with it, and dot's
/// deep_copy of its partial sums onto themselves, a 48-row solve took 1.35x the time
/// (docs/results/linalg.md). A loaded tool (a profiler, a kernel logger) still sees every kernel.
template <class Policy, class Functor>
void for_rows(const char* label, const Policy& policy, const Functor& f) {
#if defined(KOKKOS_ENABLE_SERIAL)
  // (A policy with a work tag goes to Kokkos, which calls the functor's tagged operator().)
  if constexpr (std::is_same_v<typename Policy::execution_space, Kokkos::Serial> &&
                std::is_void_v<typename Policy::work_tag>) {
    if (!Kokkos::Tools::profileLibraryLoaded()) {
      for (auto i = policy.begin(); i < policy.end(); ++i) f(i);
      return;
    }
  }
#endif
  Kokkos::parallel_for(label, policy, f);
}

/// Elements per partial sum of `dot`.
inline constexpr std::int64_t dot_chunk = 1024;

/// The partial sums `dot` needs for `n` elements.
inline std::size_t dot_chunks(std::size_t n) noexcept {
  return (n + static_cast<std::size_t>(dot_chunk) - 1) / static_cast<std::size_t>(dot_chunk);
}

/// Independent sums within a chunk of `dot`: element i of a chunk goes to lane i % dot_lanes, so
/// that the additions do not wait on each other (one running sum is a chain of dependent
/// additions, one per element: the latency of an add each, most of a small CG's dot).
inline constexpr int dot_lanes = 4;
static_assert(dot_lanes == 4, "hetero: dot adds its four lanes pairwise; change that sum with the count");

/// u'v over the policy's indices (this rank's part), the same bits on every host space and thread
/// count (a GPU's, or a host compiler's with FMA enabled, fused multiply-adds round differently):
/// the sums of `dot_chunk` consecutive elements (each in `dot_lanes` lanes by
/// index, the lanes added pairwise; the chunks in parallel, into `partials`, `dot_chunks(n)`
/// long), then added in chunk order on the host (`host_partials`, a host mirror of `partials`).
/// A reduction whose order follows the threads would give other bits for the same vectors on
/// another thread count, and an ill-conditioned CG another iteration count (docs/results/core.md).
template <class Policy, class Vector, class Partials, class HostPartials>
double dot(const Policy& policy, const Vector& u, const Vector& v, const Partials& partials,
           const HostPartials& host_partials) {
  using space = typename Policy::execution_space;
  const std::int64_t begin = policy.begin(), end = policy.end();
  const auto chunks = static_cast<std::int64_t>(dot_chunks(static_cast<std::size_t>(end - begin)));
  for_rows(
      "hetero::cg dot", Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>(policy.space(), 0, chunks),
      KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t first = begin + c * dot_chunk;
        const std::int64_t last = end - first < dot_chunk ? end : first + dot_chunk;
        double s[dot_lanes] = {};
        std::int64_t i = first;
        for (; i + dot_lanes <= last; i += dot_lanes)
          for (int l = 0; l < dot_lanes; ++l) s[l] += u(i + l) * v(i + l);
        for (int l = 0; l < dot_lanes - 1; ++l)  // the tail: a fixed count, so s stays in registers
          if (i + l < last) s[l] += u(i + l) * v(i + l);
        partials(c) = (s[0] + s[1]) + (s[2] + s[3]);
      });
  if (host_partials.data() == partials.data())
    policy.space().fence();  // the same memory (a host space): no copy, and no Kokkos deep_copy's hooks
  else
    Kokkos::deep_copy(host_partials, partials);
  double sum = 0;
  for (std::int64_t c = 0; c < chunks; ++c) sum += host_partials(c);
  return sum;
}

/// to = from
template <class Policy, class Vector>
void copy(const Policy& policy, const Vector& to, const Vector& from) {
  for_rows(
      "hetero::cg copy", policy, KOKKOS_LAMBDA(const std::size_t i) { to(i) = from(i); });
}

/// y = a u + c v
template <class Policy, class Vector>
void axpby(const Policy& policy, const Vector& y, double a, const Vector& u, double c, const Vector& v) {
  for_rows(
      "hetero::cg axpby", policy, KOKKOS_LAMBDA(const std::size_t i) { y(i) = a * u(i) + c * v(i); });
}

/// p = r + beta p
template <class Policy, class Vector>
void xpby(const Policy& policy, const Vector& p, const Vector& r, double beta) {
  for_rows(
      "hetero::cg xpby", policy, KOKKOS_LAMBDA(const std::size_t i) { p(i) = r(i) + beta * p(i); });
}

/// x += alpha p; r -= alpha q (one pass)
template <class Policy, class Vector>
void cg_update(const Policy& policy, const Vector& x, const Vector& r, double alpha, const Vector& p,
               const Vector& q) {
  for_rows(
      "hetero::cg update", policy, KOKKOS_LAMBDA(const std::size_t i) {
        x(i) += alpha * p(i);
        r(i) -= alpha * q(i);
      });
}

/// The vectors of pipelined predict-and-recompute CG (Chen & Carson 2020, pipe-PR-CG).
template <class Vector>
struct pipelined_vectors {
  Vector x, r, w, p, s, u;  // w = A r, s = A p, u = A s
};

/// x += alpha p; r -= alpha s; w -= alpha u (w predicted, recomputed after); p = r + beta p;
/// s = w + beta s
template <class Policy, class Vector>
void pipelined_update(const Policy& policy, const pipelined_vectors<Vector>& v, double alpha, double beta) {
  const auto x = v.x, r = v.r, w = v.w, p = v.p, s = v.s, u = v.u;
  for_rows(
      "hetero::cg pipelined update", policy, KOKKOS_LAMBDA(const std::size_t i) {
        x(i) += alpha * p(i);
        r(i) -= alpha * s(i);
        w(i) -= alpha * u(i);
        p(i) = r(i) + beta * p(i);
        s(i) = w(i) + beta * s(i);
      });
}

/// z = d r, entry by entry (Jacobi: d the inverse diagonal)
template <class Policy, class Vector, class Diagonal>
void scale(const Policy& policy, const Vector& z, const Diagonal& d, const Vector& r) {
  for_rows(
      "hetero::cg jacobi", policy, KOKKOS_LAMBDA(const std::size_t i) { z(i) = d(i) * r(i); });
}

/// The first step of a Chebyshev polynomial preconditioner: d = (1/theta) D^-1 r, z = d
/// (`inverse_diagonal` is D^-1).
template <class Policy, class Vector, class Diagonal>
void chebyshev_first(const Policy& policy, const Vector& z, const Vector& d, const Diagonal& inverse_diagonal,
                     const Vector& r, double inverse_theta) {
  for_rows(
      "hetero::cg chebyshev", policy, KOKKOS_LAMBDA(const std::size_t i) {
        d(i) = inverse_theta * inverse_diagonal(i) * r(i);
        z(i) = d(i);
      });
}

/// A further step, q = A z given: d = c1 d + c2 D^-1 (r - q), z += d
template <class Policy, class Vector, class Diagonal>
void chebyshev_step(const Policy& policy, const Vector& z, const Vector& d, const Diagonal& inverse_diagonal,
                    const Vector& r, const Vector& q, double c1, double c2) {
  for_rows(
      "hetero::cg chebyshev", policy, KOKKOS_LAMBDA(const std::size_t i) {
        d(i) = c1 * d(i) + c2 * inverse_diagonal(i) * (r(i) - q(i));
        z(i) += d(i);
      });
}

/// The vectors of preconditioned pipe-PR-CG: z = M r, w = A z, s = A p, q = M s, u = A q, and
/// m = M w after the first update.
template <class Vector>
struct preconditioned_vectors {
  Vector x, r, z, w, p, s, q, u, m;
};

/// x += alpha p; r -= alpha s; z -= alpha q; w -= alpha u (w predicted for the new s; the
/// preconditioner then gives m = M w)
template <class Policy, class Vector>
void preconditioned_update(const Policy& policy, const preconditioned_vectors<Vector>& v, double alpha) {
  const auto x = v.x, r = v.r, z = v.z, w = v.w, p = v.p, s = v.s, q = v.q, u = v.u;
  for_rows(
      "hetero::cg preconditioned update", policy, KOKKOS_LAMBDA(const std::size_t i) {
        x(i) += alpha * p(i);
        r(i) -= alpha * s(i);
        z(i) -= alpha * q(i);
        w(i) -= alpha * u(i);
      });
}

/// p = z + beta p; s = w + beta s; q = m + beta q
template <class Policy, class Vector>
void preconditioned_directions(const Policy& policy, const preconditioned_vectors<Vector>& v, double beta) {
  const auto z = v.z, w = v.w, p = v.p, s = v.s, q = v.q, m = v.m;
  for_rows(
      "hetero::cg preconditioned directions", policy, KOKKOS_LAMBDA(const std::size_t i) {
        p(i) = z(i) + beta * p(i);
        s(i) = w(i) + beta * s(i);
        q(i) = m(i) + beta * q(i);
      });
}

/// y = A x for CSR rows (`row_ptr`, `cols`, `values`) over the policy's rows.
template <class Policy, class RowPtr, class Columns, class Values, class Vector>
void spmv(const Policy& policy, const RowPtr& row_ptr, const Columns& cols, const Values& values, const Vector& x,
          const Vector& y) {
  for_rows(
      "hetero::spmv", policy, KOKKOS_LAMBDA(const std::size_t r) {
        // Two entries a step: half the loop's branches, and two products in flight.
        const auto end = row_ptr(r + 1);
        auto k = row_ptr(r);
        double sum = 0;
        for (; k + 1 < end; k += 2)
          sum += values(k) * x(static_cast<std::size_t>(cols(k))) +
                 values(k + 1) * x(static_cast<std::size_t>(cols(k + 1)));
        if (k < end) sum += values(k) * x(static_cast<std::size_t>(cols(k)));
        y(r) = sum;
      });
}

// --- GPU spaces: Kokkos' reductions, and updates fused with their dot products ----------------
// On a GPU, `dot`'s fixed-order chunks (a thread per 1024 elements) leave the device all but idle
// and bring their partial sums to the host. There the solver uses the kernels below instead: one
// reduction per sweep, fused with the update that produces its operands, and one value (or a
// few) to the host. Their bits are those of Kokkos' reduction on that device, as a GPU's fused
// multiply-adds already differ from the host's.

/// N sums reduced together (a Kokkos reduction's value).
template <int N>
struct sums {
  double v[N] = {};
};

/// A Kokkos reducer of N sums in one pass, into a host `sums<N>`.
template <int N>
class sum_of {
 public:
  using reducer = sum_of;
  using value_type = sums<N>;
  using result_view_type = Kokkos::View<value_type, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  KOKKOS_INLINE_FUNCTION explicit sum_of(value_type& result) : m_result(&result) {}

  KOKKOS_INLINE_FUNCTION void join(value_type& into, const value_type& from) const {
    for (int k = 0; k < N; ++k) into.v[k] += from.v[k];
  }
#if KOKKOS_VERSION < 30700
  // Kokkos before 3.7 joins through volatile references.
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& into, const volatile value_type& from) const {
    for (int k = 0; k < N; ++k) into.v[k] = into.v[k] + from.v[k];  // C++20: no += on volatile
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& value) const {
    for (int k = 0; k < N; ++k) value.v[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *m_result.data(); }
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return m_result; }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }

 private:
  result_view_type m_result;
};

/// u'v as one Kokkos reduction.
template <class Policy, class Vector>
double dot_reduce(const Policy& policy, const Vector& u, const Vector& v) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "hetero::cg dot", policy, KOKKOS_LAMBDA(const std::size_t i, double& s) { s += u(i) * v(i); }, sum);
  return sum;
}

/// x += alpha p; r -= alpha q; returns the new r'r (one pass, one reduction).
template <class Policy, class Vector>
double cg_update_dot(const Policy& policy, const Vector& x, const Vector& r, double alpha, const Vector& p,
                     const Vector& q) {
  double rr = 0;
  Kokkos::parallel_reduce(
      "hetero::cg update and r'r", policy,
      KOKKOS_LAMBDA(const std::size_t i, double& s) {
        x(i) += alpha * p(i);
        const double ri = r(i) - alpha * q(i);
        r(i) = ri;
        s += ri * ri;
      },
      rr);
  return rr;
}

/// x += alpha p; r -= alpha q; z = d r (Jacobi); returns r'z and r'r (one pass, one reduction).
template <class Policy, class Vector, class Diagonal>
sums<2> cg_update_jacobi_dots(const Policy& policy, const Vector& x, const Vector& r, const Vector& z,
                              const Diagonal& d, double alpha, const Vector& p, const Vector& q) {
  sums<2> result;
  Kokkos::parallel_reduce(
      "hetero::cg jacobi update and dots", policy,
      KOKKOS_LAMBDA(const std::size_t i, sums<2>& s) {
        x(i) += alpha * p(i);
        const double ri = r(i) - alpha * q(i);
        const double zi = d(i) * ri;
        r(i) = ri;
        z(i) = zi;
        s.v[0] += ri * zi;
        s.v[1] += ri * ri;
      },
      sum_of<2>(result));
  return result;
}

/// The pipelined variant's dot products in one pass: r'z, p's, r'q, s'q and r'r.
template <class Policy, class Vector>
sums<5> pipelined_dots(const Policy& policy, const Vector& r, const Vector& z, const Vector& p, const Vector& s,
                       const Vector& q) {
  sums<5> result;
  Kokkos::parallel_reduce(
      "hetero::cg pipelined dots", policy,
      KOKKOS_LAMBDA(const std::size_t i, sums<5>& t) {
        const double ri = r(i), si = s(i), qi = q(i);
        t.v[0] += ri * z(i);
        t.v[1] += p(i) * si;
        t.v[2] += ri * qi;
        t.v[3] += si * qi;
        t.v[4] += ri * ri;
      },
      sum_of<5>(result));
  return result;
}

}  // namespace hetero::detail

#endif  // HETERO_LINALG_DETAIL_VECTOR_KERNELS_HPP
