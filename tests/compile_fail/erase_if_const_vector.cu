// expect: coalesce::erase_if: takes the device soa_vector itself, erase_if\(vec, pred\), not a view of it \(nor a const vector\)
#include <coalesce/compact.hpp>
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(const coalesce::soa_vector<Particle>& particles) {
  coalesce::erase_if(particles, [] __device__(auto p) { return p.x < 0.0f; });
}
