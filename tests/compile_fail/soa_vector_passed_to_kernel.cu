// expect: coalesce::soa_vector<T, device_space> has no operator\[\]: pass vec.view\(\) to the kernel and index the view there
#include <coalesce/soa.hpp>

struct Particle {
  float x, y;
};
COALESCE_FIELDS(Particle, x, y);

template <class Particles>
__global__ void advance(Particles p) {
  p[threadIdx.x].x += p[threadIdx.x].y;
}

void misuse(coalesce::soa_vector<Particle>& particles) { advance<<<1, 32>>>(particles); }
