// expect: Cold, the other fields' layout, must be coalesce::layout::aos or layout::aosoa<Lanes>
#include <coalesce/layout_vector.hpp>

struct Particle {
  float x, vx;
};

// The hot fields are the columns already; the cold ones go into records or tiles.
using split = coalesce::layout::split<coalesce::layout::fields<&Particle::x>, coalesce::layout::soa>;
coalesce::vector<Particle, split, coalesce::host_space> particles(4);
