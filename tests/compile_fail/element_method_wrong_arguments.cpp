// expect: COALESCE_METHODS: this member function cannot be called with these arguments
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
  void kick(float dv) { vx += dv; }
};
COALESCE_FIELDS(Particle, x, vx);
COALESCE_METHODS(Particle, kick);

void misuse(coalesce::soa_view<Particle, coalesce::host_space> particles) { particles[0].kick(1.0f, 2.0f); }
