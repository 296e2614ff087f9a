// Compiled to SASS by the codegen.layout_methods test: a member function called on an element of
// a layout_view of records (layout::aos) or of tiles (layout::aosoa<32>) must touch memory exactly
// as the same code written with the fields, as codegen.element_methods holds for columns. Each
// kernel named *_by_method has a twin named *_by_hand: energy() reads 3 of the 6 fields, kick()
// reads and writes 3; on view[i] and on for_each's element. No GPU needed.
#include <coalesce/algorithm.hpp>
#include <coalesce/layout_view.hpp>
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

using records = coalesce::layout_view<Particle, coalesce::layout::aos>;
using tiles = coalesce::layout_view<Particle, coalesce::layout::aosoa<32>>;
using const_records = coalesce::layout_view<const Particle, coalesce::layout::aos>;
using const_tiles = coalesce::layout_view<const Particle, coalesce::layout::aosoa<32>>;

template <class View>
__device__ void energy_by_method(const View& p, float* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) out[i] = p[i].energy();
}
template <class View>
__device__ void energy_by_hand(const View& p, float* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) out[i] = 0.5f * (p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz);
}
template <class View>
__device__ void kick_by_method(const View& p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) p[i].kick(1.0f, 2.0f, 3.0f, dt);
}
template <class View>
__device__ void kick_by_hand(const View& p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) {
    p[i].vx += 1.0f * dt;
    p[i].vy += 2.0f * dt;
    p[i].vz += 3.0f * dt;
  }
}

__global__ void energy_by_method_records(const_records p, float* out) { energy_by_method(p, out); }
__global__ void energy_by_hand_records(const_records p, float* out) { energy_by_hand(p, out); }
__global__ void energy_by_method_tiles(const_tiles p, float* out) { energy_by_method(p, out); }
__global__ void energy_by_hand_tiles(const_tiles p, float* out) { energy_by_hand(p, out); }
__global__ void kick_by_method_records(records p, float dt) { kick_by_method(p, dt); }
__global__ void kick_by_hand_records(records p, float dt) { kick_by_hand(p, dt); }
__global__ void kick_by_method_tiles(tiles p, float dt) { kick_by_method(p, dt); }
__global__ void kick_by_hand_tiles(tiles p, float dt) { kick_by_hand(p, dt); }

// The same in for_each: the walks' kernels (the chunk walk on tiles, the staged walk on
// records), one set per f.
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

void launch(records r, tiles t, float* out, float dt) {
  energy_by_method_records<<<1, 256>>>(r, out);
  energy_by_hand_records<<<1, 256>>>(r, out);
  energy_by_method_tiles<<<1, 256>>>(t, out);
  energy_by_hand_tiles<<<1, 256>>>(t, out);
  kick_by_method_records<<<1, 256>>>(r, dt);
  kick_by_hand_records<<<1, 256>>>(r, dt);
  kick_by_method_tiles<<<1, 256>>>(t, dt);
  kick_by_hand_tiles<<<1, 256>>>(t, dt);
  coalesce::for_each(r, for_each_kick_by_method{dt});
  coalesce::for_each(r, for_each_kick_by_hand{dt});
  coalesce::for_each(t, for_each_kick_by_method{dt});
  coalesce::for_each(t, for_each_kick_by_hand{dt});
}
