// coalesce's memory resources on the device: pool_resource's pool keeps what a container frees
// (and trim_pool gives it back), leaves the process's default pool alone, and records its device;
// pinned and managed resources hold containers that work. Measured: what
// a temporary costs (a construct-and-destroy cycle of a 768 MiB container against one pass over
// it) and to_soa with its allocation as a share of a same-size cudaMemcpy, against the device's
// default pool and cudaMalloc in the same process.
#include <coalesce/algorithm.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "particles.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::random_particles;

namespace {

struct drift {
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    p.x += p.vx * 0.5f;
    p.y += p.vy * 0.5f;
    p.z += p.vz * 0.5f;
  }
};

std::uint64_t default_pool_threshold(int device) {
  cudaMemPool_t pool = nullptr;
  COALESCE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = 0;
  COALESCE_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  return threshold;
}

// Host microseconds that a construct-and-destroy cycle of a `count`-particle container on
// `Resource` adds to a step that ends with a synchronization (as a simulation step that reads a
// result back does): the loop of cycle + synchronize, less the same loop synchronizing alone, each
// the best of three runs of `cycles`, after one cycle of warm-up. The default pool's release of
// its memory happens in the synchronization, so it is counted; the synchronization itself is not.
template <class Resource>
double cycle_microseconds(std::size_t count, int cycles) {
  const auto one = [&] {
    coalesce::soa_vector<Particle, coalesce::device_space, Resource> temporary;
    temporary.resize_for_overwrite(count);
  };
  const auto best_loop = [&](bool with_cycle) {
    double best = 1e300;
    for (int run = 0; run < 3; ++run) {
      const auto start = std::chrono::steady_clock::now();
      for (int k = 0; k < cycles; ++k) {
        if (with_cycle) one();
        COALESCE_CUDA_CHECK(cudaStreamSynchronize(cudaStream_t{}));
      }
      const auto stop = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::micro>(stop - start).count() / cycles);
    }
    return best;
  };
  one();
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  const double with_cycle = best_loop(true);
  return std::max(0.0, with_cycle - best_loop(false));
}

}  // namespace

TEST_CASE("containers on pool_resource allocate from coalesce's pool, which keeps what they free until trim_pool") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  int device = 0;
  COALESCE_CUDA_CHECK(cudaGetDevice(&device));
  const std::uint64_t threshold_before = default_pool_threshold(device);
  const std::size_t n = ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 25;  // 768 MiB of Particles
  {
    coalesce::soa_vector<Particle, coalesce::device_space, coalesce::pool_resource> temporary(random_particles(1000));
    CHECK(temporary.resource().device() == device);
    temporary.resize_for_overwrite(n);
  }
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t kept = coalesce::pool_reserved_bytes(device);
  std::printf("\ncoalesce's pool after a %zu-byte container was freed: %zu bytes reserved\n", n * sizeof(Particle),
              kept);
  CHECK(kept >= n * sizeof(Particle));
  coalesce::trim_pool(device);
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(coalesce::pool_reserved_bytes(device) == 0);
  cudaMemPool_t default_pool = nullptr;
  COALESCE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, device));
  CHECK(default_pool != coalesce::detail::device_pool(device));
  CHECK(default_pool_threshold(device) == threshold_before);
}

TEST_CASE("pinned host and managed device containers hold and move their elements") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto particles = random_particles(5000);
  coalesce::soa_vector<Particle, coalesce::host_space, coalesce::pinned_resource> pinned(particles);
  cudaPointerAttributes where{};
  COALESCE_CUDA_CHECK(cudaPointerGetAttributes(&where, pinned.view().column<&Particle::x>()));
  CHECK(where.type == cudaMemoryTypeHost);
  coalesce::soa_vector<Particle, coalesce::device_space, coalesce::managed_resource> managed(pinned);
  COALESCE_CUDA_CHECK(cudaPointerGetAttributes(&where, managed.view().column<&Particle::x>()));
  CHECK(where.type == cudaMemoryTypeManaged);
  coalesce::for_each(managed.view(), drift{});
  pinned.assign(managed);
  const auto got = pinned.to_vector();
  for (std::size_t i = 0; i < particles.size(); ++i) {
    auto expected = particles[i];
    coalesce_test::competitors::drift_struct{0.5f}(expected);
    if (!coalesce_test::same(got[i], expected)) FAIL("particle " << i << " differs");
  }
}

TEST_CASE("a temporary from coalesce's pool costs microseconds, and to_soa with its allocation runs near copy speed") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 25;  // 768 MiB of Particles
  const auto particles = random_particles(n);
  ct::device_buffer<Particle> aos(particles);
  coalesce::soa_vector<Particle> columns(particles);
  const Particle* structs = aos.data();
  // Launch everything once, for the sanitizers.
  coalesce::for_each(columns.view(), drift{});
  {
    auto converted = coalesce::to_soa(structs, n, coalesce::pool_resource());
  }
  {
    auto converted = coalesce::to_soa(structs, n, coalesce::device_resource());
  }
  ct::check_sync("to_soa");
  COALESCE_REQUIRE_TIMING();

  const int cycles = 50;
  const double pooled = cycle_microseconds<coalesce::pool_resource>(n, cycles);
  const double default_pool = cycle_microseconds<coalesce::device_resource>(n, cycles);
  const double malloc_free = cycle_microseconds<coalesce::device_synchronous_resource>(n, cycles);
  ct::bandwidth_meter meter;
  const auto pass =
      meter.measure([&](cudaStream_t s) { coalesce::for_each(columns.view(), drift{}, s); }, 36.0 * double(n));
  const double pass_microseconds = pass.median_ms * 1000.0;
  std::printf(
      "\nconstruct + destroy, beyond a synchronize, %zu-byte soa_vector<Particle>, per cycle: coalesce's pool %.1f us, "
      "the device's default pool %.1f us, cudaMalloc / cudaFree %.1f us; one for_each pass over it %.1f us "
      "(pool cycle = %.2f%% of a pass)\n",
      n * sizeof(Particle), pooled, default_pool, malloc_free, pass_microseconds, 100.0 * pooled / pass_microseconds);
  CHECK(pooled < default_pool);
  CHECK(pooled < malloc_free);
  CHECK(pooled <= 0.01 * pass_microseconds);

  const auto with_pool =
      meter.measure([&](cudaStream_t) { auto converted = coalesce::to_soa(structs, n, coalesce::pool_resource()); },
                    48.0 * double(n));
  const auto with_default_pool =
      meter.measure([&](cudaStream_t) { auto converted = coalesce::to_soa(structs, n, coalesce::device_resource()); },
                    48.0 * double(n));
  const auto into_existing =
      meter.measure([&](cudaStream_t s) { coalesce::copy_aos_to_soa(structs, columns.view(), s); }, 48.0 * double(n));
  std::printf(
      "to_soa of %zu particles, allocation included, as a share of cudaMemcpy (%.0f GB/s): coalesce's pool %.3f, "
      "the device's default pool %.3f; into an existing container %.3f\n",
      n, meter.memcpy_gigabytes_per_s(), with_pool.ratio_to_memcpy, with_default_pool.ratio_to_memcpy,
      into_existing.ratio_to_memcpy);
  CHECK(with_pool.ratio_to_memcpy >= 0.85);
}
