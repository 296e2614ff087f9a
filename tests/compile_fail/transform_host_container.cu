// expect: coalesce::transform: a container is in host_space, whose memory the GPU cannot read; copy it into a device container \(assign_async or copy_from_async from a pinned one\) and pass that
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(const coalesce::soa_vector<Particle, coalesce::host_space>& particles,
            coalesce::pitched_matrix<float>& speeds) {
  coalesce::transform(particles, speeds, [] __device__(auto p) { return p.vx; });
}
