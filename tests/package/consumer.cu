// The minimal consumer, as a user writes it: the particles of docs/particles.md ("Swap an array
// of structs for columns, keep the kernel"), moved by coalesce::for_each with a __device__ lambda
// and checked on the host. No nvcc flags of its own: linking coalesce::coalesce brings
// --extended-lambda. run_consumer.cmake copies it into each consumer project as main.cu.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>
#include <cstdio>
#include <vector>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

int main() {
  // Building is what the package tests are for; running needs a GPU. With none usable (no device,
  // no driver, or no context) exit 77, which the package tests report as skipped.
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status == cudaSuccess && devices == 0) status = cudaErrorNoDevice;
  if (status == cudaSuccess) status = cudaFree(nullptr);  // creates the context
  if (status != cudaSuccess) {
    // "Driver version insufficient" is also what the runtime says when there is no driver at all.
    int driver = 0;
    if (status == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0) {
      std::printf("no GPU: built, not run (no NVIDIA driver is installed)\n");
    } else {
      std::printf("no GPU: built, not run (%s: %s)\n", cudaGetErrorName(status), cudaGetErrorString(status));
    }
    return 77;
  }

  // Not a multiple of a 16-byte vector or of a block: the tail must be updated too. Every value is
  // exact in float, so the device's result can be compared with ==.
  const std::size_t n = (std::size_t(1) << 20) + 3;
  std::vector<Particle> particles(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = float(i % 4096);
    particles[i] = {f, -f, 2 * f, float(i % 7), 1, 2};
  }

  const float dt = 0.5f;
  coalesce::soa_vector<Particle> v(particles);
  coalesce::for_each(v.view(), [=] __device__(auto p) { p.x += p.vx * dt; });
  const std::vector<Particle> moved = v.to_vector();

  for (std::size_t i = 0; i < n; ++i) {
    const Particle& a = particles[i];
    const Particle& b = moved[i];
    if (b.x != a.x + a.vx * dt || b.y != a.y || b.z != a.z || b.vx != a.vx || b.vy != a.vy || b.vz != a.vz) {
      std::printf("particle %zu: x = %g, expected %g\n", i, double(b.x), double(a.x + a.vx * dt));
      return 1;
    }
  }
  std::printf("coalesce %d.%d.%d: for_each moved %zu particles, checked on the host\n", COALESCE_VERSION_MAJOR,
              COALESCE_VERSION_MINOR, COALESCE_VERSION_PATCH, n);
  return 0;
}
