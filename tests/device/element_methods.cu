// COALESCE_METHODS on the device: a struct's member functions called on for_each's element
// (p.kick(dt)), in a transform (p.energy()) and on view[i] in a kernel of the user's, with the
// results equal to the same member functions run on the host's array of structs, bit for bit, and
// the columns a call does not change left as they were.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "coalesce_device_test.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace ct = coalesce::testing;

namespace on_device {

struct Walker {
  float x, y, z, vx, vy, vz;
  std::uint32_t id;
  __host__ __device__ float energy() const { return 0.5f * (vx * vx + vy * vy + vz * vz); }
  __host__ __device__ void kick(float ax, float ay, float az, float dt) {
    vx += ax * dt;
    vy += ay * dt;
    vz += az * dt;
  }
  __host__ __device__ void drift(float dt) {
    x += vx * dt;
    y += vy * dt;
    z += vz * dt;
  }
};
COALESCE_FIELDS(Walker, x, y, z, vx, vy, vz, id);
COALESCE_METHODS(Walker, energy, kick, drift);

}  // namespace on_device

namespace {

using on_device::Walker;

std::vector<Walker> some_particles(std::size_t n) {
  std::vector<Walker> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Dyadic velocities of few bits: every product and sum of energy() is exact, so the host and the
    // device agree bit for bit whether or not either contracts to fused multiply-adds.
    const float f = float(i % 1013);
    v[i] = Walker{f, 0.5f * f, -f, 1.0f + f / 1024, -2.0f, f / 1024, std::uint32_t(i)};
  }
  return v;
}

__global__ void drift_kernel(coalesce::soa_view<Walker> p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) p[i].drift(dt);
}

void require_same(const std::vector<Walker>& got, const std::vector<Walker>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(Walker)) != 0) FAIL("particle " << i << " differs");
}

}  // namespace

TEST_CASE("member functions on the device: for_each's element, a transform's, view[i] in a kernel") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;  // not a multiple of a block or of a 16-byte chunk
  auto host = some_particles(n);
  coalesce::soa_vector<Walker> particles(host);
  const float dt = 0.125f;

  coalesce::for_each(particles.view(), [=] __device__(auto p) { p.kick(1.0f, 2.0f, -0.5f, dt); });
  for (auto& p : host) p.kick(1.0f, 2.0f, -0.5f, dt);
  require_same(particles.to_vector(), host);

  drift_kernel<<<unsigned((n + 255) / 256), 256>>>(particles.view(), dt);
  ct::check_launch("drift_kernel");
  for (auto& p : host) p.drift(dt);
  require_same(particles.to_vector(), host);

  ct::device_buffer<float> energy(n);
  coalesce::transform(particles.const_view(), cuda::std::span<float>(energy.data(), n),
                      [] __device__(auto p) { return p.energy(); });
  const auto got = energy.download();
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != host[i].energy()) FAIL("energy of particle " << i << ": " << got[i] << ", host " << host[i].energy());
}
