// First steps: particles stored as columns, one update written as a device lambda, one transform
// into a plain array, and the results checked on the host. Exits 77 (skipped) with no GPU.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/device.hpp>  // only for the "no GPU" check
#include <thrust/device_vector.h>
#include <cstdio>
#include <vector>

struct Particle { float x, y, z, vx, vy, vz; };
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);  // name the fields once: p.x, p.vx, ...

int main() {
  if (auto why = coalesce::testing::gpu_unavailable_reason()) {
    std::printf("SKIPPED: %s\n", why->c_str());
    return 77;
  }
  std::vector<Particle> start(1 << 20);
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = {float(i % 1000), 0, 0, 1, 2, 3};
  coalesce::soa_vector<Particle> particles(start);  // six columns on the device

  const float dt = 0.5f;
  coalesce::for_each(particles.view(), [=] __device__(auto p) { p.x += p.vx * dt; p.z += p.vz * dt; });

  thrust::device_vector<float> speed2(particles.size());  // |v|^2 of every particle
  const cuda::std::span<float> out(thrust::raw_pointer_cast(speed2.data()), speed2.size());
  coalesce::transform(particles.const_view(), out, [] __device__(auto p) { return p.vx * p.vx + p.vy * p.vy + p.vz * p.vz; });

  const std::vector<Particle> moved = particles.to_vector();
  const std::vector<float> s(speed2.begin(), speed2.end());
  for (std::size_t i = 0; i < moved.size(); ++i) {
    if (moved[i].x != start[i].x + 0.5f || moved[i].y != 0.0f || moved[i].z != 1.5f || s[i] != 14.0f) {
      std::printf("particle %zu is wrong\n", i);
      return 1;
    }
  }
  std::printf("%zu particles moved, each with |v|^2 = %.0f\n", moved.size(), s[0]);
  return 0;
}
