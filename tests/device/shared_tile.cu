// shared_tile on the device: the hardware's shared-memory wavefronts equal each layout's
// compile-time certificate (within 1%), cooperative loads and stores handle edges, and
// coalesce::transpose is correct for any shape and keeps up with the best hand-written tiled
// transpose (examples/03_transpose_ladder's kernels).
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/shared_tile.hpp>
#include <coalesce/testing/testing.hpp>
#include <coalesce/transpose.hpp>

#include "../../examples/03_transpose_ladder/ladder_kernels.cuh"
#include "coalesce_device_test.hpp"
#include "targets.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_matrix;
using coalesce::pitched_view;

namespace {

using coalesce_test::profiler;

template <class T>
__device__ T make_value(unsigned seed) {
  T v{};
  auto* bytes = reinterpret_cast<unsigned char*>(&v);
  for (unsigned i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<unsigned char>(seed * 31u + i);
  return v;
}

template <class T>
__device__ unsigned fold(const T& v) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&v);
  unsigned h = 0;
  for (unsigned i = 0; i < sizeof(T); ++i) h = h * 131u + bytes[i];
  return h;
}

// A 16-byte element read as one int4, so the compiler emits one 16-byte shared load rather than
// four 4-byte ones (which a byte-wise fold invites).
__device__ unsigned fold(const int4& v) {
  return unsigned(v.x) ^ unsigned(v.y) * 3u ^ unsigned(v.z) * 5u ^ unsigned(v.w) * 7u;
}

// One warp writes the 32 x 32 tile row by row (lane = column: 32 row-access store instructions),
// then reads it column by column (lane = row: 32 column-access load instructions).
template <class T, class Policy>
__global__ void rows_then_columns(unsigned* out) {
  __shared__ coalesce::shared_tile<T, 32, 32, Policy, coalesce::access::unchecked> tile;
  const unsigned lane = threadIdx.x;
#pragma unroll 1
  for (unsigned r = 0; r < 32; ++r) tile(r, lane) = make_value<T>(r * 32 + lane);
  __syncwarp();
  unsigned h = 0;
#pragma unroll 1
  for (unsigned c = 0; c < 32; ++c) h = h * 7u + fold(tile(lane, c));
  out[lane] = h;
}

template <class T, class Policy>
void check_certificate(const char* type_name, const char* policy_name) {
  using layout = coalesce::tile_layout<T, 32, 32, Policy>;
  ct::device_buffer<unsigned> out(32);
  auto launch = [&] {
    rows_then_columns<T, Policy><<<1, 32>>>(out.data());
    ct::check_launch();
  };
  launch();
  ct::check_sync();
  if (ct::small_problems() || !profiler().available()) return;
  const auto m = profiler().measure(launch);
  const double stores = m.shared_store_wavefronts_per_instruction();
  const double loads = m.shared_load_wavefronts_per_instruction();
  std::printf("%-14s %-14s rows: %6.2f (certificate %2u)   columns: %6.2f (certificate %2u)\n", type_name, policy_name,
              stores, layout::row_access_wavefronts, loads, layout::column_access_wavefronts);
  CHECK(m.shared_store_instructions() == Approx(32));
  CHECK(m.shared_load_instructions() == Approx(32));
  CHECK(stores == Approx(double(layout::row_access_wavefronts)).epsilon(0.01));
  CHECK(loads == Approx(double(layout::column_access_wavefronts)).epsilon(0.01));
}

template <class T>
void check_all_policies(const char* type_name) {
  check_certificate<T, coalesce::unpadded>(type_name, "unpadded");
  check_certificate<T, coalesce::padded>(type_name, "padded");
  check_certificate<T, coalesce::swizzled>(type_name, "swizzled");
  if constexpr (32 * sizeof(T) % 128 == 0) check_certificate<T, coalesce::swizzled_128b>(type_name, "swizzled_128b");
}

// Loads the tile at (row, col) of `in`, stores it at the same place of `out` and transposed at
// (col, row) of `out_t`; the parts outside the matrices are clipped.
template <class Policy>
__global__ void copy_one_tile(pitched_view<const int> in, pitched_view<int> out, pitched_view<int> out_t,
                              std::size_t row, std::size_t col) {
  __shared__ coalesce::shared_tile<int, 32, 32, Policy> tile;
  tile.load(in, row, col);
  __syncthreads();
  tile.store(out, row, col);
  tile.store_transposed(out_t, col, row);
}

// The same through a slice of dynamic shared memory.
__global__ void copy_one_tile_dynamic(pitched_view<const int> in, pitched_view<int> out, std::size_t row,
                                      std::size_t col) {
  extern __shared__ int dynamic_shared[];
  coalesce::shared_tile_view<int, 32, 32> tile(dynamic_shared);
  tile.load(in, row, col);
  __syncthreads();
  tile.store(out, row, col);
}

template <class T>
std::vector<T> host_transpose(const std::vector<T>& v, std::size_t rows, std::size_t cols) {
  std::vector<T> t(v.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

template <class T>
void check_transpose(std::size_t rows, std::size_t cols) {
  const auto values = ct::random_values<T>(rows * cols);
  pitched_matrix<T> in(values, rows, cols), out(cols, rows);
  out.fill(T(-1));
  coalesce::transpose(in.view(), out.view());
  INFO(rows << " x " << cols);
  REQUIRE(out.to_vector() == host_transpose(values, rows, cols));
}

}  // namespace

TEST_CASE("shared wavefronts per instruction equal every layout's certificate within 1 percent") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  std::printf("\nshared wavefronts per instruction, one warp, 32 x 32 tile (measured vs certificate):\n");
  check_all_policies<std::uint8_t>("1 B (uint8)");
  check_all_policies<std::uint16_t>("2 B (uint16)");
  check_all_policies<float>("4 B (float)");
  check_all_policies<double>("8 B (double)");
  check_all_policies<int4>("16 B (int4)");
  COALESCE_REQUIRE_COUNTERS(profiler());
}

TEST_CASE("cooperative tile loads and stores copy blocks exactly and clip at the edges") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 100, cols = 70;
  std::vector<int> values(rows * cols);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = int(i) + 1;
  pitched_matrix<int> in(values, rows, cols);
  // (0, 0) is whole and vector-aligned; (5, 3) is whole but misaligned; (90, 60) is clipped.
  const std::size_t corners[][2] = {{0, 0}, {5, 3}, {90, 60}, {64, 32}};
  for (const auto& corner : corners) {
    const std::size_t r0 = corner[0], c0 = corner[1];
    pitched_matrix<int> out(rows, cols), out_t(cols, rows), out_dynamic(rows, cols);
    copy_one_tile<coalesce::padded><<<1, dim3(32, 8)>>>(in.view(), out.view(), out_t.view(), r0, c0);
    ct::check_launch();
    copy_one_tile_dynamic<<<1, 96, coalesce::tile_layout<int, 32, 32>::size * sizeof(int)>>>(
        in.view(), out_dynamic.view(), r0, c0);
    ct::check_launch();
    const auto copied = out.to_vector(), transposed = out_t.to_vector(), dynamic = out_dynamic.to_vector();
    INFO("tile at (" << r0 << ", " << c0 << ")");
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        const bool inside = r >= r0 && r < r0 + 32 && c >= c0 && c < c0 + 32;
        const int expected = inside ? values[r * cols + c] : 0;
        REQUIRE(copied[r * cols + c] == expected);
        REQUIRE(dynamic[r * cols + c] == expected);
        REQUIRE(transposed[c * rows + r] == expected);
      }
  }
}

TEST_CASE("the swizzled layouts hold the same values as the padded one") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 64, cols = 64;
  std::vector<int> values(rows * cols);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = int(i * 7 + 3);
  pitched_matrix<int> in(values, rows, cols);
  pitched_matrix<int> out(rows, cols), out_t(cols, rows);
  copy_one_tile<coalesce::swizzled><<<1, 256>>>(in.view(), out.view(), out_t.view(), 32, 0);
  ct::check_launch();
  pitched_matrix<int> out2(rows, cols), out2_t(cols, rows);
  copy_one_tile<coalesce::padded><<<1, 256>>>(in.view(), out2.view(), out2_t.view(), 32, 0);
  ct::check_launch();
  REQUIRE(out.to_vector() == out2.to_vector());
  REQUIRE(out_t.to_vector() == out2_t.to_vector());
}

TEST_CASE("transpose is exact for floats and doubles of any shape") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (auto shape : {std::pair<std::size_t, std::size_t>{1, 1},
                     {1, 5000},
                     {5000, 1},
                     {33, 1000},
                     {1000, 33},
                     {31, 31},
                     {64, 96},
                     {257, 129}})
    check_transpose<float>(shape.first, shape.second);
  check_transpose<double>(257, 129);
  check_transpose<int>(1000, 33);
  check_transpose<double>(33, 1000);
  // Large matrices, smaller under the sanitizers (racecheck follows every shared access), with the
  // same kernels: tiles in the middle and clipped tiles at both edges.
  const bool small = ct::small_problems();
  check_transpose<float>(small ? 1100 : 8100, small ? 900 : 7900);
  check_transpose<double>(small ? 1000 : 8000, small ? 1000 : 8000);
  pitched_matrix<float> in(3, 4), wrong(3, 4);
  REQUIRE_THROWS_AS(coalesce::transpose(in.view(), wrong.view()), std::invalid_argument);
}

TEST_CASE(
    "transpose reads and writes ideal sectors, with bounded bank conflicts, and keeps up with the best hand-written transpose") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  auto run = [&](auto element, std::size_t n) {
    using T = decltype(element);
    const auto values = ct::random_values<T>(n * n);
    pitched_matrix<T> in(values, n, n), out(n, n);
    const auto i = in.const_view();
    const auto o = out.view();
    auto library = [=](cudaStream_t s) { coalesce::transpose(i, o, s); };
    const dim3 tiles(unsigned(n / 32), unsigned(n / 32)), threads(32, 8);
    const std::vector<coalesce_test::candidate> hand_written = {
        {"naive, one element per thread", ct::row_role::competitor,
         [=](cudaStream_t s) { transpose_naive<<<dim3(tiles.x, tiles.y * 4), threads, 0, s>>>(i, o); }},
        {"tile padded [32][33]", ct::row_role::competitor,
         [=](cudaStream_t s) { transpose_tiled<coalesce::padded><<<tiles, threads, 0, s>>>(i, o); }},
        {"tile swizzled (c ^ r)", ct::row_role::competitor,
         [=](cudaStream_t s) { transpose_tiled<coalesce::swizzled><<<tiles, threads, 0, s>>>(i, o); }},
    };
    const auto expected = host_transpose(values, n, n);
    for (const auto& c : hand_written) {
      out.fill(T(-1));
      c.launch(0);
      INFO(c.name << ", " << n << " x " << n);
      REQUIRE(out.to_vector() == expected);
    }
    out.fill(T(-1));
    library(0);
    REQUIRE(out.to_vector() == expected);
    if (ct::small_problems() || !profiler().available()) return;

    const auto m = profiler().measure([&] { library(0); });
    std::printf(
        "\ntranspose %zu x %zu %s: load sectors/req %.2f  store %.2f  shared ld/st wavefronts/instr %.2f / %.2f\n", n,
        n, sizeof(T) == 4 ? "float" : "double", m.load_sectors_per_request(), m.store_sectors_per_request(),
        m.shared_load_wavefronts_per_instruction(), m.shared_store_wavefronts_per_instruction());
    // Every global access is 8 bytes (floats move in pairs, doubles alone), 32 lanes on one row:
    // 8 sectors per request, the ideal for that width.
    CHECK(m.load_sectors_per_request() == Approx(8.0).epsilon(0.01));
    CHECK(m.store_sectors_per_request() == Approx(8.0).epsilon(0.01));
    // Shared memory. Doubles: ideal 2 wavefronts per 8-byte instruction, and a 2-way conflict
    // would make 4; at most 2.5. Float pairs accept a 2-way conflict by design (see
    // transpose_pairs_kernel): ideal 1, at most 2.1.
    const double allowed = sizeof(T) == 8 ? 2.5 : 2.1;
    CHECK(m.shared_load_wavefronts_per_instruction() <= allowed);
    CHECK(m.shared_store_wavefronts_per_instruction() <= allowed);
    ct::bandwidth_meter meter;
    const auto c = coalesce_test::compare_with_competitors(
        meter, "transpose " + std::to_string(n) + " x " + std::to_string(n) + (sizeof(T) == 4 ? " floats" : " doubles"),
        library, hand_written, 2.0 * n * n * sizeof(T));
    CHECK(c.versus_best_competitor() >= coalesce_test::targets::versus_best_competitor);
    CHECK(c.library_of_peak >= coalesce_test::targets::transpose_of_peak);
  };
  // Under the sanitizers, smaller matrices with the same kernels (sides multiples of 32 for the
  // hand-written tiles; 992 is not a multiple of coalesce::transpose's 64).
  const bool small = ct::small_problems();
  run(float{}, small ? 1024 : 8192);
  run(float{}, small ? 992 : 8000);
  run(double{}, small ? 1024 : 8192);
  run(double{}, small ? 992 : 8000);
  COALESCE_REQUIRE_COUNTERS(profiler());
}
