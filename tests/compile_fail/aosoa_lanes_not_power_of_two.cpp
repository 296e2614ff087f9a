// expect: coalesce::layout::aosoa<Lanes>: Lanes must be a power of two
#include <coalesce/layout_vector.hpp>

struct Particle {
  float x, vx;
};

coalesce::vector<Particle, coalesce::layout::aosoa<24>, coalesce::host_space> particles;
