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

unsigned blocks_for(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

__global__ void strided_copy(const float* in, float* out, std::size_t n, std::size_t stride) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
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
  for (std::size_t r = blockIdx.x * std::size_t(blockDim.y) + threadIdx.y; r < in.rows(); r += std::size_t(gridDim.x) * blockDim.y)
    for (std::size_t c = threadIdx.x; c < in.cols(); c += blockDim.x) out(r, c) = in(r, c);
}

}  // namespace

void stride_sweep(runner& r) {
  const std::string group = "stride sweep: out[i] = in[i * stride] (floats)";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 24;
  const std::size_t max_stride = 32;
  const auto values = ct::random_values<float>(n * max_stride);
  ct::device_buffer<float> in(values), out(n);
  for (std::size_t stride : {1, 2, 3, 4, 8, 16, 32}) {
    auto launch = [&, stride](cudaStream_t s) { strided_copy<<<blocks_for(n, 256), 256, 0, s>>>(in.data(), out.data(), n, stride); };
    launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 4099)
      if (got[i] != values[i * stride]) {
        r.mismatch(group + ": stride " + std::to_string(stride));
        break;
      }
    r.run(group, "stride " + std::to_string(stride), 8.0 * double(n), launch);
  }
}

void misaligned_base(runner& r) {
  const std::string group = "misaligned base: out[i] = in[i] from in + offset floats";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 26;
  const auto values = ct::random_values<float>(n + 32);
  ct::device_buffer<float> in(values), out(n);
  for (std::size_t offset : {0, 1, 2, 4, 8, 16, 31}) {
    auto launch = [&, offset](cudaStream_t s) { offset_copy<<<blocks_for(n, 256), 256, 0, s>>>(in.data() + offset, out.data(), n); };
    launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 4099)
      if (got[i] != values[i + offset]) {
        r.mismatch(group + ": offset " + std::to_string(offset));
        break;
      }
    r.run(group, "offset " + std::to_string(offset) + " floats (" + std::to_string(offset * 4) + " B)", 8.0 * double(n),
          launch);
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

  const std::vector<candidate> candidates = {
      {"AoS Vec3*, one element per thread",
       [&](cudaStream_t s) { x_of_aos<<<blocks_for(n, 256), 256, 0, s>>>(aos.data(), out.data(), n); }},
      {"soa_view<Vec3>, one element per thread",
       [&](cudaStream_t s) { x_of_soa<<<blocks_for(n, 256), 256, 0, s>>>(v, out.data(), n); }},
      {"coalesce::transform(soa_view, span)",
       [&](cudaStream_t s) { coalesce::transform(v, cuda::std::span<float>(out.data(), n), twice_x{}, s); }},
  };
  for (const auto& c : candidates) {
    out.poison();
    c.launch(0);
    const auto got = out.download();
    for (std::size_t i = 0; i < n; i += 997)
      if (got[i] != points[i].x * 2.0f) {
        r.mismatch(group + ": " + c.name);
        break;
      }
    r.run(group, c.name, 8.0 * double(n), c.launch);
  }
}

void pitched_vs_dense(runner& r) {
  const std::string group = "pitched vs dense rows: row copy, 200000 rows";
  std::printf("%s\n", group.c_str());
  const std::size_t rows = 200000;
  for (std::size_t cols : {1000, 1001}) {
    const auto values = ct::random_values<float>(rows * cols);
    // Dense: rows packed back to back (aligned_rows<4>: the pitch is the row's own size).
    coalesce::pitched_matrix<float, coalesce::device_space, coalesce::aligned_rows<4>> dense_in(values, rows, cols),
        dense_out(rows, cols);
    coalesce::pitched_matrix<float> pitched_in(values, rows, cols), pitched_out(rows, cols);
    struct candidate {
      std::string name;
      coalesce::pitched_view<const float> in;
      coalesce::pitched_view<float> out;
      bool library;
    };
    const std::string width = std::to_string(cols) + " floats";
    const std::vector<candidate> candidates = {
        {"dense rows of " + width + ", row walk", dense_in.const_view(), dense_out.view(), false},
        {"pitched rows of " + width + ", row walk", pitched_in.const_view(), pitched_out.view(), false},
        {"pitched rows of " + width + ", coalesce::transform", pitched_in.const_view(), pitched_out.view(), true},
    };
    for (const auto& c : candidates) {
      auto launch = [&c, rows](cudaStream_t s) {
        if (c.library) {
          coalesce::transform(c.in, c.out, same_value{}, s);
        } else {
          row_copy<<<unsigned((rows + 3) / 4), dim3(128, 4), 0, s>>>(c.in, c.out);
        }
      };
      launch(0);
      ct::check_sync(c.name.c_str());
      const bool is_dense = c.out.pitch_bytes() == cols * sizeof(float);
      if ((is_dense ? dense_out.to_vector() : pitched_out.to_vector()) != values) r.mismatch(group + ": " + c.name);
      r.run(group, c.name, 8.0 * double(rows * cols), launch);
    }
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
      {"naive, one element per thread",
       [=](cudaStream_t s) { transpose_naive<<<dim3(tiles.x, tiles.y * 4), dim3(32, 8), 0, s>>>(i, o); }},
      {"tile [32][32], unpadded", [=](cudaStream_t s) { transpose_tiled<coalesce::unpadded><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"tile padded [32][33]", [=](cudaStream_t s) { transpose_tiled<coalesce::padded><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"tile swizzled (c ^ r)", [=](cudaStream_t s) { transpose_tiled<coalesce::swizzled><<<tiles, tile_threads, 0, s>>>(i, o); }},
      {"coalesce::transpose", [=](cudaStream_t s) { coalesce::transpose(i, o, s); }},
  };
  for (const auto& c : candidates) {
    out.fill(0.0f);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (out.to_vector() != expected) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 8.0 * double(n * n), c.launch);
  }
}

}  // namespace bench
