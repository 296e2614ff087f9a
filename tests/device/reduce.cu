// coalesce::transform_reduce on a soa_view, a span, a pitched_view and containers: results equal
// a host reference (exactly for integers; to the last bits for double sums, whose order CUB
// chooses), the device-result overload waits for nothing, and a user's earlier error is reported
// as earlier.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "fallbacks.hpp"
#include "particles.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::kinetic_energy;
using coalesce_test::plus;
using coalesce_test::profiler;
using coalesce_test::random_particles;

namespace {

struct maximum {
  __host__ __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
};
struct minimum {
  __host__ __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a < b ? a : b; }
};

}  // namespace

TEST_CASE(
    "transform_reduce sums kinetic energy over a soa_view, counts over a container, and reduces spans and pitched views") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 100003 : (std::size_t(1) << 22) + 17;
  const auto particles = random_particles(n);
  const coalesce::soa_vector<Particle> v(particles);

  double expected = 0.0;
  std::uint64_t moving_right = 0;
  for (const auto& p : particles) {
    expected += kinetic_energy{}(p);
    moving_right += p.vx > 0.0f ? 1 : 0;
  }
  const double energy = coalesce::transform_reduce(v.view(), kinetic_energy{}, 0.0, plus{});
  CHECK(energy == Approx(expected).epsilon(1e-12));
  const auto right = coalesce::transform_reduce(
      v, [] __device__(auto p) { return p.vx > 0.0f ? std::uint64_t(1) : std::uint64_t(0); }, std::uint64_t(0), plus{});
  CHECK(right == moving_right);

  std::vector<std::int32_t> values(n);
  std::int64_t sum = 0;
  std::int32_t largest = -1;
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = std::int32_t((i * 2654435761u) % 1000003);
    sum += values[i];
    largest = values[i] > largest ? values[i] : largest;
  }
  ct::device_buffer<std::int32_t> column(values);
  const cuda::std::span<const std::int32_t> s(column.data(), n);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(0), plus{}) == sum);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return x; }, std::int32_t(-1), maximum{}) == largest);

  // A pitched view: elements only, never the rows' padding (which holds zeros, and -1 here would show).
  const std::size_t rows = 1001, cols = 333;
  std::vector<std::int32_t> dense(rows * cols);
  std::int64_t dense_sum = 0;
  for (std::size_t i = 0; i < dense.size(); ++i) dense_sum += (dense[i] = std::int32_t(i % 7) - 3);
  const coalesce::pitched_matrix<std::int32_t> m(dense, rows, cols);
  CHECK(coalesce::transform_reduce(
            m, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(0), plus{}) == dense_sum);
  CHECK(coalesce::transform_reduce(
            m.view().block(1, 1, 2, 2), [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(100),
            plus{}) == 100 + dense[cols + 1] + dense[cols + 2] + dense[2 * cols + 1] + dense[2 * cols + 2]);
}

TEST_CASE("transform_reduce into device memory is ordered on the stream and waits for nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100000;
  const auto particles = random_particles(n);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const coalesce::soa_vector<Particle> v(particles, coalesce::pool_resource(stream));
    ct::device_buffer<double> result(1);
    coalesce::transform_reduce(v.view(), kinetic_energy{}, 0.0, plus{}, result.data(), stream);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    double expected = 0.0;
    for (const auto& p : particles) expected += kinetic_energy{}(p);
    CHECK(result.download()[0] == Approx(expected).epsilon(1e-12));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE(
    "transform_reduce is exact at every position: heads and tails off alignment, columns that never align alike, tiny and empty views") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  std::vector<std::int32_t> values(n + 8);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::int32_t((i * 2654435761u) % 1000003) - 500000;
  ct::device_buffer<std::int32_t> column(values);
  const auto widen = [] __device__(std::int32_t x) { return std::int64_t(x); };
  const auto host_sum = [&](std::size_t first, std::size_t count) {
    std::int64_t sum = 0;
    for (std::size_t i = first; i < first + count; ++i) sum += values[i];
    return sum;
  };
  // From the first to the fourth element of a 16-byte unit: heads of 0 to 3 elements, tails too.
  for (std::size_t first = 0; first < 4; ++first)
    for (const std::size_t count :
         {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(5), std::size_t(1029), n}) {
      const cuda::std::span<const std::int32_t> s(column.data() + first, count);
      const auto got = coalesce::transform_reduce(s, widen, std::int64_t(7), plus{});
      if (got != 7 + host_sum(first, count)) FAIL("span of " << count << " from element " << first << ": " << got);
      // The minimum of positive values, which no default-constructed partial (0) may enter: the
      // threads and blocks without elements must stay out of it, however few the elements.
      std::int32_t smallest = 2000000;
      for (std::size_t i = first; i < first + count; ++i)
        smallest = values[i] + 600000 < smallest ? values[i] + 600000 : smallest;
      const auto lowest = coalesce::transform_reduce(
          s, [] __device__(std::int32_t x) { return x + 600000; }, std::int32_t(2000000), minimum{});
      if (lowest != smallest) FAIL("minimum of a span of " << count << " from element " << first << ": " << lowest);
    }

  // Columns 4 bytes apart in alignment: no chunk starts at the same element in all of them, so
  // the walk is element by element.
  const auto particles = random_particles(n + 2);
  coalesce::soa_vector<Particle> v(particles);
  auto columns = v.view().columns();
  for (std::size_t k = 0; k < columns.size(); ++k) columns[k] = static_cast<float*>(columns[k]) + (k % 2 == 0 ? 1 : 2);
  const coalesce::soa_view<Particle> skewed(columns, n);
  double expected = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    // Element i of the skewed view: the even columns (x, z, vy) from particle i + 1, the odd from i + 2.
    Particle p{};
    p.vx = particles[i + 2].vx;
    p.vy = particles[i + 1].vy;
    p.vz = particles[i + 2].vz;
    expected += kinetic_energy{}(p);
  }
  CHECK(coalesce::transform_reduce(skewed, kinetic_energy{}, 0.0, plus{}) == Approx(expected).epsilon(1e-12));
}

TEST_CASE(
    "transform_reduce over 12-byte columns kept whole: the walk that stages a warp's chunks, partial warps, tails") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using coalesce_test::fallbacks::Body;
  // Body's Vec3f columns are kept whole: a chunk of 4 elements is 48 bytes of each, which a warp
  // loads together (the columns' warp_staged walk). Sizes with a lone chunk, a partial last warp
  // and a tail of one to three elements.
  for (const std::size_t n :
       {std::size_t(3), std::size_t(5), std::size_t(131), std::size_t(1029), std::size_t(100003)}) {
    const auto bodies = coalesce_test::fallbacks::random_bodies(n);
    const coalesce::soa_vector<Body> v(bodies);
    double expected = 0.0;
    float lowest = 1e30f;
    for (const auto& b : bodies) {
      expected += double(b.pos.x) * b.mass + double(b.vel.z);
      const float m = b.mass + 2.0f;  // positive: a default partial of 0 would show
      lowest = m < lowest ? m : lowest;
    }
    const double got = coalesce::transform_reduce(
        v.view(), [] __device__(auto b) { return double(b.pos.x) * b.mass + double(b.vel.z); }, 0.0, plus{});
    CHECK(got == Approx(expected).epsilon(1e-12));
    const float smallest = coalesce::transform_reduce(
        v.view(), [] __device__(auto b) { return b.mass + 2.0f; }, 1e30f,
        [] __host__ __device__(float a, float b) { return a < b ? a : b; });
    if (smallest != lowest) FAIL(n << " bodies: minimum " << smallest << " against " << lowest);
  }
}

TEST_CASE("transform_reduce reads the columns f uses in 16-byte accesses, each byte once (hardware counters)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 4096 : std::size_t(1) << 24;  // 3 used columns: 192 MiB, 3x the L2
  const coalesce::soa_vector<Particle> v(random_particles(n));
  ct::device_buffer<double> result(1);
  const auto run = [&] { coalesce::transform_reduce(v.view(), kinetic_energy{}, 0.0, plus{}, result.data(), 0); };
  run();
  ct::check_sync();
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto c = profiler().measure(run);
  const double used_bytes = 3.0 * double(n) * sizeof(float);
  std::printf("\ntransform_reduce, kinetic energy of %zu particles: load sectors per request %.2f, DRAM read %.1f MB "
              "(the 3 velocity columns: %.1f MB; all 6: %.1f MB)\n",
              n, c.load_sectors_per_request(), c.dram_bytes_read() / 1e6, used_bytes / 1e6, 2 * used_bytes / 1e6);
  CHECK(c.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  // At most the three columns f reads (and the blocks' partials): the position columns stay unread.
  CHECK(c.dram_bytes_read() <= 1.03 * used_bytes);
  CHECK(c.dram_bytes_read() >= 0.5 * used_bytes);
}
