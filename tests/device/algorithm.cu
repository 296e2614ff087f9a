// coalesce::for_each and coalesce::transform on soa_views, spans, pitched views and arrays of
// structs: correct against a host reference at every alignment (heads, tails, fallbacks), ideal
// sectors per request for 16-byte accesses, columns f does not change never stored, and at least
// 0.98 of the best competitor's bandwidth (competitors.hpp: the fastest hand-written kernel we
// know, Thrust with par_nosync, CUB) measured in the same process, plus a floor of the DRAM peak
// (targets.hpp). The benchmark (bench/) runs the same competitors.
#include <coalesce/algorithm.hpp>
#include <coalesce/detail/stage_certificate.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/testing/testing.hpp>
#include <coalesce/transpose.hpp>

#include <cub/device/device_transform.cuh>
#include <cuda/std/mdspan>

#include "coalesce_device_test.hpp"
#include "competitors.hpp"
#include "mixed.hpp"
#include "particles.hpp"
#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;
namespace cc = coalesce_test::competitors;
namespace targets = coalesce_test::targets;
using coalesce_test::random_particles;

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

// Reads all eight columns, writes a, b and g; no column converges, so every launch stores all three.
struct mix_all {
  __device__ void operator()(coalesce::soa_reference_t<Mixed> m) const {
    coalesce::get<0>(m) += coalesce::get<4>(m) * float(coalesce::get<2>(m) & 7);
    coalesce::get<1>(m) = coalesce::get<5>(m) * double(coalesce::get<3>(m)) - coalesce::get<1>(m);
    coalesce::get<6>(m) += std::int32_t(coalesce::get<7>(m));
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

std::size_t element_count() { return ct::small_problems() ? (std::size_t(1) << 16) + 3 : (std::size_t(1) << 25) + 3; }

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
    if (got[i].x != expected[i].x || got[i].y != expected[i].y || got[i].z != expected[i].z ||
        got[i].vx != particles[i].vx)
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

TEST_CASE(
    "for_each on a soa_view moves 16-byte vectors, stores only changed columns, and keeps up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = element_count() - 3;
  coalesce::soa_vector<Particle> v(random_particles(n));
  const auto view = v.view();
  // dt = 0.5: every launch changes every position, so no launch can skip a store.
  auto library = [&](cudaStream_t s) { coalesce::for_each(view, drift{0.5f}, s); };
  const auto competitors =
      cc::particle_update({view.column<&Particle::x>(), view.column<&Particle::y>(), view.column<&Particle::z>(),
                           view.column<&Particle::vx>(), view.column<&Particle::vy>(), view.column<&Particle::vz>(), n},
                          0.5f);
  library(0);
  coalesce_test::launch_each(competitors);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { library(0); });
  std::printf("\nfor_each particle update: load / store sectors per request %.2f / %.2f, store sectors %.0f (3 of 6 "
              "columns: %.0f)\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), m.global_store_sectors(),
              3.0 * n * sizeof(float) / 32);
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.global_store_sectors() == Approx(3.0 * n * sizeof(float) / 32).epsilon(0.001));

  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(meter, "particle update in place, 6 float columns, 3 written",
                                                         library, competitors, 36.0 * double(n));
  CHECK(c.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(c.library_of_peak >= targets::particle_update_of_peak);
}

// --- contiguous ranges, misaligned views, arrays of structs, pitched views, transform --------

namespace {

struct scale_add {
  __host__ __device__ void operator()(float& x) const { x = x * 0.5f + 0.25f; }
};
struct scaled {
  __host__ __device__ float operator()(float x) const { return x * 0.5f + 0.25f; }
};
// x -> 0.25 - x for timing: every launch changes every value. (Repeating x * 0.5 + 0.25 converges
// to 0.5 in about 25 launches, after which for_each rightly stores nothing - and looks fast.)
struct reflect {
  __device__ void operator()(float& x) const { x = 0.25f - x; }
};
struct reflected {
  __device__ float operator()(float x) const { return 0.25f - x; }
};
struct bump_short {
  __device__ void operator()(std::int16_t& x) const { x = std::int16_t(x + 3); }
};
struct drift_struct {
  __host__ __device__ void operator()(Particle& p) const {
    p.x += p.vx * 0.5f;
    p.y += p.vy * 0.5f;
    p.z += p.vz * 0.5f;
  }
};
struct Vec3 {
  float x, y, z;
};
struct flip_vec3 {
  __host__ __device__ void operator()(Vec3& v) const { v.y = -v.y; }
};
// Reads every field, writes none: a read-only f must not store anything.
struct observe {
  unsigned long long* count;
  __device__ void operator()(Particle& p) const {
    if (p.x > 10.0f) atomicAdd(count, 1ull);
  }
};
struct speed_squared {
  __device__ float operator()(coalesce::soa_reference_t<const Particle> p) const {
    return p.vx * p.vx + p.vy * p.vy + p.vz * p.vz;
  }
};

std::size_t small_or(std::size_t n) { return ct::small_problems() ? 4099 : n; }

}  // namespace

TEST_CASE("for_each on a span: every head and tail alignment, floats and shorts") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto values = ct::random_values<float>(n);
  ct::device_buffer<float> data(n);
  for (std::size_t offset : {0, 1, 2, 3, 5}) {
    for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(7), n - 8}) {
      data.upload(values);
      coalesce::for_each(cuda::std::span<float>(data.data() + offset, count), scale_add{});
      const auto got = data.download();
      for (std::size_t i = 0; i < n; ++i) {
        const bool inside = i >= offset && i < offset + count;
        const float expected = inside ? values[i] * 0.5f + 0.25f : values[i];
        if (got[i] != expected) FAIL("offset " << offset << ", count " << count << ": element " << i << " differs");
      }
    }
  }
  std::vector<std::int16_t> shorts(n);
  for (std::size_t i = 0; i < n; ++i) shorts[i] = std::int16_t(i % 1000);
  ct::device_buffer<std::int16_t> s(shorts);
  coalesce::for_each(s.data() + 3, n - 5, bump_short{});
  const auto got = s.download();
  for (std::size_t i = 0; i < n; ++i)
    REQUIRE(got[i] == ((i >= 3 && i < n - 2) ? std::int16_t(shorts[i] + 3) : shorts[i]));
}

TEST_CASE("for_each and transform take extended lambdas and run in order on the given stream") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto particles = random_particles(n);
  coalesce::soa_vector<Particle> v(particles);
  ct::device_buffer<float> out(n);
  cudaStream_t stream = nullptr;
  coalesce::throw_on_error(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  const float dt = 0.5f;
  // Three launches on one non-blocking stream, each reading what the one before wrote.
  coalesce::for_each(v.view(), [=] __device__(auto p) { p.x += p.vx * dt; }, stream);
  coalesce::for_each(
      cuda::std::span<float>(v.view().column<&Particle::x>(), n), [] __device__(float& x) { x *= 2; }, stream);
  coalesce::transform(
      v.const_view(), cuda::std::span<float>(out.data(), n), [] __device__(auto p) { return p.x - p.y; }, stream);
  std::vector<float> got(n);
  coalesce::throw_on_error(cudaMemcpyAsync(got.data(), out.data(), n * sizeof(float), cudaMemcpyDeviceToHost, stream),
                           "cudaMemcpyAsync");
  coalesce::throw_on_error(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  coalesce::throw_on_error(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (std::size_t i = 0; i < n; ++i) {
    const float x = (particles[i].x + particles[i].vx * dt) * 2;
    if (got[i] != x - particles[i].y) FAIL("element " << i << ": " << got[i] << " vs " << x - particles[i].y);
  }
}

TEST_CASE("for_each on a soa_view whose columns are not vector-aligned is still exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 10007;
  const auto particles = random_particles(n);
  coalesce::soa_vector<Particle> v(particles);
  auto columns = v.view().columns();
  for (auto& c : columns) c = static_cast<float*>(c) + 1;  // 4-byte aligned: no float4 chunks
  coalesce::for_each(coalesce::soa_view<Particle>(columns, n - 1), drift{0.5f});
  const auto got = v.to_vector();
  REQUIRE(coalesce_test::same(got[0], particles[0]));
  for (std::size_t i = 1; i < n; ++i) {
    auto expected = particles[i];
    drift_struct{}(expected);
    if (!coalesce_test::same(got[i], expected)) FAIL("element " << i << " differs");
  }
}

TEST_CASE("for_each over an array of structs is exact at any base alignment and run length") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = small_or(300001);
  const auto particles = random_particles(n);
  ct::device_buffer<Particle> aos(n);
  for (std::size_t offset : {0, 1, 3}) {  // 24-byte structs at 256-, 8- and 8-byte alignment
    aos.upload(particles);
    coalesce::for_each(aos.data() + offset, n - offset - 1, drift_struct{});
    const auto got = aos.download();
    for (std::size_t i = 0; i < n; ++i) {
      auto expected = particles[i];
      if (i >= offset && i < n - 1) drift_struct{}(expected);
      if (!coalesce_test::same(got[i], expected)) FAIL("offset " << offset << ": element " << i << " differs");
    }
  }
  // 12-byte structs one element in: 4-byte aligned, so the copies fall back to words.
  std::vector<Vec3> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = {float(i), float(i) + 0.5f, -float(i)};
  ct::device_buffer<Vec3> p(points);
  coalesce::for_each(p.data() + 1, n - 1, flip_vec3{});
  const auto got = p.download();
  REQUIRE(got[0].y == points[0].y);
  for (std::size_t i = 1; i < n; ++i)
    if (got[i].x != points[i].x || got[i].y != -points[i].y || got[i].z != points[i].z)
      FAIL("Vec3 " << i << " differs");
}

TEST_CASE("for_each and transform on pitched views: whole matrices and unaligned blocks") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 301, cols = 1001;
  const auto values = ct::random_values<float>(rows * cols);
  coalesce::pitched_matrix<float> m(values, rows, cols), out(rows, cols);
  // A block starting one column in: each row has a 3-element head before its first float4.
  coalesce::for_each(m.view().block(2, 1, rows - 3, cols - 2), scale_add{});
  const auto got = m.to_vector();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const bool inside = r >= 2 && r < rows - 1 && c >= 1 && c < cols - 1;
      if (got[r * cols + c] != (inside ? values[r * cols + c] * 0.5f + 0.25f : values[r * cols + c]))
        FAIL("for_each: element (" << r << ", " << c << ") differs");
    }
  out.fill(-1.0f);
  coalesce::transform(m.const_view(), out.view(), scaled{});
  const auto mapped = out.to_vector();
  for (std::size_t i = 0; i < rows * cols; ++i)
    if (mapped[i] != got[i] * 0.5f + 0.25f) FAIL("transform: element " << i << " differs");
  REQUIRE_THROWS_AS(coalesce::transform(m.const_view(), out.view().block(0, 0, rows, cols - 1), scaled{}),
                    std::invalid_argument);

  // Whole views and right-edge blocks own the padding after each row: the walk runs on to the next
  // 64-byte unit, so f must still see only elements and the padding must stay zero bytes.
  m.copy_from(values);
  coalesce::for_each(m.view().block(0, 5, rows, cols - 5), scale_add{});
  std::vector<unsigned char> raw(rows * m.pitch_bytes());
  coalesce::throw_on_error(cudaMemcpy(raw.data(), m.data(), raw.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (std::size_t r = 0; r < rows; ++r) {
    const auto* row = raw.data() + r * m.pitch_bytes();
    for (std::size_t c = 0; c < cols; ++c) {
      float x;
      std::memcpy(&x, row + c * sizeof(float), sizeof x);
      if (x != (c >= 5 ? values[r * cols + c] * 0.5f + 0.25f : values[r * cols + c]))
        FAIL("right-edge block: element (" << r << ", " << c << ") differs");
    }
    for (std::size_t b = cols * sizeof(float); b < m.pitch_bytes(); ++b)
      if (row[b] != 0) FAIL("padding byte " << b << " of row " << r << " changed");
  }
  coalesce::transform(m.const_view(), out.view(), scaled{});
  coalesce::throw_on_error(cudaMemcpy(raw.data(), out.data(), raw.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t b = cols * sizeof(float); b < out.pitch_bytes(); ++b)
      if (raw[r * out.pitch_bytes() + b] != 0) FAIL("transform wrote padding byte " << b << " of row " << r);
}

namespace {
// A grid type of the user's own: walkable once it has a view_adapter.
struct device_grid {
  float* data;
  std::size_t nx, ny, row_bytes;
};
}  // namespace

template <>
struct coalesce::view_adapter<device_grid> {
  static coalesce::pitched_view<float> adapt(const device_grid& g) { return {g.data, g.ny, g.nx, g.row_bytes}; }
};

TEST_CASE(
    "for_each and transform walk mdspans (layout_right, layout_stride, aligned_accessor) and a user's view type") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using extents_2d = cuda::std::dextents<std::size_t, 2>;
  using extents_1d = cuda::std::dextents<std::size_t, 1>;
  const std::size_t rows = 257, cols = 1000;
  const auto values = ct::random_values<float>(rows * cols);
  const auto once = [](float x) { return x * 0.5f + 0.25f; };
  const auto check = [&](const std::vector<float>& got, int times, const char* what) {
    for (std::size_t i = 0; i < rows * cols; ++i) {
      float want = values[i];
      for (int k = 0; k < times; ++k) want = once(want);
      if (got[i] != want) FAIL(what << ": element " << i << " differs");
    }
  };

  // A pitched matrix as a layout_stride mdspan, then as a type of the user's.
  coalesce::pitched_matrix<float> m(values, rows, cols), out(rows, cols);
  coalesce::for_each(m.view().to_mdspan(), scale_add{});
  check(m.to_vector(), 1, "for_each(layout_stride mdspan)");
  coalesce::for_each(device_grid{m.data(), cols, rows, m.pitch_bytes()}, scale_add{});
  check(m.to_vector(), 2, "for_each(user view)");

  // Dense rows as layout_right, into the matrix's mdspan.
  ct::device_buffer<float> dense(values);
  coalesce::transform(cuda::std::mdspan<const float, extents_2d>(dense.data(), rows, cols), out.view().to_mdspan(),
                      scaled{});
  check(out.to_vector(), 1, "transform(layout_right mdspan, layout_stride mdspan)");

  // Rank 1 with aligned_accessor (a span underneath, so 16-byte chunks), and one column of the
  // dense rows (layout_stride, rows of one element).
  coalesce::for_each(
      cuda::std::mdspan<float, extents_1d, cuda::std::layout_right, cuda::std::aligned_accessor<float, 16>>(
          dense.data(), rows * cols),
      scale_add{});
  check(dense.download(), 1, "for_each(rank-1 aligned_accessor mdspan)");
  using stride_1d = cuda::std::layout_stride::mapping<extents_1d>;
  coalesce::for_each(cuda::std::mdspan<float, extents_1d, cuda::std::layout_stride>(
                         dense.data() + 7, stride_1d(extents_1d(rows), cuda::std::array<std::size_t, 1>{cols})),
                     scale_add{});
  const auto after = dense.download();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const float want = c == 7 ? once(once(values[r * cols + c])) : once(values[r * cols + c]);
      if (after[r * cols + c] != want) FAIL("for_each(column mdspan): element (" << r << ", " << c << ") differs");
    }
}

TEST_CASE("transform: soa_view into a span, and a span in place") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto particles = random_particles(n);
  coalesce::soa_vector<Particle> v(particles);
  ct::device_buffer<float> speeds(n);
  speeds.poison();
  coalesce::transform(v.const_view(), cuda::std::span<float>(speeds.data(), n), speed_squared{});
  const auto got = speeds.download();
  for (std::size_t i = 0; i < n; ++i) {
    const Particle& p = particles[i];
    // Same operations in the same order as the functor; only contraction into FMA may differ.
    const float expected = p.vx * p.vx + p.vy * p.vy + p.vz * p.vz;
    if (std::abs(got[i] - expected) > 1e-6f * (1.0f + expected))
      FAIL("speed " << i << ": " << got[i] << " vs " << expected);
  }
  const auto values = ct::random_values<float>(n);
  ct::device_buffer<float> data(values);
  coalesce::transform(data.data(), n, data.data(), scaled{});  // in place: inputs overlap the output
  const auto in_place = data.download();
  for (std::size_t i = 0; i < n; ++i) REQUIRE(in_place[i] == values[i] * 0.5f + 0.25f);
  REQUIRE_THROWS_AS(coalesce::transform(v.const_view(), cuda::std::span<float>(speeds.data(), n - 1), speed_squared{}),
                    std::invalid_argument);
}

TEST_CASE("for_each and transform on one column: 16-byte accesses, and they keep up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 27;
  ct::device_buffer<float> data(ct::random_values<float>(n)), other(n);
  float* x = data.data();
  float* y = other.data();
  auto in_place = [=](cudaStream_t s) { coalesce::for_each(cuda::std::span<float>(x, n), reflect{}, s); };
  auto into_another = [=](cudaStream_t s) {
    coalesce::transform(cuda::std::span<const float>(x, n), cuda::std::span<float>(y, n), reflected{}, s);
  };
  const auto in_place_competitors = cc::column_in_place(x, n);
  const auto into_another_competitors = cc::column_into_another(x, y, n);
  in_place(0);
  into_another(0);
  coalesce_test::launch_each(in_place_competitors);
  coalesce_test::launch_each(into_another_competitors);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { in_place(0); });
  const auto t = profiler().measure([&] { into_another(0); });
  std::printf("\nfor_each(span<float>): load / store sectors per request %.2f / %.2f; transform: %.2f / %.2f\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), t.load_sectors_per_request(),
              t.store_sectors_per_request());
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(t.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(t.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  ct::bandwidth_meter meter;
  const auto a = coalesce_test::compare_with_competitors(meter, "one float column in place: coalesce::for_each(span)",
                                                         in_place, in_place_competitors, 8.0 * double(n));
  CHECK(a.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(a.library_of_peak >= targets::one_column_of_peak);
  const auto b =
      coalesce_test::compare_with_competitors(meter, "one float column into another: coalesce::transform(span, span)",
                                              into_another, into_another_competitors, 8.0 * double(n));
  CHECK(b.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(b.library_of_peak >= targets::one_column_of_peak);
}

TEST_CASE(
    "for_each on a pitched 200000 x 1000 matrix reads whole float4 rows, stores only elements, and keeps up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = ct::small_problems() ? 256 : 200000, cols = 1000;
  coalesce::pitched_matrix<float> m(ct::random_values<float>(rows * cols), rows, cols);
  const auto v = m.view();
  auto library = [&](cudaStream_t s) { coalesce::for_each(v, reflect{}, s); };
  const auto competitors = cc::pitched_in_place(v);
  library(0);
  coalesce_test::launch_each(competitors);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto c = profiler().measure([&] { library(0); });
  std::printf("\nfor_each(pitched_view): load / store sectors per request %.2f / %.2f, store sectors %.0f (elements "
              "only: %.0f)\n",
              c.load_sectors_per_request(), c.store_sectors_per_request(), c.global_store_sectors(),
              double(rows * cols * sizeof(float) / 32));
  // Whole 4096-byte rows are read as float4s (the walk runs on through the owned padding), but
  // only the 1000 elements are stored: 125 sectors over 8 warp requests per row.
  CHECK(c.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(c.global_store_sectors() == Approx(double(rows * cols * sizeof(float) / 32)).epsilon(0.001));
  CHECK(c.store_sectors_per_request() == Approx(125.0 / 8).epsilon(0.01));
  ct::bandwidth_meter meter;
  const auto r = coalesce_test::compare_with_competitors(meter, "row operation in place, pitched 200000 x 1000 floats",
                                                         library, competitors, 8.0 * double(rows * cols));
  CHECK(r.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(r.library_of_peak >= targets::pitched_rows_of_peak);
}

TEST_CASE(
    "for_each over an array of structs: 16-byte coalesced copies, no stores for a read-only f, and it keeps up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 25;
  ct::device_buffer<Particle> aos(random_particles(n));
  ct::device_buffer<unsigned long long> count(1);
  Particle* p = aos.data();
  auto library = [&](cudaStream_t s) { coalesce::for_each(p, n, cc::drift_struct{0.5f}, s); };
  auto read_only = [&] { coalesce::for_each(p, n, observe{count.data()}); };
  const auto competitors = cc::structs_in_place(p, n, 0.5f);
  library(0);
  read_only();
  coalesce_test::launch_each(competitors);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { library(0); });
  const auto r = profiler().measure(read_only);
  std::printf("\nfor_each(Particle*): global load / store sectors per request %.2f / %.2f; read-only f stores %.0f "
              "sectors; shared wavefronts per load %.2f\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), r.global_store_sectors(),
              m.shared_load_wavefronts_per_instruction());
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(r.global_store_sectors() == 0.0);
  // The stage's certificate against the counters. Per run of 256 structs, each of the 8 warps reads
  // its structs a word at a time (6 instructions at the certificate's price: 2-way for 24-byte
  // structs), and the copy back reads 6144 bytes as 16-byte words (12 instructions, 4 wavefronts
  // each). The model runs 0 to 4% below the hardware elsewhere (device.model_agreement).
  using stage = coalesce::detail::stage_certificate<Particle>;
  static_assert(stage::words == 6 && stage::element_word_wavefronts == 2 && stage::ideal_element_word_wavefronts == 1);
  const double element_reads = 8.0 * stage::words, copy_reads = 256.0 * sizeof(Particle) / 16 / 32;
  const double predicted =
      (element_reads * stage::element_word_wavefronts + copy_reads * 4) / (element_reads + copy_reads);
  std::printf("shared wavefronts per load: %.3f, certificate %.3f\n", m.shared_load_wavefronts_per_instruction(),
              predicted);
  CHECK(m.shared_load_wavefronts_per_instruction() >= predicted * 0.999);
  CHECK(m.shared_load_wavefronts_per_instruction() <= predicted * 1.04);
  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(meter, "array of 24-byte structs in place", library,
                                                         competitors, 48.0 * double(n));
  CHECK(c.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(c.library_of_peak >= targets::array_of_structs_of_peak);
}

TEST_CASE("for_each on 8 mixed columns (float, double, int, short) keeps up with the best competitor") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? std::size_t(1) << 16 : std::size_t(1) << 24;
  std::vector<Mixed> mixed(n);
  for (std::size_t i = 0; i < n; ++i)
    mixed[i] = {float(i % 1000), double(i) / 3, std::int32_t(i), std::int16_t(i % 100), 0.5f, 1.0, 7, 9};
  coalesce::soa_vector<Mixed> m(mixed);
  const auto v = m.view();
  auto library = [&](cudaStream_t s) { coalesce::for_each(v, mix_all{}, s); };
  const auto competitors = cc::mixed_update({v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(), v.column<4>(),
                                             v.column<5>(), v.column<6>(), v.column<7>(), n});
  library(0);
  coalesce_test::launch_each(competitors);
  COALESCE_REQUIRE_TIMING();
  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(meter, "8 mixed columns, all read, 3 written", library,
                                                         competitors, 52.0 * double(n));
  CHECK(c.versus_best_competitor() >= targets::versus_best_competitor);
  CHECK(c.library_of_peak >= targets::mixed_columns_of_peak);
}

// (Not in an anonymous namespace: a kernel with internal linkage as a template argument has no
// host stub that the launch helpers' instantiations can link to.)
namespace coalesce_test {
__global__ void __launch_bounds__(1024) occupancy_probe(float* out) {
  __shared__ float scratch[2048];
  scratch[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  if (out != nullptr) out[threadIdx.x] = scratch[(threadIdx.x + 1) % blockDim.x];
}
}  // namespace coalesce_test

TEST_CASE("the occupancy a launch asks for is cached per kernel, device and block size, and agrees with the runtime") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  int device = 0;
  COALESCE_CUDA_CHECK(cudaGetDevice(&device));
  for (unsigned threads : {256u, 1024u, 256u, 64u, 64u}) {  // a size change must not reuse the last answer
    int expected = 0;
    COALESCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&expected, coalesce_test::occupancy_probe, int(threads), 0));
    CHECK(coalesce::detail::resident_blocks<coalesce_test::occupancy_probe>(device, threads) == expected);
    int sms = 0;
    COALESCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(coalesce::detail::one_wave_grid<coalesce_test::occupancy_probe>(threads, std::size_t(1) << 40) ==
          unsigned(sms * expected));
    CHECK(coalesce::detail::one_wave_grid<coalesce_test::occupancy_probe>(threads, 3) == 3u);
  }
}

TEST_CASE("for_each_index calls f(i) once for every index of a soa_view, a span and a soa_vector") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 300007;  // a partial last block
  coalesce::soa_vector<Particle> particles(n);
  const auto v = particles.view();
  coalesce::for_each_index(v, [v] __device__(std::size_t i) {
    v[i].x = float(i);
    v[i].vz = -float(i);
  });
  ct::device_buffer<std::uint32_t> counts(std::vector<std::uint32_t>(n, 0));
  const cuda::std::span<std::uint32_t> s(counts.data(), n);
  coalesce::for_each_index(s, [s] __device__(std::size_t i) { atomicAdd(&s[i], std::uint32_t(i % 1000) + 1); });
  coalesce::for_each_index(particles, [v] __device__(std::size_t i) { v[i].y = 2.0f * v[i].x; });
  const auto got = particles.to_vector();
  const auto hits = counts.download();
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i].x != float(i) || got[i].y != 2.0f * float(i) || got[i].vz != -float(i)) FAIL("soa element " << i);
    if (hits[i] != std::uint32_t(i % 1000) + 1)
      FAIL("span index " << i << " was visited " << hits[i] << " times' worth");
  }
}

namespace contract {
// 8 bytes, 3 of them padding: one 8-byte access, walked in chunks.
struct Tagged {
  char tag;
  float value;
};
// 24 bytes, 7 of them padding: no single access moves it, so it is staged.
struct Wide {
  double a;
  double b;
  char tag;
};

// Marks each element with whether f was handed a reference into the range's memory (1) or into
// a copy (2).
template <class T>
struct mark_where {
  const T* first;
  const T* last;
  __device__ void operator()(T& e) const {
    const bool in_memory = &e >= first && &e < last;
    e.tag = in_memory ? 1 : 2;
  }
};

// Assigns each element a whole new struct of the same values (the padding of which is anything),
// and with `bump` changes its value as well.
struct rebuild_tagged {
  bool bump;
  __device__ void operator()(Tagged& e) const { e = Tagged{e.tag, bump ? e.value + 1.0f : e.value}; }
};
struct rebuild_wide {
  bool bump;
  __device__ void operator()(Wide& e) const { e = Wide{e.a, bump ? e.b + 1.0 : e.b, e.tag}; }
};

template <class T>
std::vector<unsigned char> padded_bytes(std::size_t n) {
  std::vector<unsigned char> bytes(n * sizeof(T), 0xAB);  // padding: 0xAB
  for (std::size_t i = 0; i < n; ++i) {
    T e;
    std::memcpy(&e, &bytes[i * sizeof(T)], sizeof(T));
    e.tag = 0;
    if constexpr (std::is_same_v<T, Tagged>) e.value = float(i);
    else e.a = double(i), e.b = 0.5 * double(i);
    std::memcpy(&bytes[i * sizeof(T)], &e, sizeof(T));
  }
  return bytes;
}

// Whether every padding byte of the n elements is still 0xAB.
template <class T>
bool padding_kept(const std::vector<unsigned char>& bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* e = &bytes[i * sizeof(T)];
    if constexpr (std::is_same_v<T, Tagged>) {
      for (std::size_t b = 1; b < 4; ++b)
        if (e[b] != 0xAB) return false;
    } else {
      for (std::size_t b = 17; b < 24; ++b)
        if (e[b] != 0xAB) return false;
    }
  }
  return true;
}
}  // namespace contract

TEST_CASE(
    "for_each hands f a copy of its element at every position: chunks, heads and tails, staged structs, soa columns") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using namespace contract;
  const std::size_t n = 1001;
  {
    const auto bytes = padded_bytes<Tagged>(n + 1);
    ct::device_buffer<unsigned char> raw(bytes);
    // From the second element: 8 bytes off 16-byte alignment, so a head and a tail are single elements.
    Tagged* first = reinterpret_cast<Tagged*>(raw.data()) + 1;
    coalesce::for_each(cuda::std::span<Tagged>(first, n), mark_where<Tagged>{first, first + n});
    const auto got = raw.download();
    for (std::size_t i = 1; i <= n; ++i)
      if (got[i * sizeof(Tagged)] != 2) FAIL("8-byte element " << i - 1 << " was handed to f in memory");
  }
  {
    const auto bytes = padded_bytes<Wide>(n);
    ct::device_buffer<unsigned char> raw(bytes);
    Wide* first = reinterpret_cast<Wide*>(raw.data());
    coalesce::for_each(cuda::std::span<Wide>(first, n), mark_where<Wide>{first, first + n});
    const auto got = raw.download();
    for (std::size_t i = 0; i < n; ++i)
      if (got[i * sizeof(Wide) + 16] != 2) FAIL("staged element " << i << " was handed to f in memory");
  }
  {
    coalesce::soa_vector<Particle> particles(random_particles(n + 3));
    auto columns = particles.view().columns();
    for (auto& column : columns)
      column = static_cast<float*>(column) + 1;  // every column off alignment: heads and tails
    const coalesce::soa_view<Particle> v(columns, n);
    const float* x_first = v.column<&Particle::x>();
    coalesce::for_each(v, [x_first, n] __device__(coalesce::soa_reference_t<Particle> p) {
      const bool in_memory = &p.x >= x_first && &p.x < x_first + n;
      p.vz = in_memory ? 1.0f : 2.0f;
    });
    const auto got = particles.to_vector();
    for (std::size_t i = 1; i <= n; ++i)
      if (got[i].vz != 2.0f) FAIL("soa element " << i - 1 << " was handed to f in memory");
  }
}

TEST_CASE(
    "for_each never compares or changes padding: a struct rebuilt whole keeps its padding bytes, and is stored only where a value changed") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using namespace contract;
  const std::size_t n = 4099;
  {
    const auto bytes = padded_bytes<Tagged>(n + 1);
    ct::device_buffer<unsigned char> raw(bytes);
    const cuda::std::span<Tagged> all(reinterpret_cast<Tagged*>(raw.data()) + 1, n);
    coalesce::for_each(all, rebuild_tagged{false});
    CHECK(raw.download() == bytes);  // nothing changed, padding included
    coalesce::for_each(all, rebuild_tagged{true});
    const auto got = raw.download();
    // Chunks, and the single elements of the head and the tail, alike.
    CHECK(padding_kept<Tagged>(got, n + 1));
    for (std::size_t i = 1; i <= n; ++i) {
      Tagged e;
      std::memcpy(&e, &got[i * sizeof(Tagged)], sizeof(Tagged));
      if (e.value != float(i) + 1.0f) FAIL("8-byte element " << i - 1 << " holds " << e.value);
    }
  }
  {
    const auto bytes = padded_bytes<Wide>(n);
    ct::device_buffer<unsigned char> raw(bytes);
    const cuda::std::span<Wide> all(reinterpret_cast<Wide*>(raw.data()), n);
    coalesce::for_each(all, rebuild_wide{false});
    CHECK(raw.download() == bytes);
    coalesce::for_each(all, rebuild_wide{true});
    const auto got = raw.download();
    CHECK(padding_kept<Wide>(got, n));
    for (std::size_t i = 0; i < n; ++i) {
      Wide e;
      std::memcpy(&e, &got[i * sizeof(Wide)], sizeof(Wide));
      if (e.b != 0.5 * double(i) + 1.0) FAIL("staged element " << i << " holds " << e.b);
    }
  }
}

TEST_CASE("for_each stores nothing when f rebuilds padded structs with the same values (hardware counters)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using namespace contract;
  const std::size_t n = std::size_t(1) << 20;
  const auto tagged = padded_bytes<Tagged>(n);
  const auto wide = padded_bytes<Wide>(n);
  ct::device_buffer<unsigned char> tagged_raw(tagged), wide_raw(wide);
  const cuda::std::span<Tagged> t(reinterpret_cast<Tagged*>(tagged_raw.data()), n);
  const cuda::std::span<Wide> w(reinterpret_cast<Wide*>(wide_raw.data()), n);
  const auto same_tagged = [t] { coalesce::for_each(t, rebuild_tagged{false}); };
  const auto same_wide = [w] { coalesce::for_each(w, rebuild_wide{false}); };
  same_tagged();
  same_wide();
  ct::check_sync("rebuilt structs");
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto ct_ = profiler().measure(same_tagged);
  const auto cw = profiler().measure(same_wide);
  std::printf(
      "\nfor_each rebuilding padded structs with the same values: global store requests %.0f (8-byte), %.0f (24-byte, staged)\n",
      ct_.global_store_requests(), cw.global_store_requests());
  CHECK(ct_.global_store_requests() == 0.0);
  CHECK(cw.global_store_requests() == 0.0);
}
