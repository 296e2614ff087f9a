// expect: COALESCE_METHODS: this member function is not const, so it may change the element, and this element is read-only
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
  void kick(float dv) { vx += dv; }
};
COALESCE_FIELDS(Particle, x, vx);
COALESCE_METHODS(Particle, kick);

void misuse(coalesce::soa_view<const Particle, coalesce::host_space> particles) { particles[0].kick(1.0f); }
