// coalesce::stencil on the device: equal to a host reference for radius 1 and 2 under every
// boundary policy, with two inputs, other element types and sizes, odd shapes and sub-blocks;
// misuse is refused before any launch; and on 8192^2 and 200000 x 1000 floats it is measured
// with counters (sectors per request, DRAM bytes against one read and one write) and against
// cudaMemcpy and the hand-written stencils of competitors.hpp in the same process. Volumes: the
// 7-point and 25-point stencils equal a host reference under every policy, with two inputs and
// through the element walk, and on 512^3 floats are held to floors under their measured figures.
#include <coalesce/model_stencils.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "stencils.hpp"
#include "targets.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_matrix;
using coalesce::pitched_volume;
using coalesce_test::five_point;
using coalesce_test::nine_point;
using coalesce_test::reference_stencil;
using coalesce_test::reference_volume_stencil;
using coalesce_test::seven_point;
using coalesce_test::thirteen_point;
using coalesce_test::twenty_five_point;

namespace {

// Outputs start as this (not zero), so that interior's untouched edge is seen to be untouched.
constexpr float untouched = -7.0f;

using coalesce_test::halo_profiler;
using coalesce_test::l2_sectors_read_by_l1;

// Calls `call`, which must throw std::invalid_argument naming interior and `shape`.
template <class Call>
void check_refused_as_too_small(const Call& call, const std::string& shape) {
  try {
    call();
    FAIL("a stencil under interior on " << shape << " elements did not throw");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("coalesce::interior") != std::string::npos);
    CHECK(what.find("the output is " + shape + " elements") != std::string::npos);
  }
}

// Runs shape S under `policy` on a rows x cols matrix of random floats and compares every element
// with the host reference (under interior on a shape with no interior element: the refusal).
template <class Shape, class Policy>
void check_shape(const Policy& policy, std::size_t rows, std::size_t cols, const char* policy_name) {
  INFO(policy_name << ", radius " << Shape::radius << ", " << rows << " x " << cols);
  const auto values = ct::random_values<float>(rows * cols);
  pitched_matrix<float> in(values, rows, cols), out(rows, cols, untouched);
  if constexpr (std::is_same_v<Policy, coalesce::interior_t>) {
    if (rows <= std::size_t(2 * Shape::radius) || cols <= std::size_t(2 * Shape::radius)) {
      // No element is interior: refused, naming the shape and the policy, and nothing written.
      check_refused_as_too_small(
          [&] { coalesce::stencil<Shape::radius>(policy, in, out, [] __device__(auto n) { return Shape{}(n); }); },
          std::to_string(rows) + " x " + std::to_string(cols));
      const auto result = out.to_vector();
      CHECK(std::count(result.begin(), result.end(), untouched) == std::ptrdiff_t(result.size()));
      return;
    }
  }
  coalesce::stencil<Shape::radius>(policy, in, out, [] __device__(auto n) { return Shape{}(n); });
  std::vector<float> expected(rows * cols, untouched);
  reference_stencil<Shape::radius>(policy, rows, cols, expected, Shape{}, values);
  const auto result = out.to_vector();
  for (std::size_t i = 0; i < result.size(); ++i)
    if (result[i] != expected[i])
      FAIL("mismatch at (" << i / cols << ", " << i % cols << "): " << result[i] << " != " << expected[i]);
}

template <class Shape>
void check_every_policy(std::size_t rows, std::size_t cols) {
  check_shape<Shape>(coalesce::clamp, rows, cols, "clamp");
  check_shape<Shape>(coalesce::periodic, rows, cols, "periodic");
  check_shape<Shape>(coalesce::constant(1.5f), rows, cols, "constant(1.5f)");
  check_shape<Shape>(coalesce::interior, rows, cols, "interior");
}

struct three_floats {
  float a, b, c;
};

// What the type tests compute; additions only, so that nvcc has nothing to contract into a fused
// multiply-add that the host would round differently.
struct two_inputs {
  template <class A, class B>
  __host__ __device__ double operator()(const A& a, const B& b) const {
    return double(a(0, 0)) + double(b(-1, 1)) - double(b(1, -1)) + double(a.template at<0, 1>());
  }
};
struct on_bytes {
  template <class N>
  __host__ __device__ int operator()(const N& n) const {
    return int(n(-2, 2)) + int(n(0, 0)) - int(n(2, -1));
  }
};
struct on_shorts {
  template <class N>
  __host__ __device__ int operator()(const N& n) const {
    return int(n(-1, -1)) - int(n(1, 1));
  }
};
struct on_doubles {
  template <class N>
  __host__ __device__ int operator()(const N& n) const {
    return int(n(0, -2) + n(0, 2) + n(-2, 0));
  }
};
struct on_structs {
  template <class N>
  __host__ __device__ int operator()(const N& n) const {
    return int(n(0, 1).a + n(-1, 0).c - n(1, -1).b);
  }
};

}  // namespace

TEST_CASE("stencil equals the host reference for radius 1 and 2 under every boundary policy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 1001 columns: the last vector of each row partial (one element); 517 rows, a prime's
  // neighbour: no shape the walk could have assumed.
  check_every_policy<five_point>(517, 1001);
  check_every_policy<nine_point>(517, 1001);
  check_every_policy<thirteen_point>(517, 1001);
  check_every_policy<five_point>(300, 1024);
  check_every_policy<thirteen_point>(300, 1024);
}

TEST_CASE("stencil handles shapes smaller than its walk: one row, fewer rows than a band, 3 x 5, 1 x 1") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const auto& [rows, cols] :
       {std::pair<std::size_t, std::size_t>{1, 1000}, {20, 300}, {3, 5}, {1, 1}, {2, 3}, {5, 129}}) {
    check_every_policy<five_point>(rows, cols);
    check_every_policy<nine_point>(rows, cols);
    check_every_policy<thirteen_point>(rows, cols);
  }
}

TEST_CASE("stencil takes two inputs of one shape and writes another element type") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 130, cols = 517;
  const auto u_values = ct::random_values<float>(rows * cols);
  const auto v_values = ct::random_values<float>(rows * cols, ct::test_seed() + 1);
  pitched_matrix<float> u(u_values, rows, cols), v(v_values, rows, cols);
  pitched_matrix<double> out(rows, cols);
  const two_inputs f;
  coalesce::stencil<1>(coalesce::periodic, coalesce::inputs(u, v.view()), out, f);
  std::vector<double> expected(rows * cols);
  reference_stencil<1>(coalesce::periodic, rows, cols, expected, f, u_values, v_values);
  REQUIRE(out.to_vector() == expected);
}

TEST_CASE("stencil reads elements of 1, 2 and 8 bytes in vectors and other sizes one element per thread") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 77, cols = 301;
  std::vector<std::uint8_t> bytes(rows * cols);
  std::vector<std::int16_t> shorts(rows * cols);
  std::vector<double> doubles(rows * cols);
  std::vector<three_floats> structs(rows * cols);
  for (std::size_t i = 0; i < rows * cols; ++i) {
    bytes[i] = std::uint8_t(i * 37 % 251);
    shorts[i] = std::int16_t(int(i * 7919 % 65521) - 32760);
    doubles[i] = double(i % 1013) * 0.25;
    structs[i] = {float(i % 97), float(i % 89), float(i % 83)};
  }
  pitched_matrix<std::uint8_t> b(bytes, rows, cols);
  pitched_matrix<std::int16_t> s(shorts, rows, cols);
  pitched_matrix<double> d(doubles, rows, cols);
  pitched_matrix<three_floats> t(structs, rows, cols);
  pitched_matrix<int> out(rows, cols);

  const on_bytes bytes_f;
  coalesce::stencil<2>(coalesce::clamp, b, out, bytes_f);
  std::vector<int> expected(rows * cols);
  reference_stencil<2>(coalesce::clamp, rows, cols, expected, bytes_f, bytes);
  CHECK(out.to_vector() == expected);

  const on_shorts shorts_f;
  coalesce::stencil<1>(coalesce::constant(std::int16_t(5)), s, out, shorts_f);
  reference_stencil<1>(coalesce::constant(std::int16_t(5)), rows, cols, expected, shorts_f, shorts);
  CHECK(out.to_vector() == expected);

  const on_doubles doubles_f;
  coalesce::stencil<2>(coalesce::periodic, d, out, doubles_f);
  reference_stencil<2>(coalesce::periodic, rows, cols, expected, doubles_f, doubles);
  CHECK(out.to_vector() == expected);

  // 12-byte elements: the element walk.
  const on_structs structs_f;
  coalesce::stencil<1>(coalesce::clamp, t, out, structs_f);
  reference_stencil<1>(coalesce::clamp, rows, cols, expected, structs_f, structs);
  CHECK(out.to_vector() == expected);
}

TEST_CASE("stencil reads a pitched block as input, its edge the block's edge") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 90, cols = 400;
  const auto values = ct::random_values<float>(rows * cols);
  pitched_matrix<float> in(values, rows, cols);
  // A block 16 bytes in (the vector walk) and one 12 bytes in (the element walk).
  for (const std::size_t first_col : {std::size_t(4), std::size_t(3)}) {
    INFO("block from column " << first_col);
    const std::size_t first_row = 5, block_rows = 70, block_cols = 301;
    const auto block = in.view().block(first_row, first_col, block_rows, block_cols);
    std::vector<float> block_values(block_rows * block_cols);
    for (std::size_t r = 0; r < block_rows; ++r)
      for (std::size_t c = 0; c < block_cols; ++c)
        block_values[r * block_cols + c] = values[(first_row + r) * cols + first_col + c];
    for (int policy = 0; policy < 2; ++policy) {
      pitched_matrix<float> out(block_rows, block_cols, untouched);
      std::vector<float> expected(block_rows * block_cols, untouched);
      if (policy == 0) {
        coalesce::stencil<2>(coalesce::clamp, block, out, [] __device__(auto n) { return thirteen_point{}(n); });
        reference_stencil<2>(coalesce::clamp, block_rows, block_cols, expected, thirteen_point{}, block_values);
      } else {
        coalesce::stencil<1>(coalesce::interior, block, out.view(), [] __device__(auto n) { return nine_point{}(n); });
        reference_stencil<1>(coalesce::interior, block_rows, block_cols, expected, nine_point{}, block_values);
      }
      CHECK(out.to_vector() == expected);
    }
  }
}

TEST_CASE("stencil runs on the output matrix's stream, and on a stream it is given") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const coalesce::pool_resource on_stream(stream);
    const std::size_t rows = 64, cols = 256;
    const auto values = ct::random_values<float>(rows * cols);
    pitched_matrix<float> in(values, rows, cols, on_stream), out(rows, cols, on_stream), again(rows, cols, on_stream);
    coalesce::stencil<1>(in, out, [] __device__(auto n) { return five_point{}(n); });  // clamp, out's stream
    coalesce::stencil<1>(in.view(), again.view(), [] __device__(auto n) { return five_point{}(n); }, stream);
    std::vector<float> expected(rows * cols);
    reference_stencil<1>(coalesce::clamp, rows, cols, expected, five_point{}, values);
    CHECK(out.to_vector() == expected);
    CHECK(again.to_vector() == expected);
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("stencil refuses in place and inputs of another shape, naming both shapes") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  pitched_matrix<float> a(40, 50), b(40, 51);
  const auto f = [] __device__(auto n) { return n(0, 1); };
  CHECK_THROWS_AS(coalesce::stencil<1>(a.view(), a.view(), f), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::stencil<1>(a.view().block(0, 0, 20, 50), a.view().block(10, 0, 20, 50), f),
                  std::invalid_argument);
  std::string message;
  try {
    coalesce::stencil<1>(coalesce::interior, a, b, f);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("40 x 50") != std::string::npos);
  CHECK(message.find("40 x 51") != std::string::npos);
  REQUIRE(cudaGetLastError() == cudaSuccess);  // nothing was launched
}

namespace {

// Runs coalesce::stencil (`library`) and then every competitor into `out` (a matrix or a volume),
// each result compared element by element with `expected` (dense, row-major).
template <class Container, class Library, class Candidates>
void check_every_candidate(Container& out, const std::vector<float>& expected, const Library& library,
                           const Candidates& competitors) {
  const auto check = [&](const std::string& who) {
    const auto result = out.to_vector();
    for (std::size_t i = 0; i < result.size(); ++i)
      if (result[i] != expected[i]) FAIL(who << " mismatch at element " << i << " of the dense, row-major layout");
  };
  library(0);
  ct::check_sync("coalesce::stencil");
  check("coalesce::stencil");
  for (const auto& c : competitors) {
    out.fill(untouched);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    check(c.name);
  }
}

// One stencil on one matrix: every candidate checked against the host reference, then measured.
template <class Shape>
void measure_stencil(const char* shape_name, coalesce_test::competitors::stencil_shape shape, std::size_t rows,
                     std::size_t cols, double memcpy_target) {
  const auto values = ct::random_values<float>(rows * cols);
  pitched_matrix<float> in(values, rows, cols), out(rows, cols);
  const auto library = [&](cudaStream_t s) {
    coalesce::stencil<Shape::radius>(
        coalesce::clamp, in.view(), out.view(), [] __device__(auto n) { return Shape{}(n); }, s);
  };
  const auto competitors = coalesce_test::competitors::stencil_clamped(shape, in.const_view(), out.view());
  std::vector<float> expected(rows * cols);
  reference_stencil<Shape::radius>(coalesce::clamp, rows, cols, expected, Shape{}, values);
  check_every_candidate(out, expected, library, competitors);

  COALESCE_REQUIRE_COUNTERS(halo_profiler());
  const double ideal_bytes = 2.0 * double(rows) * double(cols) * sizeof(float);
  const auto m = halo_profiler().measure([&] { library(0); });
  const double dram = m.dram_bytes_read() + m.dram_bytes_write();
  // A warp's lanes take consecutive 16-byte vectors of one row (512 bytes, 16 sectors; a row's
  // last warp takes what is left of it): each loads its vector of every input row it needs and
  // the elements beside it (the same sectors, and one more where the offset crosses a line), and
  // stores one vector. Rows start on 128-byte boundaries, so a row of cols floats is
  // ceil(cols * 4 / 32) sectors over ceil(cols / 128) warps.
  std::printf("\n%s on %zu x %zu floats: load sectors/request %.3f, store %.3f, DRAM %.1f MB (ideal %.1f, %.3f)\n",
              shape_name, rows, cols, m.load_sectors_per_request(), m.store_sectors_per_request(), dram / 1e6,
              ideal_bytes / 1e6, dram / ideal_bytes);
  CHECK(dram <= coalesce_test::targets::stencil_dram_bytes_over_ideal * ideal_bytes);
  if (cols % 4 == 0) {  // whole vectors: every thread's vector is inside the row
    const double sectors_per_warp = double((cols * sizeof(float) + 31) / 32) / double((cols + 127) / 128);
    CHECK(m.load_sectors_per_request() >= sectors_per_warp * 0.99);
    CHECK(m.load_sectors_per_request() <= sectors_per_warp + 1.0);
    CHECK(m.store_sectors_per_request() == Approx(sectors_per_warp).epsilon(0.001));
  }
  // The halo's L1-to-L2 traffic: the model's count for the walk's block shape, if L1 keeps what a
  // block loads while its threads need it, against the sectors L2 served to L1.
  using walk = coalesce::detail::band_shape<Shape::radius, 4, float>;
  const double modelled = coalesce::model::band_halo_sectors_per_output_sector(
      Shape::radius, sizeof(float), 4, walk::rows_per_thread, walk::block_x, walk::block_y);
  const double output_sectors = double(rows) * double((cols * sizeof(float) + 31) / 32);
  const double measured = m[l2_sectors_read_by_l1] / output_sectors;
  std::printf(
      "%s: L2 sectors read by L1 per output sector %.3f, the access model %.3f (%d rows a thread, %u x %u blocks)\n",
      shape_name, measured, modelled, walk::rows_per_thread, walk::block_x, walk::block_y);
  CHECK(measured == Approx(modelled).epsilon(0.06));

  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(
      meter,
      std::string(shape_name) + ", clamp, pitched " + std::to_string(rows) + " x " + std::to_string(cols) + " floats",
      library, competitors, ideal_bytes);
  CHECK(c.library >= memcpy_target);
  CHECK(c.versus_best_competitor() >= coalesce_test::targets::versus_best_competitor);
}

}  // namespace

TEST_CASE("stencil reaches its share of cudaMemcpy and the hand-written stencils on 8192^2 floats") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using coalesce_test::competitors::stencil_shape;
  const std::size_t n = ct::small_problems() ? 512 : 8192;
  measure_stencil<five_point>("5-point", stencil_shape::five_point, n, n,
                              coalesce_test::targets::stencil_radius_1_of_memcpy);
  measure_stencil<nine_point>("9-point", stencil_shape::nine_point, n, n,
                              coalesce_test::targets::stencil_nine_point_of_memcpy);
  measure_stencil<thirteen_point>("13-point", stencil_shape::thirteen_point, n, n,
                                  coalesce_test::targets::stencil_radius_2_of_memcpy);
}

TEST_CASE("stencil reaches its share of cudaMemcpy and the hand-written stencils on 200000 x 1000 floats") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using coalesce_test::competitors::stencil_shape;
  const std::size_t rows = ct::small_problems() ? 300 : 200000, cols = 1000;
  measure_stencil<five_point>("5-point", stencil_shape::five_point, rows, cols,
                              coalesce_test::targets::stencil_radius_1_of_memcpy);
  measure_stencil<nine_point>("9-point", stencil_shape::nine_point, rows, cols,
                              coalesce_test::targets::stencil_nine_point_of_memcpy);
  measure_stencil<thirteen_point>("13-point", stencil_shape::thirteen_point, rows, cols,
                                  coalesce_test::targets::stencil_radius_2_of_memcpy);
}

// --- volumes -------------------------------------------------------------------------------------

namespace {

template <class Shape, class Policy>
void check_volume_shape(const Policy& policy, std::size_t depth, std::size_t rows, std::size_t cols,
                        const char* policy_name) {
  INFO(policy_name << ", radius " << Shape::radius << ", " << depth << " x " << rows << " x " << cols);
  const auto values = ct::random_values<float>(depth * rows * cols);
  pitched_volume<float> in(values, depth, rows, cols), out(depth, rows, cols, untouched);
  if constexpr (std::is_same_v<Policy, coalesce::interior_t>) {
    constexpr std::size_t reach = 2 * Shape::radius;
    if (depth <= reach || rows <= reach || cols <= reach) {
      check_refused_as_too_small(
          [&] { coalesce::stencil<Shape::radius>(policy, in, out, [] __device__(auto n) { return Shape{}(n); }); },
          std::to_string(depth) + " x " + std::to_string(rows) + " x " + std::to_string(cols));
      const auto result = out.to_vector();
      CHECK(std::count(result.begin(), result.end(), untouched) == std::ptrdiff_t(result.size()));
      return;
    }
  }
  coalesce::stencil<Shape::radius>(policy, in, out, [] __device__(auto n) { return Shape{}(n); });
  std::vector<float> expected(depth * rows * cols, untouched);
  reference_volume_stencil<Shape::radius>(policy, depth, rows, cols, expected, Shape{}, values);
  const auto result = out.to_vector();
  for (std::size_t i = 0; i < result.size(); ++i)
    if (result[i] != expected[i])
      FAIL("mismatch at (" << i / (rows * cols) << ", " << i / cols % rows << ", " << i % cols << "): " << result[i]
                           << " != " << expected[i]);
}

template <class Shape>
void check_volume_every_policy(std::size_t depth, std::size_t rows, std::size_t cols) {
  check_volume_shape<Shape>(coalesce::clamp, depth, rows, cols, "clamp");
  check_volume_shape<Shape>(coalesce::periodic, depth, rows, cols, "periodic");
  check_volume_shape<Shape>(coalesce::constant(1.5f), depth, rows, cols, "constant(1.5f)");
  check_volume_shape<Shape>(coalesce::interior, depth, rows, cols, "interior");
}

struct two_volume_inputs {
  template <class A, class B>
  __host__ __device__ double operator()(const A& a, const B& b) const {
    return double(a(0, 0, 0)) + double(b(-1, 1, 0)) - double(b(1, 0, -1)) + double(a.template at<0, 0, 1>());
  }
};

}  // namespace

TEST_CASE("stencil on volumes equals the host reference for radius 1 and 4 under every boundary policy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 23 and 30 columns: each row's last vector partial. The 2.5D walk takes 32 planes a block:
  // depths of 70 and 37 end in a partial chunk, the others fit in one.
  check_volume_every_policy<seven_point>(13, 17, 23);
  check_volume_every_policy<seven_point>(70, 5, 13);
  check_volume_every_policy<twenty_five_point>(37, 9, 8);
  check_volume_every_policy<seven_point>(6, 9, 64);
  check_volume_every_policy<seven_point>(1, 1, 5);
  check_volume_every_policy<twenty_five_point>(11, 12, 30);
  check_volume_every_policy<twenty_five_point>(3, 20, 9);
}

TEST_CASE("stencil on volumes takes two inputs, another output type, and a block 4 bytes in (the element walk)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t depth = 41, rows = 19, cols = 45;  // two chunks of the 2.5D walk
  const auto u_values = ct::random_values<float>(depth * rows * cols);
  const auto v_values = ct::random_values<float>(depth * rows * cols, ct::test_seed() + 1);
  pitched_volume<float> u(u_values, depth, rows, cols), v(v_values, depth, rows, cols);
  pitched_volume<double> out(depth, rows, cols);
  const two_volume_inputs f;  // b(-1, 1, 0) and b(1, 0, -1): off the plane and off the z axis, loaded one by one
  coalesce::stencil<1>(coalesce::periodic, coalesce::inputs(u, v.view()), out, f);
  std::vector<double> expected(depth * rows * cols);
  reference_volume_stencil<1>(coalesce::periodic, depth, rows, cols, expected, f, u_values, v_values);
  CHECK(out.to_vector() == expected);

  // The block from x = 1: rows 4 bytes off 16-byte alignment.
  const std::size_t block_cols = cols - 1;
  const auto block = u.view().block(0, 0, 1, depth, rows, block_cols);
  std::vector<float> block_values(depth * rows * block_cols);
  for (std::size_t z = 0; z < depth; ++z)
    for (std::size_t y = 0; y < rows; ++y)
      for (std::size_t x = 0; x < block_cols; ++x)
        block_values[(z * rows + y) * block_cols + x] = u_values[(z * rows + y) * cols + x + 1];
  pitched_volume<float> block_out(depth, rows, block_cols, untouched);
  coalesce::stencil<1>(coalesce::interior, block, block_out, [] __device__(auto n) { return seven_point{}(n); });
  std::vector<float> block_expected(depth * rows * block_cols, untouched);
  reference_volume_stencil<1>(coalesce::interior, depth, rows, block_cols, block_expected, seven_point{}, block_values);
  CHECK(block_out.to_vector() == block_expected);
}

TEST_CASE("stencil on volumes refuses inputs of another shape and in place") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  pitched_volume<float> a(4, 5, 6), b(4, 5, 7);
  const auto f = [] __device__(auto n) { return n(0, 0, 0); };
  try {
    coalesce::stencil<1>(a, b, f);
    FAIL("no exception for volumes of two shapes");
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    CHECK(message.find("4 x 5 x 6") != std::string::npos);
    CHECK(message.find("4 x 5 x 7") != std::string::npos);
  }
  CHECK_THROWS_AS(coalesce::stencil<1>(a.view(), a.view(), f), std::invalid_argument);
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

namespace {

template <class Shape>
void measure_volume_stencil(const char* shape_name, coalesce_test::competitors::volume_stencil_shape shape,
                            std::size_t n, double memcpy_target, double versus_hand_written) {
  const auto values = ct::random_values<float>(n * n * n);
  pitched_volume<float> in(values, n, n, n), out(n, n, n);
  const auto library = [&](cudaStream_t s) {
    coalesce::stencil<Shape::radius>(
        coalesce::clamp, in.view(), out.view(), [] __device__(auto nb) { return Shape{}(nb); }, s);
  };
  const auto competitors = coalesce_test::competitors::volume_stencil_clamped(shape, in.const_view(), out.view());
  std::vector<float> expected(n * n * n);
  reference_volume_stencil<Shape::radius>(coalesce::clamp, n, n, n, expected, Shape{}, values);
  check_every_candidate(out, expected, library, competitors);

  COALESCE_REQUIRE_COUNTERS(halo_profiler());
  const double ideal_bytes = 2.0 * double(n) * double(n) * double(n) * sizeof(float);
  const auto m = halo_profiler().measure([&] { library(0); });
  const double dram = m.dram_bytes_read() + m.dram_bytes_write();
  std::printf("\n%s on %zu^3 floats: load sectors/request %.3f, store %.3f, DRAM %.1f MB (ideal %.1f, %.3f)\n",
              shape_name, n, m.load_sectors_per_request(), m.store_sectors_per_request(), dram / 1e6, ideal_bytes / 1e6,
              dram / ideal_bytes);
  CHECK(dram <= coalesce_test::targets::stencil_dram_bytes_over_ideal * ideal_bytes);
  // A warp's lanes take 32 consecutive 16-byte vectors of one row: 16 sectors a vector load and
  // store (512-float rows are 4 warps), the elements beside them one sector more where a lane's
  // offset crosses a line.
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.001));
  CHECK(m.load_sectors_per_request() >= 16.0 * 0.99);
  CHECK(m.load_sectors_per_request() <= 17.0);

  // What the plane's rows cost: the sectors L2 serves to L1's reads per sector of output, for the
  // library and each hand-written kernel (no model of the 2.5D walk's L1 reuse asserts these).
  const double output_sectors = double(n) * double(n) * double(n) * sizeof(float) / 32.0;
  std::printf("%s: L2 sectors read by L1 per output sector: coalesce %.3f", shape_name,
              m[l2_sectors_read_by_l1] / output_sectors);
  for (const auto& competitor : competitors)
    std::printf("; %s %.3f", competitor.name.c_str(),
                halo_profiler().measure([&] { competitor.launch(0); })[l2_sectors_read_by_l1] / output_sectors);
  std::printf("\n");

  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(
      meter, std::string(shape_name) + ", clamp, pitched " + std::to_string(n) + "^3 floats", library, competitors,
      ideal_bytes);
  CHECK(c.library >= memcpy_target);
  CHECK(c.versus_best_competitor() >= versus_hand_written);
}

}  // namespace

TEST_CASE(
    "stencil on volumes holds its measured share of cudaMemcpy and of the hand-written stencils on 512^3 floats") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using coalesce_test::competitors::volume_stencil_shape;
  const std::size_t n = ct::small_problems() ? 48 : 512;
  namespace targets = coalesce_test::targets;
  measure_volume_stencil<seven_point>("7-point", volume_stencil_shape::seven_point, n,
                                      targets::volume_stencil_7_point_of_memcpy,
                                      targets::volume_stencil_7_point_versus_hand_written);
  measure_volume_stencil<twenty_five_point>("25-point", volume_stencil_shape::twenty_five_point, n,
                                            targets::volume_stencil_25_point_of_memcpy,
                                            targets::volume_stencil_25_point_versus_hand_written);
}
