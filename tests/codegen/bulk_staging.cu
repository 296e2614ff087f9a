// Compiled to PTX for sm_90 by the codegen.bulk_staging test: for_each over an array of structs
// stages each block's run of structs through shared memory, and on sm_90 the copy engine moves
// the run both ways (cp.async.bulk, counted in on a shared-memory barrier), not the threads. No
// GPU needed: the instructions are in the PTX.
#include <coalesce/algorithm.hpp>

#include <cstddef>

struct Particle {
  float x, y, z, vx, vy, vz;
};

struct drift {
  float dt;
  __host__ __device__ void operator()(Particle& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

void step(Particle* particles, std::size_t n) { coalesce::for_each(particles, n, drift{0.01f}); }
