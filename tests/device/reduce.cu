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
#include "particles.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::kinetic_energy;
using coalesce_test::plus;
using coalesce_test::random_particles;

namespace {

struct maximum {
  __host__ __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
};

}  // namespace

TEST_CASE("transform_reduce sums kinetic energy over a soa_view, counts over a container, and reduces spans and pitched views") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::under_sanitizer() ? 100003 : (std::size_t(1) << 22) + 17;
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
  CHECK(coalesce::transform_reduce(s, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(0), plus{}) == sum);
  CHECK(coalesce::transform_reduce(s, [] __device__(std::int32_t x) { return x; }, std::int32_t(-1), maximum{}) == largest);

  // A pitched view: elements only, never the rows' padding (which holds zeros, and -1 here would show).
  const std::size_t rows = 1001, cols = 333;
  std::vector<std::int32_t> dense(rows * cols);
  std::int64_t dense_sum = 0;
  for (std::size_t i = 0; i < dense.size(); ++i) dense_sum += (dense[i] = std::int32_t(i % 7) - 3);
  const coalesce::pitched_matrix<std::int32_t> m(dense, rows, cols);
  CHECK(coalesce::transform_reduce(m, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(0), plus{}) == dense_sum);
  CHECK(coalesce::transform_reduce(m.view().block(1, 1, 2, 2), [] __device__(std::int32_t x) { return std::int64_t(x); },
                                   std::int64_t(100), plus{}) == 100 + dense[cols + 1] + dense[cols + 2] + dense[2 * cols + 1] +
                                                                     dense[2 * cols + 2]);
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
