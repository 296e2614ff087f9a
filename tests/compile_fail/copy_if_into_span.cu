// expect: coalesce::copy_if: the output must be a device soa_vector, copy_if\(view, out_vector, pred\), not a view or a span
#include <coalesce/compact.hpp>
#include <coalesce/soa.hpp>

#include <cuda/std/span>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(const coalesce::soa_vector<Particle>& particles, cuda::std::span<Particle> kept) {
  coalesce::copy_if(particles.view(), kept, [] __device__(auto p) { return p.x < 0.0f; });
}
