// expect: coalesce::erase_if: the vector is in host_space; remove a host vector.s elements with std::remove_if
#include <coalesce/compact.hpp>
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle, coalesce::host_space>& particles) {
  coalesce::erase_if(particles, [] __device__(auto p) { return p.x < 0.0f; });
}
