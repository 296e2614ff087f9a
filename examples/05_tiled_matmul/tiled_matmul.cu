// The matrix-multiply ladder on shared_tile, C = A * B for 4096 x 4096 floats, against cuBLAS
// SGEMM in the same run: naive (every operand from global memory), 32 x 32 shared tiles (each
// operand element read from DRAM once per tile), and 128 x 128 block tiles with 8 x 8 outputs per
// thread held in registers (each shared read feeds eight multiply-adds).
// Exits 77 (skipped) when there is no GPU, 1 when a rung disagrees with cuBLAS.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/shared_tile.hpp>
#include <coalesce/testing/testing.hpp>

#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_view;

// Rung 1: one output per thread, operands straight from global memory.
__global__ void matmul_naive(pitched_view<const float> a, pitched_view<const float> b, pitched_view<float> c) {
  const std::size_t col = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t row = blockIdx.y * std::size_t(blockDim.y) + threadIdx.y;
  if (row >= c.rows() || col >= c.cols()) return;
  float sum = 0.0f;
  for (std::size_t k = 0; k < a.cols(); ++k) sum += a(row, k) * b(k, col);
  c(row, col) = sum;
}

// Rung 2: 32 x 32 tiles of A and B staged in shared memory; one output per thread.
__global__ void matmul_shared(pitched_view<const float> a, pitched_view<const float> b, pitched_view<float> c) {
  __shared__ coalesce::shared_tile<float, 32, 32> a_tile, b_tile;
  const std::size_t row0 = blockIdx.y * std::size_t(32), col0 = blockIdx.x * std::size_t(32);
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  float sum = 0.0f;
  for (std::size_t k0 = 0; k0 < a.cols(); k0 += 32) {
    a_tile.load(a, row0, k0);
    b_tile.load(b, k0, col0);
    __syncthreads();
#pragma unroll 8
    for (unsigned k = 0; k < 32; ++k) sum += a_tile(ty, k) * b_tile(k, tx);
    __syncthreads();
  }
  c(row0 + ty, col0 + tx) = sum;
}

// Rung 3: 128 x 128 outputs per block of 16 x 16 threads, 8 x 8 per thread in registers, K in
// steps of 8. Thread (tx, ty) owns rows ty + 16i and columns tx + 16j: a warp's B reads are 16
// consecutive floats (conflict-free) and its A reads two broadcast addresses.
__global__ void __launch_bounds__(256)
    matmul_registers(pitched_view<const float> a, pitched_view<const float> b, pitched_view<float> c) {
  constexpr unsigned tile = 128, depth = 8, per_thread = 8, threads = 16;
  __shared__ coalesce::shared_tile<float, tile, depth> a_tile;
  __shared__ coalesce::shared_tile<float, depth, tile> b_tile;
  const std::size_t row0 = blockIdx.y * std::size_t(tile), col0 = blockIdx.x * std::size_t(tile);
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  float acc[per_thread][per_thread] = {};
  for (std::size_t k0 = 0; k0 < a.cols(); k0 += depth) {
    a_tile.load(a, row0, k0);
    b_tile.load(b, k0, col0);
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < depth; ++k) {
      float a_col[per_thread], b_row[per_thread];
#pragma unroll
      for (unsigned i = 0; i < per_thread; ++i) a_col[i] = a_tile(ty + threads * i, k);
#pragma unroll
      for (unsigned j = 0; j < per_thread; ++j) b_row[j] = b_tile(k, tx + threads * j);
#pragma unroll
      for (unsigned i = 0; i < per_thread; ++i)
#pragma unroll
        for (unsigned j = 0; j < per_thread; ++j) acc[i][j] += a_col[i] * b_row[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (unsigned i = 0; i < per_thread; ++i)
#pragma unroll
    for (unsigned j = 0; j < per_thread; ++j) c(row0 + ty + threads * i, col0 + tx + threads * j) = acc[i][j];
}

int main() {
  const std::size_t n = 4096;  // a multiple of 128: the tiled rungs assume whole tiles
  std::printf("C = A * B, %zu x %zu floats\n", n, n);
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the measurements need a GPU (%s)\n", reason->c_str());
    return 77;
  }
  coalesce::pitched_matrix<float> a(ct::random_values<float>(n * n, ct::test_seed()), n, n);
  coalesce::pitched_matrix<float> b(ct::random_values<float>(n * n, ct::test_seed() + 1), n, n);
  coalesce::pitched_matrix<float> c(n, n), reference(n, n);

  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasCreate failed\n");
    return 1;
  }
  const float one = 1.0f, zero = 0.0f;
  const int ld = int(a.pitch_bytes() / sizeof(float));
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
  auto cublas = [&](cudaStream_t s) {
    cublasSetStream(handle, s);
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b.data(), ld, a.data(), ld, &zero,
                reference.data(), ld);
  };
  cublas(0);
  const auto expected = reference.to_vector();

  const double flops = 2.0 * double(n) * n * n;
  const auto cublas_ms = ct::median(ct::time_launches_ms(cublas));
  std::printf("%-34s %10s %12s\n", "rung", "TFLOP/s", "of cuBLAS");
  std::printf("%-34s %10.2f %11.1f%%\n", "cuBLAS SGEMM", flops / (cublas_ms * 1e9), 100.0);
  struct rung {
    const char* name;
    void (*launch)(pitched_view<const float>, pitched_view<const float>, pitched_view<float>, std::size_t,
                   cudaStream_t);
  };
  const rung rungs[] = {
      {"naive",
       [](auto a, auto b, auto c, std::size_t n, cudaStream_t s) {
         matmul_naive<<<dim3(unsigned(n / 32), unsigned(n / 8)), dim3(32, 8), 0, s>>>(a, b, c);
       }},
      {"32 x 32 shared tiles",
       [](auto a, auto b, auto c, std::size_t n, cudaStream_t s) {
         matmul_shared<<<dim3(unsigned(n / 32), unsigned(n / 32)), dim3(32, 32), 0, s>>>(a, b, c);
       }},
      {"128 x 128 tiles, 8 x 8 registers",
       [](auto a, auto b, auto c, std::size_t n, cudaStream_t s) {
         matmul_registers<<<dim3(unsigned(n / 128), unsigned(n / 128)), dim3(16, 16), 0, s>>>(a, b, c);
       }},
  };
  bool correct = true;
  for (const auto& r : rungs) {
    auto launch = [&](cudaStream_t s) {
      r.launch(a.const_view(), b.const_view(), c.view(), n, s);
      ct::check_launch(r.name);
    };
    c.fill(0.0f);
    launch(0);
    const auto got = c.to_vector();
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::fmax(worst, std::fabs(double(got[i]) - expected[i]) / (1.0 + std::fabs(double(expected[i]))));
    const auto ms = ct::median(ct::time_launches_ms(launch, ct::timing_options{1, 5, cudaStream_t{}}));
    std::printf("%-34s %10.2f %11.1f%%   (max relative difference %.1e)\n", r.name, flops / (ms * 1e9),
                100.0 * cublas_ms / ms, worst);
    correct = correct && worst < 1e-3;
  }
  cublasDestroy(handle);
  if (!correct) {
    std::printf("MISMATCH: a rung disagrees with cuBLAS\n");
    return 1;
  }
  return 0;
}
