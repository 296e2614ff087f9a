// The particle update on a coalesce::soa_view. codegen.particles requires its kernel to have the
// memory instructions of the same kernel on plain pointers (particles_plain.cu), and no spills or
// stack frame: the view is meant to cost nothing. It is also a unit of the coalesce_compile_cost
// benchmark (bench/), timed against the raw-pointer unit (particles_restrict.cu): a unit of
// kernels, so it includes the view's header alone (particles_soa_vector.cu includes soa.hpp).
#include <coalesce/soa_view.hpp>

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
