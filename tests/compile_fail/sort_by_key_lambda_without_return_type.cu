// expect: coalesce::sort_by_key: the host cannot see what a __device__ lambda returns
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include <cstdint>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle>& particles) {
  coalesce::sort_by_key(particles, [] __device__(auto p) { return std::uint32_t(p.x * 64.0f); });
}
