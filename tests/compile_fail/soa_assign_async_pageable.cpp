// expect: coalesce::soa_vector::assign_async: the host_space vector is pageable, which CUDA copies synchronously through a staging buffer and a CUDA graph cannot capture; allocate it with coalesce::pinned_resource
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(coalesce::soa_vector<Particle>& on_device,
            const coalesce::soa_vector<Particle, coalesce::host_space>& pageable) {
  on_device.assign_async(pageable);
}
