// The particle update on coalesce::soa_view: the unit whose compile time and machine code are
// compared with particles_raw.cu (same kernel on six raw __restrict__ pointers).
#include <coalesce/soa.hpp>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

template <class Particles>
__global__ void advance(Particles p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

void launch_advance(coalesce::soa_view<Particle> particles, float dt) {
  const std::size_t n = particles.size();
  advance<<<unsigned((n + 255) / 256), 256>>>(particles, n, dt);
}
