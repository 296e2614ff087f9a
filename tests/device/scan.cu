// coalesce's scans: over columns (in place too), and over f of a soa_view's or a pitched view's
// elements, against host scans: exact for integers. Sizes that are not a multiple of anything,
// empty ranges, and mismatched sizes, which throw before any launch.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/scan.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/functional>
#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "particles.hpp"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::random_particles;

namespace {

struct larger {
  __host__ __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
};

std::vector<std::int32_t> pseudo_random(std::size_t n) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::int32_t((i * 2654435761u) % 2001) - 1000;
  return v;
}

}  // namespace

TEST_CASE("inclusive and exclusive scans of a column equal the host's, in place too, with any associative op") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(ct::small_problems() ? 100003 : 3000017)}) {
    const auto values = pseudo_random(n);
    ct::device_buffer<std::int32_t> in(values);
    ct::device_buffer<std::int64_t> out(n > 0 ? n : 1);
    const cuda::std::span<const std::int32_t> column(in.data(), n);
    const cuda::std::span<std::int64_t> sums(out.data(), n);

    coalesce::inclusive_scan(column, sums);
    ct::check_sync();
    if (n == 0) {  // nothing to compare (the buffer's one element is never written): nothing may fail
      coalesce::exclusive_scan(column, sums, 5);
      coalesce::inclusive_scan(cuda::std::span<std::int32_t>(in.data(), 0), cuda::std::span<std::int32_t>(in.data(), 0),
                               larger{}, 0);
      ct::check_sync();
      continue;
    }
    std::vector<std::int64_t> got = out.download();
    std::int64_t running = 0;
    for (std::size_t i = 0; i < n; ++i) {
      running += values[i];
      if (got[i] != running) FAIL("inclusive sum " << i << " of " << n << ": " << got[i] << ", host " << running);
    }

    coalesce::exclusive_scan(column, sums, 5);
    ct::check_sync();
    got = out.download();
    running = 5;
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != running) FAIL("exclusive sum " << i << " of " << n << ": " << got[i] << ", host " << running);
      running += values[i];
    }

    // In place, with a running maximum.
    const cuda::std::span<std::int32_t> both(in.data(), n);
    coalesce::inclusive_scan(both, both, larger{}, 0);
    ct::check_sync();
    const auto maxima = in.download();
    std::int32_t best = n > 0 ? values[0] : 0;
    for (std::size_t i = 0; i < n; ++i) {
      best = values[i] > best ? values[i] : best;
      if (maxima[i] != best) FAIL("running maximum " << i << " of " << n << ": " << maxima[i] << ", host " << best);
    }
  }
}

TEST_CASE("transform scans of a soa_view and of a pitched view: the offsets of a binning, in row-major order") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto particles = random_particles(n);
  const coalesce::soa_vector<Particle> v(particles);
  ct::device_buffer<std::uint32_t> offsets(n);
  const cuda::std::span<std::uint32_t> out(offsets.data(), n);
  // Where each particle moving right goes in a packed list of them.
  coalesce::transform_exclusive_scan(
      v.view(), out, [] __device__(auto p) { return p.vx > 0.0f ? 1u : 0u; }, 0u, cuda::std::plus<>{});
  ct::check_sync();
  auto got = offsets.download();
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] != count) FAIL("offset " << i << ": " << got[i] << ", host " << count);
    count += particles[i].vx > 0.0f ? 1u : 0u;
  }

  const std::size_t rows = 301, cols = 333;
  std::vector<std::int32_t> dense(rows * cols);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = std::int32_t(i % 7);
  const coalesce::pitched_matrix<std::int32_t> m(dense, rows, cols);
  ct::device_buffer<std::uint32_t> flat(rows * cols);
  coalesce::transform_inclusive_scan(
      m.view(), cuda::std::span<std::uint32_t>(flat.data(), rows * cols),
      [] __device__(std::int32_t x) { return std::uint32_t(x); }, cuda::std::plus<>{});
  ct::check_sync();
  got = flat.download();
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < dense.size(); ++i) {
    sum += std::uint32_t(dense[i]);  // row after row, elements only: no row padding in between
    if (got[i] != sum) FAIL("pitched inclusive sum " << i << ": " << got[i] << ", host " << sum);
  }
}

TEST_CASE("scans of mismatched sizes throw before any launch") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  ct::device_buffer<std::int32_t> in(10);
  ct::device_buffer<std::int32_t> out(9);
  const cuda::std::span<const std::int32_t> a(in.data(), 10);
  const cuda::std::span<std::int32_t> b(out.data(), 9);
  CHECK_THROWS_AS(coalesce::inclusive_scan(a, b), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::exclusive_scan(a, b, 0), std::invalid_argument);
  ct::check_sync();
}
