// The particle update handed to coalesce::for_each: the third unit of the coalesce_compile_cost
// benchmark, next to the same update hand-written on raw pointers and on a soa_view
// (tests/codegen/particles_restrict.cu, particles_soa.cu). It measures what the algorithm header
// adds to a compile. A functor, not a lambda, so all three units compile with the same flags
// (a __device__ lambda would need --extended-lambda).
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

struct advance_one {
  float dt;
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

void launch_advance(coalesce::soa_view<Particle> particles, float dt) {
  coalesce::for_each(particles, advance_one{dt});
}
