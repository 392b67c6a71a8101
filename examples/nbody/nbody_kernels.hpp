// The N-body loop bodies, shared by the example and by bench/exec: direct all-pairs forces with
// softening (in slices of the sources, then summed), leapfrog (kick-drift-kick) updates, and the
// energies. Particles are rows of (x, y, z, m); G = 1.
#ifndef HETERO_EXAMPLES_NBODY_KERNELS_HPP
#define HETERO_EXAMPLES_NBODY_KERNELS_HPP

#include <hetero/core/math.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nbody {

/// Partial sums per particle of the force loop: enough items (particles x slices) to keep a
/// GPU busy (2^20: one thread per particle leaves most of it idle at 16,384 particles, and the
/// FP64 units wait on each interaction's chain of dependent operations; on the H200 of
/// docs/gpu.md 16 slices took 0.60 ms there, 32 0.52, 64 0.50), at most 64, and at most one
/// slice per source.
inline std::int64_t force_slices(std::int64_t particles, std::int64_t sources) {
  const std::int64_t wanted = ((std::int64_t{1} << 20) + particles - 1) / std::max<std::int64_t>(particles, 1);
  return std::clamp<std::int64_t>(wanted, 1, std::min<std::int64_t>(64, std::max<std::int64_t>(sources, 1)));
}

/// Item k of the force loop: local particle i = k % mine's force from the sources of slice
/// s = k / mine, into row k of `partial`. Neighbouring items are neighbouring particles with
/// the same sources, so a GPU's neighbouring threads read each source together:
/// partial(k) = sum over j in slice s of m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2), where
/// particle i's row in `all` (every particle's position and mass) is first + i.
struct partial_forces {
  std::int64_t first;   // global index of local particle 0
  std::int64_t mine;    // local particles
  std::int64_t count;   // particles in `all`
  std::int64_t slices;  // partial sums per particle (force_slices)
  double softening2;    // eps^2

  template <class All, class Partial>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, const All& all, const Partial& partial) const {
    const std::int64_t i = k % mine, s = k / mine, me = first + i;
    const std::int64_t begin = s * count / slices, end = (s + 1) * count / slices;
    const double xi = all(me, 0), yi = all(me, 1), zi = all(me, 2);
    double ax = 0, ay = 0, az = 0;
    for (std::int64_t j = begin; j < end; ++j) {
      const double dx = all(j, 0) - xi, dy = all(j, 1) - yi, dz = all(j, 2) - zi;
      const double inv = hetero::rsqrt(dx * dx + dy * dy + dz * dz + softening2);
      const double f = all(j, 3) * inv * inv * inv;  // the j == me term adds 0 (dx = dy = dz = 0)
      ax += f * dx;
      ay += f * dy;
      az += f * dz;
    }
    partial(k, 0) = ax;
    partial(k, 1) = ay;
    partial(k, 2) = az;
  }
};

/// acc(i) = the sum of local particle i's partial forces, slice after slice.
struct sum_partials {
  std::int64_t mine;
  std::int64_t slices;

  template <class Partial, class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const Partial& partial, const Acc& acc) const {
    for (int d = 0; d < 3; ++d) {
      double sum = 0;
      for (std::int64_t s = 0; s < slices; ++s) sum += partial(s * mine + i, d);
      acc(i, d) = sum;
    }
  }
};

/// First half of a leapfrog step: v += a dt / 2, x += v dt.
struct kick_drift {
  double dt;

  template <class Vel, class Pos, class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const Vel& vel, const Pos& pos, const Acc& acc) const {
    for (int d = 0; d < 3; ++d) {
      vel(i, d) += 0.5 * dt * acc(i, d);
      pos(i, d) += dt * vel(i, d);
    }
  }
};

/// Second half of a leapfrog step: v += a dt / 2.
struct kick {
  double dt;

  template <class Vel, class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const Vel& vel, const Acc& acc) const {
    for (int d = 0; d < 3; ++d) vel(i, d) += 0.5 * dt * acc(i, d);
  }
};

/// Kinetic energy of local particle i: m v^2 / 2 (its mass is in `all` at row first + i).
struct kinetic_energy {
  std::int64_t first;

  template <class Vel, class All>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const Vel& vel, const All& all, double& sum) const {
    const double v2 = vel(i, 0) * vel(i, 0) + vel(i, 1) * vel(i, 1) + vel(i, 2) * vel(i, 2);
    sum += 0.5 * all(first + i, 3) * v2;
  }
};

/// Potential energy of local particle i with every other particle, halved (each pair is
/// counted from both ends): -sum_j m_i m_j / sqrt(r^2 + eps^2) / 2.
struct potential_energy {
  std::int64_t first;
  std::int64_t count;
  double softening2;

  template <class All>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const All& all, double& sum) const {
    const std::int64_t me = first + i;
    double local = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      if (j == me) continue;
      const double dx = all(j, 0) - all(me, 0), dy = all(j, 1) - all(me, 1), dz = all(j, 2) - all(me, 2);
      local -= all(j, 3) / std::sqrt(dx * dx + dy * dy + dz * dz + softening2);
    }
    sum += 0.5 * all(me, 3) * local;
  }
};

}  // namespace nbody

#endif  // HETERO_EXAMPLES_NBODY_KERNELS_HPP
