// expect: no suitable user-defined conversion from .*coalesce::soa_view<Particle, coalesce::host_space>.* to "coalesce::soa_view<Particle, coalesce::device_space>"
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

__global__ void advance(coalesce::soa_view<Particle> p) { p[threadIdx.x].x += p[threadIdx.x].vx; }

void misuse(coalesce::soa_vector<Particle, coalesce::host_space>& particles) { advance<<<1, 32>>>(particles.view()); }
