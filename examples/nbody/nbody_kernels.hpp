// The N-body loop bodies, shared by the example and by bench/exec: direct all-pairs forces with
// softening, leapfrog (kick-drift-kick) updates, and the energies. Particles are rows of
// (x, y, z, m); G = 1.
#ifndef HETERO_EXAMPLES_NBODY_KERNELS_HPP
#define HETERO_EXAMPLES_NBODY_KERNELS_HPP

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace nbody {

/// acc(i) = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2) for local particle i, whose
/// row in `all` (every particle's position and mass) is first + i.
struct forces {
  std::int64_t first;  // global index of local particle 0
  std::int64_t count;  // particles in `all`
  double softening2;   // eps^2

  template <class All, class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, const All& all, const Acc& acc) const {
    const std::int64_t me = first + i;
    const double xi = all(me, 0), yi = all(me, 1), zi = all(me, 2);
    double ax = 0, ay = 0, az = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const double dx = all(j, 0) - xi, dy = all(j, 1) - yi, dz = all(j, 2) - zi;
      const double r2 = dx * dx + dy * dy + dz * dz + softening2;
      const double inv = 1.0 / std::sqrt(r2);
      const double s = all(j, 3) * inv * inv * inv;  // the j == me term adds 0 (dx = dy = dz = 0)
      ax += s * dx;
      ay += s * dy;
      az += s * dz;
    }
    acc(i, 0) = ax;
    acc(i, 1) = ay;
    acc(i, 2) = az;
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
