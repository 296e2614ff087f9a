// expect: coalesce::for_each: f cannot take the element it is handed. A soa_view's element is a proxy whose fields are references into the columns: declare f's parameter auto or auto&&
#include <coalesce/algorithm.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle>& particles, float dt) {
  // clang-format off: it reads `__device__(Particle& p)` as a call, and `Particle & p` as a product
  coalesce::for_each(particles.view(), [=] __device__(Particle& p) { p.x += p.vx * dt; });
  // clang-format on
}
