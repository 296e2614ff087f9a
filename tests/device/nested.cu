// Nested fields on the device: Body { float3 pos, vel; float mass; } is seven float columns, so
// the kernel written for Body* (b[i].pos.x += b[i].vel.x * dt) runs unchanged on a
// soa_view<Body> with exact results, reading pos.x alone is 4 sectors per request (the Vec3.x
// problem gone), and for_each keeps its 16-byte accesses and stores only the columns it changed.
// Array fields index at run time in kernels; whole structs gather and scatter.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/array>

#include "coalesce_device_test.hpp"

#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;

namespace nested_device {

struct Body {
  float3 pos;
  float3 vel;
  float mass;
};
COALESCE_FIELDS(Body, pos, vel, mass);

struct Sample {
  float p[3];
  cuda::std::array<int, 2> q;
};
COALESCE_FIELDS(Sample, p, q);

}  // namespace nested_device

namespace {

using coalesce_test::profiler;
using nested_device::Body;
using nested_device::Sample;

constexpr float dt = 0.5f;  // a power of two: vel * dt is exact, so device and host agree bit for bit

std::size_t body_count() { return ct::small_problems() ? (std::size_t(1) << 16) + 3 : (std::size_t(1) << 24) + 3; }
unsigned blocks_for(std::size_t n) { return unsigned((n + 255) / 256); }

std::vector<Body> random_bodies(std::size_t n) {
  const auto r = ct::random_values<float>(7 * n);
  std::vector<Body> bodies(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* v = &r[7 * i];
    bodies[i] = {{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, v[6]};
  }
  return bodies;
}

// The user's kernel, written once for an array of structs.
template <class Bodies>
__global__ void advance(Bodies b, std::size_t n, float step) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    b[i].pos.x += b[i].vel.x * step;
    b[i].pos.y += b[i].vel.y * step;
    b[i].pos.z += b[i].vel.z * step;
  }
}

// Reads pos.x of every element and nothing else of it.
template <class Bodies>
__global__ void copy_pos_x(Bodies b, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = b[i].pos.x;
}

// Whole structs: gathered into a Body, changed, scattered back; and one nested field as a float3.
__global__ void halve_mass_whole(coalesce::soa_view<Body> b) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < b.size()) {
    Body body = b[i];
    body.mass *= 0.5f;
    const float3 pos = b[i].pos;
    body.vel = pos;
    b[i] = body;
  }
}

// Array fields indexed with a k known only at run time.
__global__ void scale_arrays(coalesce::soa_view<Sample> s, unsigned elements) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < s.size()) {
    for (unsigned k = 0; k < elements; ++k) s[i].p[k] *= 2.0f;
    for (unsigned k = 0; k < s[i].q.size(); ++k) s[i].q[k] += int(k) + 1;
  }
}

struct advance_one {
  __device__ void operator()(coalesce::soa_reference_t<Body> b) const {
    b.pos.x += b.vel.x * dt;
    b.pos.y += b.vel.y * dt;
    b.pos.z += b.vel.z * dt;
  }
};

Body advanced(Body b) {
  b.pos.x += b.vel.x * dt;
  b.pos.y += b.vel.y * dt;
  b.pos.z += b.vel.z * dt;
  return b;
}

bool same_body(const Body& a, const Body& b) {
  return a.pos.x == b.pos.x && a.pos.y == b.pos.y && a.pos.z == b.pos.z && a.vel.x == b.vel.x && a.vel.y == b.vel.y &&
         a.vel.z == b.vel.z && a.mass == b.mass;
}

}  // namespace

TEST_CASE("the kernel written for Body* runs unchanged on a soa_view<Body> of seven float columns, exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  static_assert(coalesce::leaf_count_v<Body> == 7);
  const std::size_t n = body_count();
  const auto bodies = random_bodies(n);
  coalesce::soa_vector<Body> soa(bodies);
  ct::device_buffer<Body> aos(bodies);
  advance<<<blocks_for(n), 256>>>(soa.view(), n, dt);
  ct::check_launch();
  advance<<<blocks_for(n), 256>>>(aos.data(), n, dt);
  ct::check_sync();
  const auto from_soa = soa.to_vector();
  const auto from_aos = aos.download();
  for (std::size_t i = 0; i < n; ++i) {
    const Body expected = advanced(bodies[i]);
    if (!same_body(from_soa[i], expected)) FAIL("soa_view<Body>: element " << i << " differs from the host");
    if (!same_body(from_aos[i], expected)) FAIL("Body*: element " << i << " differs from the host");
  }
}

TEST_CASE("whole Bodies gather from and scatter into the columns in a kernel, and array fields index at run time") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto bodies = random_bodies(n);
  coalesce::soa_vector<Body> soa(bodies);
  halve_mass_whole<<<blocks_for(n), 256>>>(soa.view());
  ct::check_sync();
  const auto got = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    Body expected = bodies[i];
    expected.mass *= 0.5f;
    expected.vel = expected.pos;
    if (!same_body(got[i], expected)) FAIL("element " << i << " differs after gather and scatter");
  }

  std::vector<Sample> samples(n);
  for (std::size_t i = 0; i < n; ++i) samples[i] = {{float(i), float(i) + 0.25f, float(i) + 0.5f}, {{int(i), -int(i)}}};
  coalesce::soa_vector<Sample> s(samples);
  scale_arrays<<<blocks_for(n), 256>>>(s.view(), 3);
  ct::check_sync();
  const auto scaled = s.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    for (unsigned k = 0; k < 3; ++k)
      if (scaled[i].p[k] != 2.0f * samples[i].p[k]) FAIL("p[" << k << "] of element " << i);
    if (scaled[i].q[0] != int(i) + 1 || scaled[i].q[1] != -int(i) + 2) FAIL("q of element " << i);
  }
}

TEST_CASE("reading b[i].pos.x of a soa_view<Body> is 4 sectors per request, as a float column is") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = body_count() - 3;
  const auto bodies = random_bodies(n);
  coalesce::soa_vector<Body> soa(bodies);
  ct::device_buffer<Body> aos(bodies);
  ct::device_buffer<float> out_soa(n), out_aos(n);
  auto run_soa = [&] { copy_pos_x<<<blocks_for(n), 256>>>(soa.const_view(), out_soa.data(), n); };
  auto run_aos = [&] { copy_pos_x<<<blocks_for(n), 256>>>(aos.data(), out_aos.data(), n); };
  run_soa();
  run_aos();
  ct::check_sync();
  REQUIRE(out_soa.download() == out_aos.download());
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto s = profiler().measure(run_soa);
  const auto a = profiler().measure(run_aos);
  std::printf("\nb[i].pos.x: load sectors per request soa_view<Body> %.2f, Body* %.2f\n", s.load_sectors_per_request(),
              a.load_sectors_per_request());
  CHECK(s.load_sectors_per_request() == Approx(4.0).epsilon(0.01));
  CHECK(a.load_sectors_per_request() > 3 * s.load_sectors_per_request());  // 28-byte structs: 28 sectors
}

TEST_CASE("for_each on a soa_view<Body> moves 16 sectors per request and stores only the three pos columns") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = body_count();
  const auto bodies = random_bodies(n);
  coalesce::soa_vector<Body> soa(bodies);
  const auto view = soa.view();
  coalesce::for_each(view, advance_one{});
  ct::check_sync();
  const auto got = soa.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    if (!same_body(got[i], advanced(bodies[i]))) FAIL("element " << i << " differs from the host");

  const std::size_t m = n - 3;  // whole chunks: every access a full 16-byte vector
  const coalesce::soa_view<Body> whole(view.columns(), m);
  COALESCE_REQUIRE_COUNTERS(profiler());
  // dt = 0.5: every launch changes every position, so no launch can skip a store.
  const auto c = profiler().measure([&] { coalesce::for_each(whole, advance_one{}); });
  std::printf("\nfor_each on soa_view<Body>: load / store sectors per request %.2f / %.2f, store sectors %.0f (3 of 7 "
              "columns: %.0f)\n",
              c.load_sectors_per_request(), c.store_sectors_per_request(), c.global_store_sectors(),
              3.0 * m * sizeof(float) / 32);
  CHECK(c.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(c.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(c.global_store_sectors() == Approx(3.0 * m * sizeof(float) / 32).epsilon(0.001));
}
