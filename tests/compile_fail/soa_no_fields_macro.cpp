// expect: no_COALESCE_FIELDS_for<Particle>.* has no member named .+x
#include <coalesce/soa.hpp>

struct Particle {
  float x, y;
};

float misuse(coalesce::soa_vector<Particle, coalesce::host_space>& particles) { return particles[0].x; }
