// coalesce::stencil<R>(steps, policy, u, v, f) on volumes, the fused walk asked for with
// coalesce::fuse (a call without it takes single sweeps for now): the result equals `steps` single
// sweeps ping-ponging between the same two volumes, bit for bit, under every boundary policy, for
// the 7-point star and 27-point box (radius 1) and the 13-point star (radius 2), floats and
// doubles, shapes that are not multiples of the fused walk's tile or chunk (one plane, one row,
// one column, more tiles down than a grid holds), and 0 to many more steps than one pass fuses;
// it lands in u after an even number of steps and in v after an odd one; the fused walk is what
// ran (its plan leaves an earlier sweep in the other volume, and on 512^3 floats it moves under
// half of the single sweeps' DRAM bytes, counted by the hardware, as
// model::fused_volume_stencil_pass predicts them and L2's sectors read by L1); misuse is refused
// before any launch.
#include <coalesce/model_stencils.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_volume;

namespace {

using coalesce_test::halo_profiler;
using coalesce_test::l2_sectors_read_by_l1;

template <class T>
struct seven_point {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return (T(1) / T(7)) *
           (n(0, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(0, -1, 0) + n(0, 1, 0) + n(0, 0, -1) + n(0, 0, 1));
  }
};
template <class T>
struct box {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    T sum = T(0);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) sum += n(dz, dy, dx);
    return (T(1) / T(27)) * sum;
  }
};
template <class T>
struct thirteen_point {
  static constexpr int radius = 2;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return (T(1) / T(13)) *
           (n(0, 0, 0) + n(-2, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(2, 0, 0) + n(0, -2, 0) + n(0, -1, 0) + n(0, 1, 0) +
            n(0, 2, 0) + n(0, 0, -2) + n(0, 0, -1) + n(0, 0, 1) + n(0, 0, 2));
  }
};

struct extent {
  std::size_t depth, height, width;
  std::size_t size() const { return depth * height * width; }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::string first_difference(const std::vector<T>& result, const std::vector<T>& expected, const extent& e) {
  for (std::size_t i = 0; i < result.size(); ++i)
    if (std::memcmp(&result[i], &expected[i], sizeof(T)) != 0)
      return "(" + std::to_string(i / (e.height * e.width)) + ", " + std::to_string(i / e.width % e.height) + ", " +
             std::to_string(i % e.width) + "): " + std::to_string(result[i]) + " != " + std::to_string(expected[i]);
  return "none";
}

// u starts random, v as other values (so that under interior the two borders differ).
template <class T>
struct start {
  std::vector<T> u, v;
  explicit start(const extent& e) : u(ct::random_values<T>(e.size())), v(e.size()) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = T(-7) - T(i % 5);
  }
};

template <class T>
pitched_volume<T> volume_of(const std::vector<T>& values, const extent& e) {
  return pitched_volume<T>(values, e.depth, e.height, e.width);
}

// `steps` single sweeps from u, ping-ponging with v; the contents of u and v after them.
template <class Shape, class T, class Policy>
std::pair<std::vector<T>, std::vector<T>> single_sweeps(const Policy& policy, const start<T>& s, const extent& e,
                                                        std::size_t steps) {
  pitched_volume<T> u = volume_of(s.u, e), v = volume_of(s.v, e);
  for (std::size_t step = 0; step < steps; ++step) {
    coalesce::stencil<Shape::radius>(policy, u, v, Shape{});
    u.swap(v);
  }
  if (steps % 2 == 0) return {u.to_vector(), v.to_vector()};
  return {v.to_vector(), u.to_vector()};
}

template <class Shape, class T, class Policy>
void check_iterated(const Policy& policy, const char* policy_name, const extent& e, std::size_t steps,
                    std::size_t fused = 0) {
  const std::size_t k = coalesce::detail::iterated_volume_sweeps_per_pass<Shape::radius, T>(steps, fused, fused != 0);
  INFO(policy_name << ", radius " << Shape::radius << ", " << sizeof(T) << "-byte elements, " << e.depth << " x "
                   << e.height << " x " << e.width << ", " << steps << " steps, "
                   << (fused ? "coalesce::fuse" : "k chosen") << ", k = " << k);
  const start<T> s(e);
  const auto expected = single_sweeps<Shape>(policy, s, e, steps);
  pitched_volume<T> u = volume_of(s.u, e), v = volume_of(s.v, e);
  const auto result = fused ? coalesce::stencil<Shape::radius>(steps, policy, u, v, Shape{}, coalesce::fuse{fused})
                            : coalesce::stencil<Shape::radius>(steps, policy, u, v, Shape{});
  ct::check_sync("coalesce::stencil(steps, ...) on a volume");
  pitched_volume<T>& holder = steps % 2 == 0 ? u : v;
  CHECK(result.data() == holder.data());
  const auto got = holder.to_vector();
  const auto& want = steps % 2 == 0 ? expected.first : expected.second;
  if (!same_bits(got, want)) FAIL("the result differs from single sweeps at " << first_difference(got, want, e));
}

// The sweeps the access model fuses for Shape on this device: what the fused walk is asked for
// below, since a call without coalesce::fuse takes single sweeps while
// detail::fused_volume_walk_by_default is false (1 where the walk does not take Shape and T).
template <class Shape, class T>
std::size_t model_sweeps() {
  namespace d = coalesce::detail;
  return std::size_t(
      d::automatic_fused_volume_sweeps<Shape::radius, sizeof(T)>(d::opt_in_shared_bytes(d::current_device())));
}

// The sweeps the checks ask for where the caller does not say: the model's, or 2 where the model
// takes single sweeps but the walk takes the shape (radius 2), so that every shape runs fused.
template <class Shape, class T>
std::size_t checked_sweeps() {
  const std::size_t model = model_sweeps<Shape, T>();
  return model == 1 && coalesce::detail::fused_volume_geometry<Shape::radius, sizeof(T)>::supported ? 2 : model;
}

template <class Shape, class T>
void check_every_policy(const extent& e, std::size_t steps, std::size_t fused = 0) {
  if (fused == 0) fused = checked_sweeps<Shape, T>();
  check_iterated<Shape, T>(coalesce::clamp, "clamp", e, steps, fused);
  check_iterated<Shape, T>(coalesce::periodic, "periodic", e, steps, fused);
  check_iterated<Shape, T>(coalesce::constant(T(1.5)), "constant(1.5)", e, steps, fused);
  const std::size_t r2 = 2 * std::size_t(Shape::radius);
  if (e.depth > r2 && e.height > r2 && e.width > r2)
    check_iterated<Shape, T>(coalesce::interior, "interior", e, steps, fused);
}

template <class T>
void check_every_shape(const extent& e, std::size_t steps, std::size_t fused = 0) {
  check_every_policy<seven_point<T>, T>(e, steps, fused);
  check_every_policy<box<T>, T>(e, steps, fused);
  check_every_policy<thirteen_point<T>, T>(e, steps, fused);
}

// The steps each shape is checked for. On small problems (the quick scope, and compute-sanitizer's
// runs) fewer, and smaller volumes below: racecheck follows every shared-memory access of the
// fused walk, and ran past 75 seconds on the second case at full size.
std::vector<std::size_t> every_steps() {
  if (ct::small_problems()) return {0, 1, 3, 7};
  return {0, 1, 2, 3, 7, 9};
}

}  // namespace

TEST_CASE("which walk an iterated stencil on a volume takes: single sweeps unless coalesce::fuse asks") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  namespace d = coalesce::detail;
  const std::size_t shared = d::opt_in_shared_bytes(d::current_device());
  INFO("the device's blocks may opt into " << shared / 1024 << " KiB");
  if (shared >= 2 * 96 * 1024) {  // an H100 or H200: the model fuses 4 sweeps at radius 1, none at 2
    CHECK(model_sweeps<seven_point<float>, float>() == 4);
    CHECK(model_sweeps<thirteen_point<float>, float>() == 1);
    CHECK(checked_sweeps<thirteen_point<float>, float>() == 2);
  }
  const std::size_t chosen = d::fused_volume_walk_by_default ? model_sweeps<seven_point<float>, float>() : 1;
  CHECK(d::iterated_volume_sweeps_per_pass<1, float>(100, 0, false) == chosen);
  CHECK(d::iterated_volume_sweeps_per_pass<1, float>(1, 0, false) == 1);  // one step: single sweeps
  CHECK(d::iterated_volume_sweeps_per_pass<3, float>(100, 0, false) == 1);
  CHECK(d::iterated_volume_sweeps_per_pass<1, float>(100, 2, true) == 2);
  CHECK(d::iterated_volume_sweeps_per_pass<1, float>(1, 2, true) == 1);
}

TEST_CASE("an iterated stencil on a volume equals single sweeps bit for bit on 70 x 100 x 130 under every policy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // Several tiles across and down, several chunks along z (40 x 30 x 70 on small problems: still
  // two tiles across and two down at k = 3).
  const extent e = ct::small_problems() ? extent{40, 30, 70} : extent{70, 100, 130};
  for (const std::size_t steps : every_steps()) {
    check_every_shape<float>(e, steps);
    if (!ct::small_problems()) check_every_shape<double>(e, steps);
  }
}

TEST_CASE("an iterated stencil on a volume equals single sweeps on shapes smaller than a tile or a chunk") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const extent& e : {extent{1, 40, 50}, extent{5, 3, 200}, extent{33, 7, 5}, extent{200, 1, 1}, extent{3, 3, 3},
                          extent{17, 40, 1}}) {
    for (const std::size_t steps : every_steps()) {
      check_every_shape<float>(e, steps);
      if (!ct::small_problems()) check_every_shape<double>(e, steps);
    }
  }
}

// [no-sanitizer]: half a gigabyte a matrix, which racecheck and initcheck take longer over than
// their run allows; the other cases run the same kernels under them.
TEST_CASE("an iterated stencil on a volume equals single sweeps where blocks stride down more tiles than a grid holds",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 1,800,000 rows of 3 in 2 planes: 69,231 tiles of 26 rows down, more than a grid's 65,535
  // (rows padded to 128 bytes: 461 MB a volume).
  const extent e{2, 1800000, 3};
  const std::size_t k = checked_sweeps<seven_point<float>, float>();
  check_iterated<seven_point<float>, float>(coalesce::clamp, "clamp", e, 5, k);
  check_iterated<seven_point<float>, float>(coalesce::periodic, "periodic", e, 5, k);
}

TEST_CASE("coalesce::fuse sets the sweeps a volume pass fuses, each k giving the single sweeps' result") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const bool small = ct::small_problems();
  const extent e = small ? extent{20, 30, 70} : extent{40, 45, 150};
  for (const std::size_t k : {1, 2, 3, 4}) {
    if (small && (k == 1 || k == 4)) continue;
    check_every_policy<seven_point<float>, float>(e, small ? 7 : 13, k);
    check_every_policy<box<double>, double>(e, small ? 7 : 13, k);
  }
  check_every_policy<thirteen_point<float>, float>(e, small ? 5 : 11, 2);
}

TEST_CASE("many volume passes: 60 sweeps of the 7-point star equal 60 single sweeps") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const extent e = ct::small_problems() ? extent{20, 30, 70} : extent{67, 61, 203};
  const std::size_t steps = ct::small_problems() ? 12 : 60;
  check_every_policy<seven_point<float>, float>(e, steps);
  check_every_policy<thirteen_point<float>, float>(e, steps);
}

TEST_CASE("the fused volume walk ran: the other volume holds the sweep its plan left there") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 7 steps of k = 3 are passes of 3, 2 and 2 sweeps: u -> v (3), v -> u (5), u -> v (7). Single
  // sweeps leave sweep 6 in u; the fused walk leaves sweep 5.
  const extent e{40, 50, 60};
  const std::size_t steps = 7;
  const auto plan = coalesce::detail::plan_fused_passes(steps, 3);
  REQUIRE(plan.passes == 3);
  const std::size_t left_in_other = steps - plan.sweeps_of(plan.passes - 1);
  REQUIRE(left_in_other == 5);
  const start<float> s(e);
  pitched_volume<float> u = volume_of(s.u, e), v = volume_of(s.v, e);
  coalesce::stencil<1>(steps, coalesce::clamp, u, v, seven_point<float>{}, coalesce::fuse{3});
  const auto fifth = single_sweeps<seven_point<float>>(coalesce::clamp, s, e, left_in_other);
  const auto sixth = single_sweeps<seven_point<float>>(coalesce::clamp, s, e, steps - 1);
  const auto other = u.to_vector();
  CHECK(same_bits(other, fifth.second));
  CHECK_FALSE(same_bits(other, sixth.first));
}

TEST_CASE("24 fused sweeps on 512^3 floats move under half the DRAM bytes of 24 single sweeps") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 128 : 512, steps = 24;
  const auto values = ct::random_values<float>(n * n * n);
  pitched_volume<float> u(values, n, n, n), v(n, n, n), a(values, n, n, n), b(n, n, n);
  const std::size_t k = model_sweeps<seven_point<float>, float>();
  REQUIRE(k > 1);
  const auto iterated = [&] {
    coalesce::stencil<1>(steps, coalesce::clamp, u, v, seven_point<float>{}, coalesce::fuse{k});
  };
  const auto single = [&] {
    for (std::size_t s = 0; s < steps; ++s) {
      coalesce::stencil<1>(coalesce::clamp, a, b, seven_point<float>{});
      a.swap(b);
    }
  };
  iterated();
  single();
  ct::check_sync("24 sweeps on a volume");
  CHECK(same_bits(u.to_vector(), a.to_vector()));

  COALESCE_REQUIRE_COUNTERS(halo_profiler());
  const auto fused = halo_profiler().measure(iterated);
  const auto one_a_sweep = halo_profiler().measure(single);
  const double fused_bytes = fused.dram_bytes_read() + fused.dram_bytes_write();
  const double single_bytes = one_a_sweep.dram_bytes_read() + one_a_sweep.dram_bytes_write();
  // k = 4: a pass reads each plane's 32 x 32 region (and 8 planes beyond each 64-plane chunk; its
  // rows start off a sector) and writes its 24 x 24 tile for 4 sweeps: about 0.45 of single
  // sweeps' bytes where no halo is found in L2.
  std::printf("\n%zu sweeps of the 7-point stencil on %zu^3 floats: DRAM %.1f MB fused, %.1f MB single sweeps "
              "(%.3f)\n",
              steps, n, fused_bytes / 1e6, single_bytes / 1e6, fused_bytes / single_bytes);
  CHECK(fused_bytes < 0.5 * single_bytes);

  // The access model of a pass, times the passes (all of k sweeps here), against the counters.
  namespace d = coalesce::detail;
  using geometry = d::fused_volume_geometry<1, sizeof(float)>;
  const auto plan = d::plan_fused_passes(steps, k);
  REQUIRE(plan.longer == 0);
  const int chunk = d::fused_volume_chunk_planes<1, float>(n, n, n, int(k));
  const auto pass = coalesce::model::fused_volume_stencil_pass(
      n, n, n, 1, sizeof(float), unsigned(plan.sweeps), geometry::region_rows, geometry::region_cols, unsigned(chunk));
  const double modelled_bytes = double(plan.passes) * pass.dram_bytes;
  const double measured_l2 = fused[l2_sectors_read_by_l1] / (double(plan.passes) * pass.output_sectors);
  const double modelled_l2 = pass.l2_sectors_read_by_l1 / pass.output_sectors;
  std::printf("fused passes (k = %zu, chunks of %d planes): DRAM %.1f MB, the access model %.1f MB (%.3f); L2 "
              "sectors read by L1 per output sector %.3f, the model %.3f (%.3f)\n",
              k, chunk, fused_bytes / 1e6, modelled_bytes / 1e6, fused_bytes / modelled_bytes, measured_l2, modelled_l2,
              measured_l2 / modelled_l2);
  CHECK(fused_bytes >= 0.95 * modelled_bytes);
  CHECK(fused_bytes <= 1.15 * modelled_bytes);
  CHECK(measured_l2 == Approx(modelled_l2).epsilon(0.1));
}

TEST_CASE("an iterated stencil on volumes takes containers on a stream and refuses misuse before any launch") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const coalesce::pool_resource on_stream(stream);
    const extent e{30, 40, 50};
    const std::size_t steps = 10;
    const start<float> s(e);
    const auto expected = single_sweeps<seven_point<float>>(coalesce::clamp, s, e, steps);
    pitched_volume<float> u(s.u, e.depth, e.height, e.width, on_stream), v(s.v, e.depth, e.height, e.width, on_stream);
    const auto on_u = coalesce::stencil<1>(steps, u, v, seven_point<float>{});  // clamp, u's stream
    CHECK(on_u.data() == u.data());
    CHECK(same_bits(u.to_vector(), expected.first));
    pitched_volume<float> a = volume_of(s.u, e), b = volume_of(s.v, e);
    coalesce::stencil<1>(steps, coalesce::clamp, a.view(), b.view(), seven_point<float>{}, coalesce::fuse{2}, stream);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(same_bits(a.to_vector(), expected.first));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));

  pitched_volume<float> a(10, 20, 30), b(10, 20, 31), c(10, 20, 30), thin(2, 20, 30), thin2(2, 20, 30);
  const seven_point<float> f;
  CHECK_THROWS_AS(coalesce::stencil<1>(5, coalesce::clamp, a, b, f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(5, a.view(), a.view(), f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(0, coalesce::interior, thin, thin2, f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::clamp, a, c, f, coalesce::fuse{0}), std::invalid_argument);
  constexpr std::size_t most = std::size_t(coalesce::detail::fused_volume_geometry<1, 4>::most_sweeps());
  CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::clamp, a, c, f, coalesce::fuse{most + 1}), std::invalid_argument);
  // A k whose rings need more shared memory than the device gives a block is refused.
  const std::size_t shared = coalesce::detail::opt_in_shared_bytes(coalesce::detail::current_device());
  const std::size_t fitting = shared / coalesce::detail::fused_volume_geometry<1, 4>::shared_bytes(1);
  if (fitting + 1 <= most)
    CHECK_THROWS_AS(coalesce::stencil<1>(9, coalesce::clamp, a, c, f, coalesce::fuse{fitting + 1}),
                    std::invalid_argument);
  REQUIRE(cudaGetLastError() == cudaSuccess);  // nothing was launched
}
