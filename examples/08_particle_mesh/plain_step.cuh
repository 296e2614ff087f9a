// The particle-mesh step in plain CUDA, as it is written without coalesce: the particles an array
// of structs, the meshes dense row-major arrays in thrust::device_vectors, a hand-written kernel
// for each phase, and the cell list of the CUDA samples' particles demo (the cell keys sorted
// with Thrust, the particles gathered into that order, and each cell's first and last particle
// found where the sorted key changes). Included by particle_mesh.cu after the physics the two
// versions share: Particle, mesh_params, add_repulsion, cic, interpolate, dense_mesh, jacobi,
// centred_difference, wrap_into_box, kinetic_energy, and the phase_timer.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

inline void plain_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

constexpr std::uint32_t no_particle = 0xffffffffu;  // the first particle of an empty cell

struct plain_mesh {
  plain_mesh(const std::vector<Particle>& start, const mesh_params& params)
      : m(params), particles(start.begin(), start.end()), sorted(start.size()), keys(start.size()), order(start.size()),
        cell_start(params.points()), cell_end(params.points()), forces(start.size()), rho(params.points()),
        phi(params.points(), 0.0f), phi_next(params.points()), ex(params.points()), ey(params.points()) {}
  std::vector<Particle> download() const {
    std::vector<Particle> host(particles.size());
    thrust::copy(particles.begin(), particles.end(), host.begin());
    return host;
  }

  mesh_params m;
  thrust::device_vector<Particle> particles, sorted;  // sorted: the gather's target, then swapped in
  thrust::device_vector<std::uint32_t> keys, order, cell_start, cell_end;
  thrust::device_vector<float2> forces;
  thrust::device_vector<float> rho, phi, phi_next, ex, ey;
};

constexpr int plain_step_first_line = __LINE__ + 1;
__global__ void plain_cell_keys(const Particle* p, std::uint32_t n, int cells, std::uint32_t* keys,
                                std::uint32_t* order) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    keys[i] = std::uint32_t(int(p[i].y) * cells + int(p[i].x));
    order[i] = i;
  }
}

// The particle i of the sorted order gathered; where its key differs from the one before, its
// cell starts and the one before ends.
__global__ void plain_gather_and_find_cells(const Particle* p, const std::uint32_t* keys, const std::uint32_t* order,
                                            std::uint32_t n, Particle* sorted, std::uint32_t* cell_start,
                                            std::uint32_t* cell_end) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const std::uint32_t key = keys[i];
    if (i == 0 || keys[i - 1] != key) {
      cell_start[key] = i;
      if (i > 0) cell_end[keys[i - 1]] = i;
    }
    if (i == n - 1) cell_end[key] = n;
    sorted[i] = p[order[i]];
  }
}

// One thread per sorted particle: every particle of the 9 cells around its own, across the
// periodic edges.
__global__ void plain_pair_forces(const Particle* p, std::uint32_t n, const std::uint32_t* cell_start,
                                  const std::uint32_t* cell_end, mesh_params m, float2* forces) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Particle pi = p[i];
  const int cx = int(pi.x), cy = int(pi.y);
  float fx = 0.0f, fy = 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int cell = (cy + dy + m.cells) % m.cells * m.cells + (cx + dx + m.cells) % m.cells;
      const std::uint32_t first = cell_start[cell];
      if (first == no_particle) continue;
      for (std::uint32_t j = first; j < cell_end[cell]; ++j)
        if (j != i) add_repulsion(m, pi.x, pi.y, p[j].x, p[j].y, fx, fy);
    }
  forces[i] = make_float2(fx, fy);
}

__global__ void plain_deposit(const Particle* p, std::uint32_t n, int cells, float* rho) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const cic_stencil w = cic(p[i].x, p[i].y, cells);
    const float q = p[i].q;
    atomicAdd(&rho[w.r0 * cells + w.c0], q * w.w00);
    atomicAdd(&rho[w.r0 * cells + w.c1], q * w.w01);
    atomicAdd(&rho[w.r1 * cells + w.c0], q * w.w10);
    atomicAdd(&rho[w.r1 * cells + w.c1], q * w.w11);
  }
}

__global__ void plain_jacobi(const float* phi, const float* rho, int cells, float* next) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < cells && c < cells) {
    const int left = c > 0 ? c - 1 : cells - 1, right = c + 1 < cells ? c + 1 : 0;
    const int down = r > 0 ? r - 1 : cells - 1, up = r + 1 < cells ? r + 1 : 0;
    next[r * cells + c] = jacobi(phi[r * cells + left], phi[r * cells + right], phi[down * cells + c],
                                 phi[up * cells + c], rho[r * cells + c]);
  }
}

__global__ void plain_field(const float* phi, int cells, float* ex, float* ey) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < cells && c < cells) {
    const int left = c > 0 ? c - 1 : cells - 1, right = c + 1 < cells ? c + 1 : 0;
    const int down = r > 0 ? r - 1 : cells - 1, up = r + 1 < cells ? r + 1 : 0;
    ex[r * cells + c] = centred_difference(phi[r * cells + left], phi[r * cells + right]);
    ey[r * cells + c] = centred_difference(phi[down * cells + c], phi[up * cells + c]);
  }
}

__global__ void plain_push(Particle* p, std::uint32_t n, const float2* forces, const float* ex, const float* ey,
                           mesh_params m) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Particle q = p[i];
    q.vx += forces[i].x * m.dt;
    q.vy += forces[i].y * m.dt;
    const cic_stencil w = cic(q.x, q.y, m.cells);
    q.vx += q.q * interpolate(dense_mesh{ex, m.cells}, w) * m.dt;
    q.vy += q.q * interpolate(dense_mesh{ey, m.cells}, w) * m.dt;
    q.x = wrap_into_box(q.x + q.vx * m.dt, m.box());
    q.y = wrap_into_box(q.y + q.vy * m.dt, m.box());
    p[i] = q;
  }
}

// One step; returns the kinetic energy after it. The phases of coalesce_step, in its order.
double plain_step(plain_mesh& s, phase_timer& timer) {
  const mesh_params m = s.m;
  const auto n = std::uint32_t(s.particles.size());
  const unsigned blocks = (n + 255) / 256;
  const dim3 mesh_threads(32, 8), mesh_blocks((m.cells + 31) / 32, (m.cells + 7) / 8);
  timer.start();
  plain_cell_keys<<<blocks, 256>>>(raw(s.particles), n, m.cells, raw(s.keys), raw(s.order));
  plain_check(cudaGetLastError(), "plain_cell_keys");
  thrust::stable_sort_by_key(thrust::device, s.keys.begin(), s.keys.end(), s.order.begin());
  plain_check(cudaMemsetAsync(raw(s.cell_start), 0xff, m.points() * sizeof(std::uint32_t)), "cudaMemsetAsync");
  plain_gather_and_find_cells<<<blocks, 256>>>(raw(s.particles), raw(s.keys), raw(s.order), n, raw(s.sorted),
                                               raw(s.cell_start), raw(s.cell_end));
  plain_check(cudaGetLastError(), "plain_gather_and_find_cells");
  s.particles.swap(s.sorted);
  timer.end(phase::cell_list);

  plain_pair_forces<<<blocks, 256>>>(raw(s.particles), n, raw(s.cell_start), raw(s.cell_end), m, raw(s.forces));
  plain_check(cudaGetLastError(), "plain_pair_forces");
  timer.end(phase::pair_forces);

  plain_check(cudaMemsetAsync(raw(s.rho), 0, m.points() * sizeof(float)), "cudaMemsetAsync");
  plain_deposit<<<blocks, 256>>>(raw(s.particles), n, m.cells, raw(s.rho));
  plain_check(cudaGetLastError(), "plain_deposit");
  timer.end(phase::deposit);

  for (int k = 0; k < m.sweeps; ++k) {
    plain_jacobi<<<mesh_blocks, mesh_threads>>>(raw(s.phi), raw(s.rho), m.cells, raw(s.phi_next));
    plain_check(cudaGetLastError(), "plain_jacobi");
    s.phi.swap(s.phi_next);
  }
  timer.end(phase::poisson);

  plain_field<<<mesh_blocks, mesh_threads>>>(raw(s.phi), m.cells, raw(s.ex), raw(s.ey));
  plain_check(cudaGetLastError(), "plain_field");
  timer.end(phase::field);

  plain_push<<<blocks, 256>>>(raw(s.particles), n, raw(s.forces), raw(s.ex), raw(s.ey), m);
  plain_check(cudaGetLastError(), "plain_push");
  timer.end(phase::push);

  const double energy = thrust::transform_reduce(thrust::device, raw(s.particles), raw(s.particles) + n,
                                                 kinetic_energy{}, 0.0, cuda::std::plus<double>{});
  timer.end(phase::energy);
  return energy;
}
constexpr int plain_step_lines = __LINE__ - plain_step_first_line;
