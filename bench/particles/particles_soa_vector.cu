// The particle update on a soa_view, in a unit that also owns the particles: it includes
// <coalesce/soa.hpp>, the one include for views and containers, and fills a soa_vector from an
// array of structs. A unit of the coalesce_compile_cost benchmark, next to the kernel-only unit
// (tests/codegen/particles_soa.cu, which includes soa_view.hpp): the difference is what the
// container's host headers (<string>, <stdexcept>, <vector>) add to a compile.
#include <coalesce/soa.hpp>

#include <vector>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

__global__ void advance(coalesce::soa_view<Particle> p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

std::vector<Particle> advanced(const std::vector<Particle>& start, float dt) {
  coalesce::soa_vector<Particle> particles(start);
  const std::size_t n = particles.size();
  advance<<<unsigned((n + 255) / 256), 256>>>(particles.view(), dt);
  return particles.to_vector();
}
