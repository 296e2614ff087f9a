// expect: no_COALESCE_FIELDS_for<Particle>" has no member "x"
#include <coalesce/soa.hpp>

struct Particle {
  float x, y;
};

__global__ void misuse(coalesce::soa_view<Particle> particles) { particles[threadIdx.x].x += 1; }
