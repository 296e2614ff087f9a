// The hand-written particle kernels coalesce's particle calls are measured against, shared by the
// device tests and coalesce_bench: cloud-in-cell deposits (one atomicAdd per contribution, and a
// shared-memory privatized one for particles sorted by cell) and softened all-pairs gravity (one
// thread per body, and GPU Gems 3's tiled float4 kernel), and a Lennard-Jones-like force through
// a cell list (the 27 cells around each particle). Each is the fastest form we can write of what a
// user writes by hand.
#pragma once

#include <coalesce/pitched_matrix.hpp>
#include <coalesce/uniform_grid.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace competitors {

// Cloud-in-cell deposit of the charges q at (x, y), in cell units, into `grid`: one atomicAdd
// per contribution, one thread per particle (a grid-stride loop of 4 blocks an SM).
void plain_cloud_in_cell(const float* x, const float* y, const float* q, std::size_t n,
                         coalesce::pitched_view<float> grid, cudaStream_t stream);
// The same for particles sorted by cell (row-major): chunks of 8192 particles summed in a box of
// the grid in shared memory, the box taken from the chunk's first and last particle, each thread's
// sums of its current cell kept in registers first.
void privatized_cloud_in_cell(const float* x, const float* y, const float* q, std::size_t n,
                              coalesce::pitched_view<float> grid, cudaStream_t stream);

// eps^2 of the softened gravity below.
inline constexpr float gravity_softening2 = 1e-2f;

// The one pair of softened gravity, shared by the library's f and the two hand-written kernels,
// so that all do the same arithmetic: a += d * m_j / (|d|^2 + eps^2)^(3/2), d = p_j - p_i.
// A body paired with itself adds d = 0 times a finite number: nothing, so the hand-written
// kernels, as users write them, do not test j != i.
__device__ __forceinline__ void add_gravity(float dx, float dy, float dz, float m_j, float& ax, float& ay, float& az) {
  const float inv_r = rsqrtf(gravity_softening2 + dx * dx + dy * dy + dz * dz);
  const float s = m_j * inv_r * inv_r * inv_r;
  ax += dx * s;
  ay += dy * s;
  az += dz * s;
}

// Softened gravity on the bodies (x, y, z, m) into (ax, ay, az), blocks of `threads`: one thread
// per body reading every j from the columns (threads 128 or 256), or the tiled kernel (128, 256
// or 512).
void plain_gravity(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az,
                   unsigned n, unsigned threads, cudaStream_t stream);
void tiled_gravity(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az,
                   unsigned n, unsigned threads, cudaStream_t stream);

// The pair force's magnitude over r, softened (r^2 + 0.01) so that random positions give no
// infinities: 24 (2 s^12 - s^6) / r^2 with s = sigma / r, sigma = 0.5, times the other's mass.
__host__ __device__ inline float lj_over_r(float r2, float m) {
  const float inverse = 1.0f / (r2 + 0.01f);
  const float s2 = 0.25f * inverse, s6 = s2 * s2 * s2;
  return 24.0f * (2.0f * s6 * s6 - s6) * inverse * m;
}

// The Lennard-Jones-like force of lj_over_r on particles sorted by cell of `grid`, whose cells are
// [offsets[c], offsets[c + 1]), within sqrt(cutoff2): one thread per sorted particle, the 27 cells
// around its own, the force summed in registers and written once into (fx, fy, fz).
void cell_list_forces(const float* x, const float* y, const float* z, const float* m, const std::uint32_t* offsets,
                      coalesce::uniform_grid<3> grid, float cutoff2, std::uint32_t n, float* fx, float* fy, float* fz,
                      cudaStream_t stream);

// The f's of the measured work, the same in the tests, the benchmark and their host models.

// The cloud-in-cell deposit of one particle (x, y, q in cell units): four adds.
struct cloud_in_cell {
#pragma nv_exec_check_disable  // a host model's accumulator is host code, the device's device code
  template <class P, class Acc>
  __host__ __device__ void operator()(const P& p, const Acc& acc) const {
    const float x = p.x, y = p.y, q = p.q;
    const auto c = std::size_t(x), r = std::size_t(y);
    const float wx = x - float(c), wy = y - float(r);
    acc.add(r, c, q * (1.0f - wx) * (1.0f - wy));
    acc.add(r, c + 1, q * wx * (1.0f - wy));
    acc.add(r + 1, c, q * (1.0f - wx) * wy);
    acc.add(r + 1, c + 1, q * wx * wy);
  }
};

// Softened gravity for for_each_pair: bodies with x, y, z, m into an accumulator with x, y, z.
struct softened_gravity {
  template <class P, class A>
  __device__ void operator()(const P& p_i, const P& p_j, A& a) const {
    add_gravity(p_j.x - p_i.x, p_j.y - p_i.y, p_j.z - p_i.z, p_j.m, a.x, a.y, a.z);
  }
};

// The Lennard-Jones-like force of lj_over_r for for_each_neighbor: particles with x, y, z, m into
// an accumulator with fx, fy, fz.
struct lennard_jones {
  template <class P, class Q, class A>
  __device__ void operator()(const P& p_i, const Q& p_j, A& a) const {
    const float dx = p_i.x - p_j.x, dy = p_i.y - p_j.y, dz = p_i.z - p_j.z;
    const float s = lj_over_r(dx * dx + dy * dy + dz * dz, p_j.m);
    a.fx += s * dx;
    a.fy += s * dy;
    a.fz += s * dz;
  }
};

}  // namespace competitors
