// coalesce::for_each on a soa_view: per-element code, vectorized columns, only changed columns
// stored. Correct against a host reference (with a tail that is not a whole vector), ideal
// sectors per request for 16-byte accesses, and a conservative bandwidth floor; the real ratios
// are printed.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "particles.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::random_particles;

struct Mixed {
  float a;
  double b;
  std::int32_t c;
  std::int16_t d;
  float e;
  double f;
  std::int32_t g;
  std::int16_t h;
};

namespace {

using coalesce_test::profiler;

struct drift {
  float dt;
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

struct touch_three {
  __device__ void operator()(coalesce::soa_reference_t<Mixed> m) const {
    coalesce::get<0>(m) += coalesce::get<4>(m);
    coalesce::get<1>(m) *= 2.0;
    coalesce::get<6>(m) += coalesce::get<3>(m);
  }
};

// The same update as a user writes it, one element per thread.
__global__ void drift_one_per_thread(coalesce::soa_view<Particle> p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.size()) drift{dt}(p[i]);
}


std::size_t element_count() { return ct::under_sanitizer() ? (std::size_t(1) << 16) + 3 : (std::size_t(1) << 25) + 3; }

}  // namespace

TEST_CASE("for_each on a soa_view updates every element in place, the tail included") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = element_count();
  const auto particles = random_particles(n);
  coalesce::soa_vector<Particle> v(particles);
  coalesce::soa_vector<Particle> reference(particles);
  coalesce::for_each(v.view(), drift{0.01f});
  drift_one_per_thread<<<unsigned((n + 255) / 256), 256>>>(reference.view(), 0.01f);
  ct::check_launch();
  const auto got = v.to_vector(), expected = reference.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    if (got[i].x != expected[i].x || got[i].y != expected[i].y || got[i].z != expected[i].z || got[i].vx != particles[i].vx)
      FAIL("element " << i << " differs");

  std::vector<Mixed> mixed(1003);
  for (std::size_t i = 0; i < mixed.size(); ++i)
    mixed[i] = {float(i), double(i) / 3, std::int32_t(i), std::int16_t(i % 100), 0.5f, 1.0, 7, 9};
  coalesce::soa_vector<Mixed> m(mixed);
  coalesce::for_each(m.view(), touch_three{});
  const auto after = m.to_vector();
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    REQUIRE(after[i].a == float(i) + 0.5f);
    REQUIRE(after[i].b == 2.0 * (double(i) / 3));
    REQUIRE(after[i].g == 7 + std::int32_t(i % 100));
    REQUIRE(after[i].c == std::int32_t(i));
    REQUIRE(after[i].h == 9);
  }
}

TEST_CASE("for_each moves 16-byte vectors, stores only changed columns, and reaches 85 percent of cudaMemcpy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const std::size_t n = element_count() - 3;
  coalesce::soa_vector<Particle> v(random_particles(n));
  const auto view = v.view();
  auto library = [&](cudaStream_t s) { coalesce::for_each(view, drift{1e-6f}, s); };
  auto per_thread = [&](cudaStream_t s) { drift_one_per_thread<<<unsigned((n + 255) / 256), 256, 0, s>>>(view, 1e-6f); };
  const auto m = profiler().measure([&] { library(0); });
  std::printf("\nfor_each particle update: load / store sectors per request %.2f / %.2f, store sectors %.0f (3 of 6 "
              "columns: %.0f)\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), m.global_store_sectors(),
              3.0 * n * sizeof(float) / 32);
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.global_store_sectors() == Approx(3.0 * n * sizeof(float) / 32).epsilon(0.001));

  const ct::bandwidth_meter meter;
  const double bytes = double(n) * 9 * sizeof(float);
  double best_library = 0, best_per_thread = 0;
  for (int round = 0; round < 3; ++round) {
    best_library = std::max(best_library, meter.measure(library, bytes).ratio_to_memcpy);
    best_per_thread = std::max(best_per_thread, meter.measure(per_thread, bytes).ratio_to_memcpy);
  }
  std::printf("particle update in place, ratio to cudaMemcpy (%.0f GB/s): coalesce::for_each %.3f, one element per "
              "thread %.3f\n",
              meter.memcpy_gigabytes_per_s(), best_library, best_per_thread);
  CHECK(best_library >= 0.85);
  CHECK(best_library >= best_per_thread);
}
