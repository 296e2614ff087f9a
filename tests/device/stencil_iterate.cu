// coalesce::stencil<R>(steps, policy, u, v, f), iterated stencils: the result equals `steps` single
// sweeps ping-ponging between the same two matrices, bit for bit, under every boundary policy, for
// radius 1 (5-point, 9-point), 2 (13-point) and 3 (a 13-point star), floats and doubles, shapes
// that are not multiples of the fused walk's tile (1000 x 777, 37 x 5, 1 x n), and 0 to many more
// steps than one pass fuses; it lands in u after an even number of steps and in v after an odd
// one; the fused walk is what ran (its plan leaves an earlier sweep in the other matrix, where
// single sweeps leave the one before the last, and on 8192^2 floats it moves under 0.4 of their
// DRAM bytes, counted by the hardware, and as model::fused_stencil_pass predicts its DRAM bytes
// and L2-to-L1 sectors); misuse is refused before any launch.
#include <coalesce/model_stencils.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "stencils.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_matrix;

namespace {

using coalesce_test::halo_profiler;
using coalesce_test::l2_sectors_read_by_l1;

// The shapes, for floats and doubles (tests/support/stencils.hpp): sums, then one multiply.
template <class T>
using five_point = coalesce_test::five_point_of<T>;
template <class T>
using nine_point = coalesce_test::nine_point_of<T>;
template <class T>
using thirteen_point = coalesce_test::thirteen_point_of<T>;

// Radius 3, the largest the fused walk takes (floats only: a thread's side elements come from one
// neighbouring lane's 16-byte vector, 4 floats or 2 doubles).
template <class T>
struct radius_three_star {
  static constexpr int radius = 3;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return (T(1) / T(13)) * (n(-3, 0) + n(-2, 0) + n(-1, 0) + n(0, -3) + n(0, -2) + n(0, -1) + n(0, 0) + n(0, 1) +
                             n(0, 2) + n(0, 3) + n(1, 0) + n(2, 0) + n(3, 0));
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The first element whose bits differ, for the failure message.
template <class T>
std::string first_difference(const std::vector<T>& result, const std::vector<T>& expected, std::size_t cols) {
  for (std::size_t i = 0; i < result.size(); ++i)
    if (std::memcmp(&result[i], &expected[i], sizeof(T)) != 0)
      return "(" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "): " + std::to_string(result[i]) +
             " != " + std::to_string(expected[i]);
  return "none";
}

// u starts random, v as other values (so that under interior the two borders differ, and which
// one the result's border is shows).
template <class T>
struct start {
  std::vector<T> u, v;
  start(std::size_t rows, std::size_t cols) : u(ct::random_values<T>(rows * cols)), v(rows * cols) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = T(-7) - T(i % 5);
  }
};

// `steps` single sweeps from u, ping-ponging with v; the contents of u and v after them.
template <class Shape, class T, class Policy>
std::pair<std::vector<T>, std::vector<T>> single_sweeps(const Policy& policy, const start<T>& s, std::size_t rows,
                                                        std::size_t cols, std::size_t steps) {
  pitched_matrix<T> u(s.u, rows, cols), v(s.v, rows, cols);
  for (std::size_t step = 0; step < steps; ++step) {
    coalesce::stencil<Shape::radius>(policy, u, v, Shape{});
    u.swap(v);
  }
  // After the loop `u` holds the last sweep; the matrices swapped `steps` times.
  if (steps % 2 == 0) return {u.to_vector(), v.to_vector()};
  return {v.to_vector(), u.to_vector()};
}

// The iterated call against single sweeps: the result in u or v as steps says, bit for bit.
template <class Shape, class T, class Policy>
void check_iterated(const Policy& policy, const char* policy_name, std::size_t rows, std::size_t cols,
                    std::size_t steps, std::size_t fused = 0) {
  const std::size_t k = coalesce::detail::iterated_sweeps_per_pass<Shape::radius, T>(steps, fused, fused != 0);
  INFO(policy_name << ", radius " << Shape::radius << ", " << sizeof(T) << "-byte elements, " << rows << " x " << cols
                   << ", " << steps << " steps, " << (fused ? "coalesce::fuse" : "k chosen") << ", k = " << k);
  const start<T> s(rows, cols);
  const auto expected = single_sweeps<Shape>(policy, s, rows, cols, steps);
  pitched_matrix<T> u(s.u, rows, cols), v(s.v, rows, cols);
  const auto result = fused ? coalesce::stencil<Shape::radius>(steps, policy, u, v, Shape{}, coalesce::fuse{fused})
                            : coalesce::stencil<Shape::radius>(steps, policy, u, v, Shape{});
  ct::check_sync("coalesce::stencil(steps, ...)");
  pitched_matrix<T>& holder = steps % 2 == 0 ? u : v;
  CHECK(result.data() == holder.data());
  const auto got = holder.to_vector();
  const auto& want = steps % 2 == 0 ? expected.first : expected.second;
  if (!same_bits(got, want)) FAIL("the result differs from single sweeps at " << first_difference(got, want, cols));
}

template <class Shape, class T>
void check_every_policy(std::size_t rows, std::size_t cols, std::size_t steps, std::size_t fused = 0) {
  check_iterated<Shape, T>(coalesce::clamp, "clamp", rows, cols, steps, fused);
  check_iterated<Shape, T>(coalesce::periodic, "periodic", rows, cols, steps, fused);
  check_iterated<Shape, T>(coalesce::constant(T(1.5)), "constant(1.5)", rows, cols, steps, fused);
  if (rows > 2 * std::size_t(Shape::radius) && cols > 2 * std::size_t(Shape::radius))
    check_iterated<Shape, T>(coalesce::interior, "interior", rows, cols, steps, fused);
}

template <class T>
void check_every_shape(std::size_t rows, std::size_t cols, std::size_t steps, std::size_t fused = 0) {
  check_every_policy<five_point<T>, T>(rows, cols, steps, fused);
  check_every_policy<nine_point<T>, T>(rows, cols, steps, fused);
  check_every_policy<thirteen_point<T>, T>(rows, cols, steps, fused);
  if (fused == 0) check_every_policy<radius_three_star<T>, T>(rows, cols, steps);
}

// The steps each shape is checked for; on small problems (the quick scope, and compute-sanitizer's
// runs, where racecheck follows every shared-memory access of the fused walk) fewer, on smaller
// matrices below.
std::vector<std::size_t> every_steps() {
  if (ct::small_problems()) return {0, 1, 3, 7};
  return {0, 1, 2, 3, 7, 9, 13};
}

// 2-byte elements, which the fused walk does not take.
struct on_shorts {
  __host__ __device__ std::int16_t operator()(const coalesce::neighbourhood<std::int16_t, 1>& n) const {
    return std::int16_t((n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1)) / 4);
  }
};

}  // namespace

TEST_CASE("the fused walk is what an iterated stencil of floats or doubles at radius 1 and 2 runs") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  namespace d = coalesce::detail;
  CHECK(d::iterated_sweeps_per_pass<1, float>(100, 0, false) == 5);
  CHECK(d::iterated_sweeps_per_pass<2, float>(100, 0, false) == 3);
  CHECK(d::iterated_sweeps_per_pass<3, float>(100, 0, false) == 2);
  CHECK(d::iterated_sweeps_per_pass<1, double>(100, 0, false) == 4);
  CHECK(d::iterated_sweeps_per_pass<2, double>(100, 0, false) == 2);
  CHECK(d::iterated_sweeps_per_pass<1, float>(100, 6, true) == 6);
  CHECK(d::iterated_sweeps_per_pass<1, float>(1, 0, false) == 1);  // one step: the band walk
  CHECK(d::iterated_sweeps_per_pass<1, std::int16_t>(100, 0, false) == 1);
}

TEST_CASE("an iterated stencil equals single sweeps bit for bit on 1000 x 777 under every policy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const bool small = ct::small_problems();
  for (const std::size_t steps : every_steps()) {
    check_every_shape<float>(small ? 200 : 1000, small ? 300 : 777, steps);
    if (!small) check_every_shape<double>(1000, 777, steps);
  }
}

TEST_CASE("an iterated stencil equals single sweeps on shapes smaller than a tile: 37 x 5, 1 x n, n x 1, 3 x 3") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const auto& [rows, cols] :
       {std::pair<std::size_t, std::size_t>{37, 5}, {1, 300}, {300, 1}, {3, 3}, {5, 129}, {2, 1}}) {
    for (const std::size_t steps : every_steps()) {
      check_every_shape<float>(rows, cols, steps);
      if (!ct::small_problems()) check_every_shape<double>(rows, cols, steps);
    }
  }
}

// [no-sanitizer]: half a gigabyte a matrix, which racecheck and initcheck take longer over than
// their run allows; the other cases run the same kernels under them.
TEST_CASE("an iterated stencil equals single sweeps where a block strides down more tiles than a grid holds",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 4,000,000 rows of 3, one pass of 5 sweeps: 74,075 tiles of 54 rows down, more than a grid's
  // 65,535 blocks, so blocks take a second tile (rows padded to 128 bytes: 512 MB a matrix).
  const std::size_t rows = 4000000;
  check_iterated<five_point<float>, float>(coalesce::clamp, "clamp", rows, 3, 5);
  check_iterated<five_point<float>, float>(coalesce::periodic, "periodic", rows, 3, 5);
  check_iterated<nine_point<float>, float>(coalesce::interior, "interior", rows, 3, 5);
}

TEST_CASE("coalesce::fuse sets the sweeps a pass fuses, each k giving the single sweeps' result") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t k : {1, 2, 3, 5, 8}) {
    check_every_policy<five_point<float>, float>(130, 250, 17, k);
    check_every_policy<nine_point<double>, double>(130, 250, 17, k);
  }
  check_every_policy<thirteen_point<float>, float>(130, 250, 11, 3);
  // The most the walk fuses, a tile of 8 rows: two passes of it.
  constexpr std::size_t most = std::size_t(coalesce::detail::fused_geometry<1, 4>::most_sweeps());
  check_every_policy<five_point<float>, float>(70, 200, 2 * most, most);
}

TEST_CASE("many passes: 100 sweeps of the 9-point box equal 100 single sweeps") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const bool small = ct::small_problems();
  check_every_policy<nine_point<float>, float>(small ? 130 : 517, small ? 250 : 1001, small ? 30 : 100);
  check_every_policy<thirteen_point<float>, float>(small ? 130 : 517, small ? 250 : 1001, small ? 30 : 100);
}

TEST_CASE("the fused walk ran: the other matrix holds the sweep its plan left there, not the one before the last") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 7 steps at the chosen k (5) are passes of 3, 2 and 2 sweeps: u -> v (3), v -> u (5), u -> v
  // (7). Single sweeps leave sweep 6 in u; the fused walk leaves sweep 5.
  const std::size_t rows = 300, cols = 500, steps = 7;
  const auto plan = coalesce::detail::plan_fused_passes(steps, coalesce::detail::automatic_fused_sweeps<1, 4>());
  REQUIRE(plan.passes == 3);
  const std::size_t left_in_other = steps - plan.sweeps_of(plan.passes - 1);
  REQUIRE(left_in_other == 5);
  const start<float> s(rows, cols);
  pitched_matrix<float> u(s.u, rows, cols), v(s.v, rows, cols);
  coalesce::stencil<1>(steps, coalesce::clamp, u, v, five_point<float>{});
  const auto fifth = single_sweeps<five_point<float>>(coalesce::clamp, s, rows, cols, left_in_other);
  const auto sixth = single_sweeps<five_point<float>>(coalesce::clamp, s, rows, cols, steps - 1);
  const auto other = u.to_vector();
  CHECK(same_bits(other, fifth.second));  // sweep 5, in v for single sweeps
  CHECK_FALSE(same_bits(other, sixth.first));
}

TEST_CASE("24 fused sweeps on 8192^2 floats move under 0.4 of the DRAM bytes of 24 single sweeps") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 512 : 8192, steps = 24;  // k = 5: 6 passes of 4 sweeps
  const auto values = ct::random_values<float>(n * n);
  pitched_matrix<float> u(values, n, n), v(n, n), a(values, n, n), b(n, n);
  const auto iterated = [&] { coalesce::stencil<1>(steps, coalesce::clamp, u, v, five_point<float>{}); };
  const auto single = [&] {
    for (std::size_t s = 0; s < steps; ++s) {
      coalesce::stencil<1>(coalesce::clamp, a, b, five_point<float>{});
      a.swap(b);
    }
  };
  iterated();
  single();
  ct::check_sync("24 sweeps");
  CHECK(same_bits(u.to_vector(), a.to_vector()));

  COALESCE_REQUIRE_COUNTERS(halo_profiler());
  const auto fused = halo_profiler().measure(iterated);
  const auto one_a_sweep = halo_profiler().measure(single);
  const double fused_bytes = fused.dram_bytes_read() + fused.dram_bytes_write();
  const double single_bytes = one_a_sweep.dram_bytes_read() + one_a_sweep.dram_bytes_write();
  // k = 4: a pass reads 64 x 128 floats and writes 56 x 120 for 4 sweeps, 0.28 of the 8 bytes a
  // float sweep of single sweeps moves; the region's rows start off a sector, so a little more.
  std::printf("\n%zu sweeps of the 5-point stencil on %zu^2 floats: DRAM %.1f MB fused, %.1f MB single sweeps (%.3f)\n",
              steps, n, fused_bytes / 1e6, single_bytes / 1e6, fused_bytes / single_bytes);
  CHECK(fused_bytes < 0.4 * single_bytes);

  // The access model of a pass, times the passes (all of k sweeps here), against the counters.
  using geometry = coalesce::detail::fused_geometry<1, sizeof(float)>;
  const auto plan = coalesce::detail::plan_fused_passes(steps, coalesce::detail::automatic_fused_sweeps<1, 4>());
  REQUIRE(plan.longer == 0);
  const auto pass = coalesce::model::fused_stencil_pass(n, n, 1, sizeof(float), unsigned(plan.sweeps),
                                                        geometry::region_rows, geometry::region_cols);
  const double modelled_bytes = double(plan.passes) * pass.dram_bytes;
  const double measured_l2 = fused[l2_sectors_read_by_l1] / (double(plan.passes) * pass.output_sectors);
  const double modelled_l2 = pass.l2_sectors_read_by_l1 / pass.output_sectors;
  std::printf("fused passes: DRAM %.1f MB, the access model %.1f MB (%.3f); L2 sectors read by L1 per output sector "
              "%.3f, the model %.3f (%.3f)\n",
              fused_bytes / 1e6, modelled_bytes / 1e6, fused_bytes / modelled_bytes, measured_l2, modelled_l2,
              measured_l2 / modelled_l2);
  CHECK(fused_bytes >= 0.95 * modelled_bytes);
  CHECK(fused_bytes <= 1.15 * modelled_bytes);
  CHECK(measured_l2 == Approx(modelled_l2).epsilon(0.1));
}

TEST_CASE("an iterated stencil takes views, containers on a stream, and a stream it is given") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const coalesce::pool_resource on_stream(stream);
    const std::size_t rows = 200, cols = 333, steps = 10;
    const start<float> s(rows, cols);
    const auto expected = single_sweeps<five_point<float>>(coalesce::clamp, s, rows, cols, steps);
    pitched_matrix<float> u(s.u, rows, cols, on_stream), v(s.v, rows, cols, on_stream);
    const auto on_u = coalesce::stencil<1>(steps, u, v, five_point<float>{});  // clamp, u's stream
    CHECK(on_u.data() == u.data());
    CHECK(same_bits(u.to_vector(), expected.first));
    pitched_matrix<float> a(s.u, rows, cols), b(s.v, rows, cols);
    const auto given = coalesce::stencil<1>(steps, coalesce::clamp, a.view(), b.view(), five_point<float>{}, stream);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(given.data() == a.data());
    CHECK(same_bits(a.to_vector(), expected.first));
    pitched_matrix<float> c(s.u, rows, cols), e(s.v, rows, cols);
    coalesce::stencil<1>(steps, c.view(), e.view(), five_point<float>{}, coalesce::fuse{2}, stream);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(same_bits(c.to_vector(), expected.first));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("elements the fused walk does not take are iterated as single sweeps") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 64, cols = 100, steps = 5;
  std::vector<std::int16_t> values(rows * cols), other(rows * cols, 0);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::int16_t(i * 7919 % 4001);
  pitched_matrix<std::int16_t> u(values, rows, cols), v(other, rows, cols), a(values, rows, cols), b(other, rows, cols);
  coalesce::stencil<1>(steps, coalesce::periodic, u, v, on_shorts{});
  for (std::size_t s = 0; s < steps; ++s) {
    coalesce::stencil<1>(coalesce::periodic, a, b, on_shorts{});
    a.swap(b);
  }
  CHECK(v.to_vector() == a.to_vector());
  CHECK_THROWS_AS(coalesce::stencil<1>(steps, coalesce::periodic, u, v, on_shorts{}, coalesce::fuse{2}),
                  std::invalid_argument);
}

TEST_CASE("an iterated stencil refuses other shapes, overlap, interior without an interior and fuse{0}") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  pitched_matrix<float> a(40, 50), b(40, 51), c(40, 50), line(1, 300), line2(1, 300);
  const five_point<float> f;
  std::string message;
  try {
    coalesce::stencil<1>(5, coalesce::clamp, a, b, f);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("40 x 50") != std::string::npos);
  CHECK(message.find("40 x 51") != std::string::npos);
  CHECK_THROWS_AS(coalesce::stencil<1>(5, a.view(), a.view(), f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(5, a.view().block(0, 0, 20, 50), a.view().block(10, 0, 20, 50), f),
                  std::invalid_argument);
  // The checks come first, whatever steps is.
  CHECK_THROWS_AS(coalesce::stencil<1>(0, coalesce::clamp, a, b, f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(0, coalesce::interior, line, line2, f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::interior, line, line2, f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::clamp, a, c, f, coalesce::fuse{0}), std::invalid_argument);
  constexpr std::size_t most = std::size_t(coalesce::detail::fused_geometry<1, 4>::most_sweeps());
  CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::clamp, a, c, f, coalesce::fuse{most + 1}), std::invalid_argument);
  REQUIRE(cudaGetLastError() == cudaSuccess);  // nothing was launched
}
