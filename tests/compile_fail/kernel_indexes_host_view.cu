// expect: calling a __host__ function\(.*soa_view<.*host_space> *::operator *\[\].*\) from a __global__ function.* is not allowed
// errors: 2 (nvcc reports a host function called from device code twice: the call, then the undefined identifier)
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

template <class Particles>
__global__ void advance(Particles p) {
  p[threadIdx.x].x += 1;
}

void misuse(coalesce::soa_vector<Particle, coalesce::host_space>& particles) { advance<<<1, 32>>>(particles.view()); }
