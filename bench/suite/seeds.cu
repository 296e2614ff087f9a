// The seed groups of the benchmark: the classic coalescing experiments, each a plain copy whose
// only change from row to row is the access pattern - stride, base alignment, layout, row pitch,
// shared-memory tile - and what coalesce does with the same work.
#include "bench.hpp"

#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/transpose.hpp>

#include "../../examples/03_transpose_ladder/ladder_kernels.cuh"

#include <string>
#include <vector>

struct Vec3 {
  float x, y, z;
};
COALESCE_FIELDS(Vec3, x, y, z);

namespace bench {
namespace {

namespace cc = coalesce_test::competitors;

unsigned blocks_for(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

__global__ void strided_copy(const float* in, float* out, std::size_t n, std::size_t stride) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
}

// A value per index that host and device compute alike, so inputs of gigabytes need no upload.
__host__ __device__ inline float hash_value(std::size_t i) { return float((i * 2654435761u) % 1000003u) * 0.001f; }

__global__ void fill_with_hash(float* data, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = hash_value(i);
}

__global__ void offset_copy(const float* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void x_of_aos(const Vec3* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i].x * 2.0f;
}

__global__ void x_of_soa(coalesce::soa_view<const Vec3> in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i].x * 2.0f;
}

struct same_value {
  __device__ float operator()(float x) const { return x; }
};

struct twice_x {
  __device__ float operator()(coalesce::soa_reference_t<const Vec3> v) const { return v.x * 2.0f; }
};

// One row per 128 x 4 walk step: the same kernel for dense and pitched rows, only the pitch differs.
__global__ void row_copy(coalesce::pitched_view<const float> in, coalesce::pitched_view<float> out) {
  for (std::size_t r = blockIdx.x * std::size_t(blockDim.y) + threadIdx.y; r < in.rows();
       r += std::size_t(gridDim.x) * blockDim.y)
    for (std::size_t c = threadIdx.x; c < in.cols(); c += blockDim.x) out(r, c) = in(r, c);
}

}  // namespace

void stride_sweep(runner& r) {
  const std::string group = "stride sweep: out[i] = in[i * stride] (floats)";
  std::printf("%s\n", group.c_str());
  // 64 M floats out: every row reads at least 256 MiB and writes 256 MiB, more than 4x the L2.
  const std::size_t n = std::size_t(1) << 26;
  const std::size_t max_stride = 32;
  ct::device_buffer<float> in(n * max_stride), out(n);
  fill_with_hash<<<unsigned(n * max_stride / 256), 256>>>(in.data(), n * max_stride);
  ct::check_sync("fill_with_hash");
  for (std::size_t stride : {1, 2, 3, 4, 8, 16, 32}) {
    const candidate c{"stride " + std::to_string(stride), row_role::context, [&, stride](cudaStream_t s) {
                        strided_copy<<<blocks_for(n, 256), 256, 0, s>>>(in.data(), out.data(), n, stride);
                      }};
    out.poison();
    c.launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 4099)
      if (got[i] != hash_value(i * stride)) {
        r.mismatch(group + ": stride " + std::to_string(stride));
        break;
      }
    r.measure(group, {c}, 8.0 * double(n));
  }
}

void misaligned_base(runner& r) {
  const std::string group = "misaligned base: out[i] = in[i] from in + offset floats";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 26;
  const auto values = ct::random_values<float>(n + 32);
  ct::device_buffer<float> in(values), out(n);
  for (std::size_t offset : {0, 1, 2, 4, 8, 16, 31}) {
    const candidate c{"offset " + std::to_string(offset) + " floats (" + std::to_string(offset * 4) + " B)",
                      row_role::context, [&, offset](cudaStream_t s) {
                        offset_copy<<<blocks_for(n, 256), 256, 0, s>>>(in.data() + offset, out.data(), n);
                      }};
    out.poison();
    c.launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 4099)
      if (got[i] != values[i + offset]) {
        r.mismatch(group + ": offset " + std::to_string(offset));
        break;
      }
    r.measure(group, {c}, 8.0 * double(n));
  }
}

void aos_vs_soa(runner& r) {
  const std::string group = "AoS vs SoA: read Vec3.x of every element";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 26;
  const auto raw = ct::random_values<float>(3 * n);
  std::vector<Vec3> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = {raw[3 * i], raw[3 * i + 1], raw[3 * i + 2]};
  ct::device_buffer<Vec3> aos(points);
  coalesce::soa_vector<Vec3> soa(points);
  ct::device_buffer<float> out(n);
  const auto v = soa.const_view();
  const Vec3* structs = aos.data();
  float* o = out.data();

  const auto candidates =
      std::vector<candidate>{
          {"AoS Vec3*, one element per thread", row_role::context,
           [=](cudaStream_t s) { x_of_aos<<<blocks_for(n, 256), 256, 0, s>>>(structs, o, n); }, std::nullopt,
           "another layout: reads 12 bytes for every 4 it uses"},
          {"soa_view<Vec3>, one element per thread", row_role::library,
           [=](cudaStream_t s) { x_of_soa<<<blocks_for(n, 256), 256, 0, s>>>(v, o, n); }, std::nullopt,
           "a user's kernel on the soa_view, as written for Vec3*"},
      } +
      cc::column_twice(v.column<&Vec3::x>(), o, n) +
      std::vector<candidate>{
          {"coalesce::transform(soa_view, span)", row_role::library,
           [=](cudaStream_t s) { coalesce::transform(v, cuda::std::span<float>(o, n), twice_x{}, s); },
           target(targets::column_read_of_peak)}};
  for (const auto& c : candidates) {
    out.poison();
    c.launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 997)
      if (got[i] != points[i].x * 2.0f) {
        r.mismatch(group + ": " + c.name);
        break;
      }
  }
  r.measure(group, candidates, 8.0 * double(n));
}

void pitched_vs_dense(runner& r) {
  const std::size_t rows = 200000;
  for (std::size_t cols : {1000, 1001}) {
    const std::string width = std::to_string(cols) + " floats";
    const std::string group = "row copy, 200000 rows of " + width + ": pitched vs dense";
    std::printf("%s\n", group.c_str());
    const auto values = ct::random_values<float>(rows * cols);
    // Dense: rows packed back to back (aligned_rows<4>: the pitch is the row's own size).
    coalesce::pitched_matrix<float, coalesce::device_space, coalesce::aligned_rows<4>> dense_in(values, rows, cols),
        dense_out(rows, cols);
    coalesce::pitched_matrix<float> pitched_in(values, rows, cols), pitched_out(rows, cols);
    const auto din = dense_in.const_view();
    const auto dout = dense_out.view();
    const auto pin = pitched_in.const_view();
    const auto pout = pitched_out.view();
    const auto candidates =
        std::vector<candidate>{
            {"dense rows, row walk", row_role::context,
             [=](cudaStream_t s) { row_copy<<<unsigned((rows + 3) / 4), dim3(128, 4), 0, s>>>(din, dout); },
             std::nullopt, "another layout: rows start anywhere in a line"},
            {"pitched rows, row walk", row_role::competitor,
             [=](cudaStream_t s) { row_copy<<<unsigned((rows + 3) / 4), dim3(128, 4), 0, s>>>(pin, pout); }},
        } +
        cc::pitched_copy(pin, pout) +
        std::vector<candidate>{{"coalesce::transform(pitched_view, pitched_view)", row_role::library,
                                [=](cudaStream_t s) { coalesce::transform(pin, pout, same_value{}, s); },
                                target(targets::row_copy_of_peak)}};
    for (const auto& c : candidates) {
      const bool on_dense = c.role == row_role::context;
      if (on_dense) {
        dense_out.fill(-1.0f);
      } else {
        pitched_out.fill(-1.0f);
      }
      c.launch(0);
      ct::check_sync(c.name.c_str());
      if ((on_dense ? dense_out.to_vector() : pitched_out.to_vector()) != values) r.mismatch(group + ": " + c.name);
    }
    r.measure(group, candidates, 8.0 * double(rows * cols));
  }
}

void transpose_ladder(runner& r) {
  const std::string group = "transpose ladder, 8192 x 8192 floats";
  std::printf("%s\n", group.c_str());
  const std::size_t n = 8192;
  const auto values = ct::random_values<float>(n * n);
  coalesce::pitched_matrix<float> in(values, n, n), out(n, n);
  std::vector<float> expected(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) expected[j * n + i] = values[i * n + j];
  const auto i = in.const_view();
  const auto o = out.view();
  const dim3 tiles(unsigned(n / 32), unsigned(n / 32)), tile_threads(32, 8);
  const std::vector<candidate> candidates = {
      {"naive, one element per thread", row_role::competitor,
       [=](cudaStream_t s) { transpose_naive<<<dim3(tiles.x, tiles.y * 4), dim3(32, 8), 0, s>>>(i, o); }},
      {"tile [32][32], unpadded", row_role::competitor,
       [=](cudaStream_t s) { transpose_tiled<coalesce::unpadded><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"tile padded [32][33]", row_role::competitor,
       [=](cudaStream_t s) { transpose_tiled<coalesce::padded><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"tile swizzled (c ^ r)", row_role::competitor,
       [=](cudaStream_t s) { transpose_tiled<coalesce::swizzled><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"coalesce::transpose", row_role::library, [=](cudaStream_t s) { coalesce::transpose(i, o, s); },
       target(targets::transpose_of_peak)},
  };
  for (const auto& c : candidates) {
    out.fill(0.0f);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (out.to_vector() != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 8.0 * double(n * n));
}

}  // namespace bench
