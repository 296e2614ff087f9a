// expect: a hot field is a member of another type than the vector's element type T
#include <coalesce/layout_vector.hpp>

struct Particle {
  float x, vx;
};
struct Probe {
  float x, y;
};

// Probe::x, not Particle::x: the hot field must be one of the element's own.
using hot_x = coalesce::layout::split<coalesce::layout::fields<&Probe::x>>;
coalesce::vector<Particle, hot_x, coalesce::host_space> particles(4);
