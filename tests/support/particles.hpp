// The particle of coalesce's SoA tests: six floats, fields named with COALESCE_FIELDS.
#pragma once

#include <coalesce/soa.hpp>
#include <coalesce/testing/device.hpp>

#include <vector>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

namespace coalesce_test {

// n particles with positions and velocities in [-1, 1), vx shifted to [-1.5, 0.5).
inline std::vector<Particle> random_particles(std::size_t n) {
  const auto r = coalesce::testing::random_values<float>(6 * n);
  std::vector<Particle> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = {r[6 * i], r[6 * i + 1], r[6 * i + 2], r[6 * i + 3] - 0.5f, r[6 * i + 4], r[6 * i + 5]};
  return v;
}

inline bool same(const Particle& a, const Particle& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.vx == b.vx && a.vy == b.vy && a.vz == b.vz;
}

#if COALESCE_CUDA_COMPILER
// A particle's kinetic energy (unit mass), summed in double: what the reductions reduce. Takes a
// Particle or a soa_view's proxy of one.
struct kinetic_energy {
  template <class P>
  __host__ __device__ double operator()(const P& p) const {
    return 0.5 * (double(p.vx) * p.vx + double(p.vy) * p.vy + double(p.vz) * p.vz);
  }
};
struct plus {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
// x < threshold: what the compaction tests and benchmark remove. With x uniform in [-1, 1),
// -1 + 2 f removes a fraction f; -2 nothing, 2 everything. Takes a Particle or a proxy of one.
struct x_below {
  float threshold;
  template <class P>
  __host__ __device__ bool operator()(const P& p) const {
    return p.x < threshold;
  }
};
#endif

}  // namespace coalesce_test
