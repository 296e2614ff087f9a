// expect: coalesce::layout_vector<T, Layout>: Layout must be coalesce::layout::aos, layout::aosoa<Lanes> or layout::split<Hot, Cold>
#include <coalesce/layout_vector.hpp>

struct Particle {
  float x, vx;
};

coalesce::layout_vector<Particle, coalesce::layout::soa, coalesce::host_space> particles;
