// pitched_volume on the device: dense round trips and block copies through cudaMemcpy3DAsync,
// for_each and transform over a volume's rows and for_each_index with f(z, y, x) over whole
// volumes and blocks cut in y, exact against a host reference; for_each loads whole rows in
// 16-byte vectors (16 sectors per request, hardware counters), stores the elements only, and moves
// DRAM bytes near one read and one write of each element.
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::profiler;

namespace {

std::vector<float> numbered(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i % 4093) * 0.5f;
  return v;
}

struct twice_plus_one {
  __host__ __device__ void operator()(float& x) const { x = 2.0f * x + 1.0f; }
};

// out(z, y, x) = its own coordinates, so that a misplaced write shows which element it hit.
struct write_coordinates {
  coalesce::pitched_volume_view<float> out;
  __device__ void operator()(std::size_t z, std::size_t y, std::size_t x) const {
    out(z, y, x) = float(z * 1000000 + y * 1000 + x);
  }
};

float coordinates(std::size_t z, std::size_t y, std::size_t x) { return float(z * 1000000 + y * 1000 + x); }

}  // namespace

TEST_CASE("a device pitched_volume round-trips dense data, and coalesce::copy moves a block to the host") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t d = 7, h = 9, w = 301;
  const auto dense = numbered(d * h * w);
  coalesce::pitched_volume<float> v(dense, d, h, w);
  CHECK(v.pitch_bytes() == 1280);  // 1204 bytes up to 128
  CHECK(v.to_vector() == dense);

  coalesce::pitched_volume<float, coalesce::host_space> block(3, 4, 100);
  coalesce::copy(v.const_view().block(2, 3, 50, 3, 4, 100), block.view(), v.stream());
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(v.stream()));
  for (std::size_t z = 0; z < 3; ++z)
    for (std::size_t y = 0; y < 4; ++y)
      for (std::size_t x = 0; x < 100; ++x)
        if (block(z, y, x) != dense[((z + 2) * h + y + 3) * w + x + 50])
          FAIL("block element " << z << ", " << y << ", " << x);

  // device to device, into a block of another volume
  coalesce::pitched_volume<float> target(4, 5, 120);
  coalesce::copy(v.const_view().block(2, 3, 50, 3, 4, 100), target.view().block(1, 1, 10, 3, 4, 100), v.stream());
  const auto got = target.to_vector();
  for (std::size_t z = 0; z < 4; ++z)
    for (std::size_t y = 0; y < 5; ++y)
      for (std::size_t x = 0; x < 120; ++x) {
        const bool inside = z >= 1 && y >= 1 && y < 5 && x >= 10 && x < 110;
        const float expected = inside ? dense[((z + 1) * h + y + 2) * w + x + 40] : 0.0f;
        if (got[(z * 5 + y) * 120 + x] != expected) FAIL("target element " << z << ", " << y << ", " << x);
      }
}

TEST_CASE(
    "for_each and transform walk a volume's rows; for_each_index calls f(z, y, x) on whole volumes and blocks cut in y") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t d = 6, h = 11, w = 257;
  const auto dense = numbered(d * h * w);
  coalesce::pitched_volume<float> v(dense, d, h, w);
  coalesce::for_each(v, twice_plus_one{});  // the container: on its stream
  auto expected = dense;
  for (float& x : expected) twice_plus_one{}(x);
  CHECK(v.to_vector() == expected);

  coalesce::pitched_volume<float> doubled(d, h, w);
  coalesce::transform(v.const_view(), doubled.view(), [] __device__(float x) { return 2.0f * x; });
  const auto got = doubled.to_vector();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != 2.0f * expected[i]) FAIL("transform: element " << i);

  coalesce::pitched_volume<float> indexed(d, h, w, -1.0f);
  coalesce::for_each_index(indexed, write_coordinates{indexed.view()});
  auto all = indexed.to_vector();
  for (std::size_t z = 0; z < d; ++z)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x)
        if (all[(z * h + y) * w + x] != coordinates(z, y, x))
          FAIL("whole volume: element " << z << ", " << y << ", " << x);

  // A block cut in y: one launch per slice; nothing outside the block is touched.
  indexed.fill(-1.0f);
  const auto b = indexed.view().block(1, 2, 3, 4, 5, 200);
  coalesce::for_each_index(
      b,
      [b] __device__(std::size_t z, std::size_t y, std::size_t x) { b(z, y, x) = float(z * 1000000 + y * 1000 + x); },
      indexed.stream());
  all = indexed.to_vector();
  for (std::size_t z = 0; z < d; ++z)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) {
        const bool inside = z >= 1 && z < 5 && y >= 2 && y < 7 && x >= 3 && x < 203;
        const float want = inside ? coordinates(z - 1, y - 2, x - 3) : -1.0f;
        if (all[(z * h + y) * w + x] != want) FAIL("block: element " << z << ", " << y << ", " << x);
      }
  CHECK_THROWS_AS(coalesce::for_each(b, twice_plus_one{}), std::invalid_argument);  // cut in y: walk its slices
}

TEST_CASE("for_each over a 256 x 512 x 1000 float volume moves whole rows in 16-byte vectors") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t d = ct::small_problems() ? 4 : 256, h = 512, w = 1000;
  coalesce::pitched_volume<float> v(d, h, w, 1.0f);
  const auto view = v.view();
  const auto run = [view] { coalesce::for_each(view, twice_plus_one{}); };
  run();
  ct::check_sync("for_each over a volume");
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto c = profiler().measure(run);
  const double ideal = 2.0 * double(d * h * w) * sizeof(float);
  std::printf(
      "\nfor_each over a %zu x %zu x %zu float volume: load / store sectors per request %.2f / %.2f, DRAM %.1f MB "
      "(one read and one write of each element: %.1f MB)\n",
      d, h, w, c.load_sectors_per_request(), c.store_sectors_per_request(),
      (c.dram_bytes_read() + c.dram_bytes_write()) / 1e6, ideal / 1e6);
  // Loads read whole 128-byte lines, the rows' padding included: 16 sectors per request. Stores
  // write the elements only: a 4000-byte row is 8 warp stores (7 of 512 bytes, one of 416) and
  // 125 sectors.
  const double row_bytes = double(w * sizeof(float));
  const double store_sectors = std::ceil(row_bytes / 32.0) / std::ceil(row_bytes / 512.0);
  CHECK(c.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(c.store_sectors_per_request() == Approx(store_sectors).epsilon(0.01));
  // Rows of 1000 floats in 4096-byte pitches: the walk reads whole lines, the padding included
  // (2.4% more), and DRAM may add a little more.
  CHECK(c.dram_bytes_read() + c.dram_bytes_write() <= 1.05 * ideal);
}
