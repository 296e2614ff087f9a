// expect: coalesce::for_each: f takes the element by value \(a copy of T\) and returns nothing, so what it changes is lost
#include <coalesce/algorithm.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle>& particles, float dt) {
  coalesce::for_each(particles.view(), [=] __device__(Particle p) { p.x += p.vx * dt; });
}
