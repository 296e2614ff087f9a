// expect: coalesce::for_each: the view is of host memory \(a soa_vector or pitched_matrix in host_space\); the GPU cannot read it
#include <coalesce/algorithm.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle, coalesce::host_space>& particles) {
  coalesce::for_each(particles.view(), [] __device__(auto p) { p.x += p.vx; });
}
