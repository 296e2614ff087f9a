// soa_vector on the device: the same kernel template runs on Particle* and soa_view<Particle>
// with identical results, at ideal sectors per request and at least 0.98 of the same kernel's
// bandwidth on plain pointers (0.95 of the __restrict__ version); one field of Vec3 moves a third
// of the DRAM bytes; AoS <-> SoA conversion keeps up with the best competitor (competitors.hpp);
// Thrust algorithms accept SoA iterators.
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/soa_span.hpp>
#include <coalesce/testing/testing.hpp>
#include <coalesce/thrust.hpp>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/for_each.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "coalesce_device_test.hpp"
#include "competitors.hpp"
#include "particles.hpp"
#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

namespace ct = coalesce::testing;
namespace cc = coalesce_test::competitors;
namespace targets = coalesce_test::targets;
using coalesce::soa_view;
using coalesce_test::random_particles;
using coalesce_test::same;

struct Vec3 {
  float x, y, z;
};

namespace {

using coalesce_test::profiler;

// The user's kernel, written once against an array of structs.
template <class Particles>
__global__ void advance(Particles p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

// The same update hand-written on raw SoA columns: the reference for "no abstraction cost".
__global__ void advance_raw(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                            const float* __restrict__ vx, const float* __restrict__ vy, const float* __restrict__ vz,
                            std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

// The same without __restrict__: the SASS coalesce's soa_view kernel has too (plain LDG loads);
// __restrict__ lets nvcc read vx, vy, vz through the non-coherent path (LDG.E.CONSTANT), which
// nothing about a soa_view can promise for a field that the kernel might also write.
__global__ void advance_plain(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz,
                              std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

template <class Points>
__global__ void sum_first_field(Points p, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 2.0f * coalesce::get<0>(p[i]);
}

__global__ void scale_column(cuda::std::span<float> xs, float factor) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < xs.size()) xs[i] *= factor;
}

struct speed_squared {
  __host__ __device__ float operator()(const Particle& p) const { return p.vx * p.vx + p.vy * p.vy + p.vz * p.vz; }
};
struct moving_right {
  __host__ __device__ bool operator()(const Particle& p) const { return p.vx > 0.0f; }
};
struct by_x {
  __host__ __device__ bool operator()(const Particle& a, const Particle& b) const { return a.x < b.x; }
};
struct drift {
  float dt;
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const { p.x += p.vx * dt; }
};

unsigned blocks_for(std::size_t n) { return unsigned((n + 255) / 256); }

std::size_t particle_count() { return ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 25; }

}  // namespace

TEST_CASE("one kernel template on Particle* and on soa_view<Particle> gives identical results") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count();
  const auto particles = random_particles(n);
  ct::device_buffer<Particle> aos(particles);
  coalesce::soa_vector<Particle> soa(particles);
  const float dt = 0.01f;
  advance<<<blocks_for(n), 256>>>(aos.data(), n, dt);
  ct::check_launch();
  advance<<<blocks_for(n), 256>>>(soa.view(), n, dt);
  ct::check_launch();
  const auto from_aos = aos.download();
  const auto from_soa = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    if (!same(from_aos[i], from_soa[i])) FAIL("AoS and SoA results differ at " << i);
    // Against the host, up to the device's fused multiply-add rounding.
    const Particle& p = particles[i];
    if (std::fabs(from_soa[i].x - (p.x + p.vx * dt)) > 1e-6f) FAIL("wrong x at " << i);
  }
}

TEST_CASE("the SoA particle update reads and writes 4 sectors per request at the hand-written kernel's bandwidth") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count();
  coalesce::soa_vector<Particle> soa(random_particles(n));
  ct::device_buffer<Particle> aos(random_particles(n));
  const auto v = soa.view();
  const float dt = 0.01f;
  auto library = [&](cudaStream_t s) { advance<<<blocks_for(n), 256, 0, s>>>(v, n, dt); };
  auto raw = [&](cudaStream_t s) {
    advance_raw<<<blocks_for(n), 256, 0, s>>>(v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(), v.column<4>(),
                                              v.column<5>(), n, dt);
  };
  auto plain = [&](cudaStream_t s) {
    advance_plain<<<blocks_for(n), 256, 0, s>>>(v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(),
                                                v.column<4>(), v.column<5>(), n, dt);
  };
  auto aos_launch = [&](cudaStream_t s) { advance<<<blocks_for(n), 256, 0, s>>>(aos.data(), n, dt); };
  library(0);
  raw(0);
  plain(0);
  aos_launch(0);
  ct::check_sync();
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { library(0); });
  const auto m_aos = profiler().measure([&] { aos_launch(0); });
  std::printf("\nparticle update: load/store sectors per request, soa_view %.2f / %.2f, Particle* %.2f / %.2f\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), m_aos.load_sectors_per_request(),
              m_aos.store_sectors_per_request());
  CHECK(m.load_sectors_per_request() == Approx(4.0));
  CHECK(m.store_sectors_per_request() == Approx(4.0));
  CHECK(m_aos.load_sectors_per_request() > 3 * m.load_sectors_per_request());

  ct::bandwidth_meter meter;
  const double bytes = double(n) * (6 + 3) * sizeof(float);  // six fields read, three written
  // Interleave the two measurements and take the best of three medians each, so a clock or
  // neighbour change during one measurement does not decide the comparison.
  double best_library = 0, best_raw = 0, best_plain = 0, aos_ratio = 0;
  for (int round = 0; round < 3; ++round) {
    best_library = std::max(best_library, meter.measure(library, bytes).ratio_to_memcpy);
    best_plain = std::max(best_plain, meter.measure(plain, bytes).ratio_to_memcpy);
    best_raw = std::max(best_raw, meter.measure(raw, bytes).ratio_to_memcpy);
  }
  aos_ratio = meter.measure(aos_launch, bytes).ratio_to_memcpy;
  std::printf("particle update, ratio to cudaMemcpy (%.0f GB/s): soa_view %.3f, hand-written SoA %.3f "
              "(with __restrict__ %.3f), Particle* %.3f\n",
              meter.memcpy_gigabytes_per_s(), best_library, best_plain, best_raw, aos_ratio);
  // No abstraction cost against the same kernel on raw pointers; within 5% of the __restrict__
  // version, whose read-only loads soa_view cannot promise (measured 2.6% apart on an H200).
  CHECK(best_library >= 0.98 * best_plain);
  CHECK(best_library >= 0.95 * best_raw);
}

TEST_CASE("reading one field of Vec3 through a soa_view moves a third of the AoS kernel's DRAM bytes") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count();
  std::vector<Vec3> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = {float(i), 1.0f, 2.0f};
  ct::device_buffer<Vec3> aos(points);
  coalesce::soa_vector<Vec3> soa(points);
  ct::device_buffer<float> out_aos(n), out_soa(n);
  auto run_aos = [&] { sum_first_field<<<blocks_for(n), 256>>>(aos.data(), out_aos.data(), n); };
  auto run_soa = [&] { sum_first_field<<<blocks_for(n), 256>>>(soa.const_view(), out_soa.data(), n); };
  run_aos();
  run_soa();
  ct::check_sync();
  REQUIRE(out_aos.download() == out_soa.download());
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto a = profiler().measure(run_aos);
  const auto s = profiler().measure(run_soa);
  const double ratio = a.dram_bytes_read() / s.dram_bytes_read();
  std::printf("\nVec3.x read: DRAM bytes read AoS %.0f, SoA %.0f: %.2fx fewer\n", a.dram_bytes_read(),
              s.dram_bytes_read(), ratio);
  CHECK(ratio >= 2.9);
}

TEST_CASE("AoS to SoA conversion on the device is exact and keeps up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count() + 77;  // not a whole number of chunks
  const auto particles = random_particles(n);
  thrust::device_vector<Particle> aos(particles.begin(), particles.end());
  auto soa = coalesce::to_soa(aos);
  const auto back = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    if (!same(back[i], particles[i])) FAIL("conversion differs at " << i);
  thrust::device_vector<Particle> round_trip = coalesce::to_aos(soa);
  std::vector<Particle> host_round_trip(n);
  thrust::copy(round_trip.begin(), round_trip.end(), host_round_trip.begin());
  for (std::size_t i = 0; i < n; ++i)
    if (!same(host_round_trip[i], particles[i])) FAIL("round trip differs at " << i);

  const Particle* aos_ptr = thrust::raw_pointer_cast(aos.data());
  Particle* trip_ptr = thrust::raw_pointer_cast(round_trip.data());
  const auto v = soa.view();
  const auto cv = soa.const_view();
  auto split = [&](cudaStream_t s) { coalesce::copy_aos_to_soa(aos_ptr, v, s); };
  auto join = [&](cudaStream_t s) { coalesce::copy_soa_to_aos(cv, trip_ptr, s); };
  const auto split_competitors = cc::aos_to_soa(
      aos_ptr, {v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(), v.column<4>(), v.column<5>()}, n);
  const auto join_competitors = cc::soa_to_aos(
      {cv.column<0>(), cv.column<1>(), cv.column<2>(), cv.column<3>(), cv.column<4>(), cv.column<5>(), n}, trip_ptr);
  split(0);
  join(0);
  coalesce_test::launch_each(split_competitors);
  coalesce_test::launch_each(join_competitors);
  COALESCE_REQUIRE_TIMING();
  ct::bandwidth_meter meter;
  const double bytes = 2.0 * double(n) * sizeof(Particle);
  const auto a = coalesce_test::compare_with_competitors(meter, "AoS -> SoA: coalesce::copy_aos_to_soa", split,
                                                         split_competitors, bytes);
  const auto b = coalesce_test::compare_with_competitors(meter, "SoA -> AoS: coalesce::copy_soa_to_aos", join,
                                                         join_competitors, bytes);
  CHECK(a.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(a.library_of_peak >= targets::conversion_of_peak);
  CHECK(b.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(b.library_of_peak >= targets::conversion_of_peak);
}

TEST_CASE("AoS <-> SoA conversion is exact from and to an array that is not 16-byte aligned") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // One 24-byte Particle into a cudaMalloc'd buffer: 8-byte aligned, so the conversions take their
  // unaligned kernels (4-byte words), with a count that leaves a partial last chunk.
  const std::size_t n = 1000 * 16 + 7;
  const auto particles = random_particles(n);
  ct::device_buffer<Particle> aos(n + 1);
  COALESCE_CUDA_CHECK(cudaMemcpy(aos.data() + 1, particles.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
  coalesce::soa_vector<Particle> soa(n);
  coalesce::copy_aos_to_soa(static_cast<const Particle*>(aos.data() + 1), soa.view());
  const auto columns = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    if (!same(columns[i], particles[i])) FAIL("AoS -> SoA differs at " << i);
  aos.poison();
  coalesce::copy_soa_to_aos(soa.const_view(), aos.data() + 1);
  const auto back = aos.download();
  for (std::size_t i = 0; i < n; ++i)
    if (!same(back[i + 1], particles[i])) FAIL("SoA -> AoS differs at " << i);
}

TEST_CASE("Thrust sorts, transforms, reduces, filters and visits SoA elements") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100000;
  const auto particles = random_particles(n);
  coalesce::soa_vector<Particle> soa(particles);
  const auto v = soa.view();

  // sort_by_key: order particles by descending key, every column moves together
  std::vector<int> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = int((i * 7919) % n);
  thrust::device_vector<int> d_keys(keys.begin(), keys.end());
  thrust::sort_by_key(d_keys.begin(), d_keys.end(), coalesce::device_begin(v));
  const auto sorted = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i) REQUIRE(same(sorted[(i * 7919) % n], particles[i]));

  // transform + reduce over T
  thrust::device_vector<float> speeds(n);
  thrust::transform(coalesce::device_begin(v), coalesce::device_end(v), speeds.begin(), speed_squared{});
  const double total = thrust::reduce(speeds.begin(), speeds.end(), 0.0);
  double expected_total = 0;
  for (const auto& p : particles) expected_total += speed_squared{}(p);
  REQUIRE(total == Approx(expected_total).epsilon(1e-4));

  // copy_if into another soa_vector
  coalesce::soa_vector<Particle> right(n);
  const auto end = thrust::copy_if(coalesce::device_begin(v), coalesce::device_end(v),
                                   coalesce::device_begin(right.view()), moving_right{});
  const auto kept = std::size_t(end - coalesce::device_begin(right.view()));
  REQUIRE(kept == std::size_t(std::count_if(particles.begin(), particles.end(), moving_right{})));
  right.resize(kept);
  for (const auto& p : right.to_vector()) REQUIRE(p.vx > 0.0f);

  // for_each with a functor that updates the element in place through named fields
  thrust::for_each(coalesce::device_begin(v), coalesce::device_end(v), drift{0.5f});
  const auto drifted = soa.to_vector();
  for (std::size_t i = 0; i < n; i += 97) REQUIRE(drifted[i].x == Approx(sorted[i].x + sorted[i].vx * 0.5f));

  // a column is a cuda::std::span
  scale_column<<<blocks_for(n), 256>>>(coalesce::column_span<&Particle::vz>(v), 2.0f);
  ct::check_launch();
  const auto scaled = soa.to_vector();
  for (std::size_t i = 0; i < n; i += 97) REQUIRE(scaled[i].vz == 2.0f * drifted[i].vz);

  // sort with a comparator written for T: whole elements move, every column together (stable, so
  // the order is the host's exactly)
  thrust::stable_sort(coalesce::device_begin(v), coalesce::device_end(v), by_x{});
  auto expected_order = scaled;
  std::stable_sort(expected_order.begin(), expected_order.end(), by_x{});
  const auto by_position = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    if (!same(by_position[i], expected_order[i])) FAIL("thrust::stable_sort: element " << i << " differs");
}

TEST_CASE("device soa_vector growth keeps contents") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto particles = random_particles(1000);
  coalesce::soa_vector<Particle> v(particles);
  v.reserve(5000);
  v.resize(1500);
  const auto grown = v.to_vector();
  for (std::size_t i = 0; i < 1000; ++i) REQUIRE(same(grown[i], particles[i]));
  for (std::size_t i = 1000; i < 1500; ++i) REQUIRE(same(grown[i], Particle{}));
  coalesce::soa_vector<Particle, coalesce::host_space> on_host(v);
  coalesce::soa_vector<Particle> again(on_host);
  REQUIRE(same(again.to_vector()[999], particles[999]));
}

// [no-sanitizer]: memcheck reports the deliberate out-of-memory as an API error; it launches no
// kernel, and scripts/device-check.sh leaves it out of the sanitizer runs.
TEST_CASE("a failed device soa_vector allocation throws and changes nothing", "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  if (ct::under_sanitizer()) COALESCE_SKIP("memcheck reports the deliberate out-of-memory as an API error");
  const auto particles = random_particles(1500);
  coalesce::soa_vector<Particle> v(particles);
  std::string message;
  try {
    v.reserve(std::size_t(1) << 40);  // 24 TiB
  } catch (const coalesce::cuda_error& e) {
    message = e.what();
  }
  REQUIRE(message.find("out of memory") != std::string::npos);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  REQUIRE(v.size() == 1500);
  REQUIRE(same(v.to_vector()[999], particles[999]));
}

namespace {
__global__ void set_x_to_index(soa_view<Particle> p) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < p.size();
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i].x = float(i % 65536);
}
}  // namespace

TEST_CASE("a copy out of a device vector follows the work queued on that vector's stream") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const std::size_t n = particle_count();
    coalesce::soa_vector<Particle> v(n, coalesce::pool_resource(stream));
    // A single block makes the kernel slow enough that an unordered copy would see zeros.
    set_x_to_index<<<1, 256, 0, stream>>>(v.view());
    ct::check_launch();
    const coalesce::soa_vector<Particle, coalesce::host_space> on_host(v);
    const auto xs = on_host.view().column<&Particle::x>();
    for (std::size_t i = 0; i < n; ++i)
      if (xs[i] != float(i % 65536)) FAIL("element " << i << " was copied before the kernel wrote it");
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}
