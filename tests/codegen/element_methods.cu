// Compiled to SASS by the codegen.element_methods test: a member function called on an element in
// columns (COALESCE_METHODS) must touch memory exactly as the same code written with the fields.
// Each kernel named *_by_method has a twin named *_by_hand; the test requires the two to have the
// same global memory instructions, in order. energy() reads 3 of the 6 fields; kick() reads and
// writes 3; on a soa_view's element (view[i]) and on for_each's. No GPU needed.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>

struct Particle {
  float x, y, z, vx, vy, vz;
  __host__ __device__ float energy() const { return 0.5f * (vx * vx + vy * vy + vz * vz); }
  __host__ __device__ void kick(float ax, float ay, float az, float dt) {
    vx += ax * dt;
    vy += ay * dt;
    vz += az * dt;
  }
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);
COALESCE_METHODS(Particle, energy, kick);

__global__ void energy_by_method(coalesce::soa_view<const Particle> p, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = p[i].energy();
}
__global__ void energy_by_hand(coalesce::soa_view<const Particle> p, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 0.5f * (p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz);
}

__global__ void kick_by_method(coalesce::soa_view<Particle> p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i].kick(1.0f, 2.0f, 3.0f, dt);
}
__global__ void kick_by_hand(coalesce::soa_view<Particle> p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i].vx += 1.0f * dt;
    p[i].vy += 2.0f * dt;
    p[i].vz += 3.0f * dt;
  }
}

// The same in for_each: the walk's kernels, one set per f.
struct for_each_kick_by_method {
  float dt;
  template <class E>
  __device__ void operator()(E&& p) const {
    p.kick(1.0f, 2.0f, 3.0f, dt);
  }
};
struct for_each_kick_by_hand {
  float dt;
  template <class E>
  __device__ void operator()(E&& p) const {
    p.vx += 1.0f * dt;
    p.vy += 2.0f * dt;
    p.vz += 3.0f * dt;
  }
};

void launch(coalesce::soa_view<Particle> v, float* out, float dt) {
  const std::size_t n = v.size();
  const unsigned blocks = unsigned((n + 255) / 256);
  energy_by_method<<<blocks, 256>>>(v, out, n);
  energy_by_hand<<<blocks, 256>>>(v, out, n);
  kick_by_method<<<blocks, 256>>>(v, n, dt);
  kick_by_hand<<<blocks, 256>>>(v, n, dt);
  coalesce::for_each(v, for_each_kick_by_method{dt});
  coalesce::for_each(v, for_each_kick_by_hand{dt});
}
