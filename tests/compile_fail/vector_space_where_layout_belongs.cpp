// expect: coalesce::vector<T, Layout, Space>: the second argument is the layout
#include <coalesce/layout_vector.hpp>

struct Particle {
  float x, vx;
};

coalesce::vector<Particle, coalesce::host_space> particles;
