// expect: coalesce::copy_if: the output must be a device soa_vector, copy_if\(view, out_vector, pred\), not a view or a span \(nor a const vector\)
#include <coalesce/compact.hpp>
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(const coalesce::soa_vector<Particle>& particles, const coalesce::soa_vector<Particle>& kept) {
  coalesce::copy_if(particles.view(), kept, [] __device__(auto p) { return p.x < 0.0f; });
}
