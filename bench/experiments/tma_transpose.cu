// An experiment, built on demand (target coalesce_experiment_tma_transpose, outside ALL, sm_90
// only): the hand-written transpose through Hopper's tensor memory accelerator that issue 36 sets
// coalesce::transpose against (">= 1.0 x the best hand-written TMA transpose"), timed beside
// coalesce::transpose and a cudaMemcpy of the same bytes on 8192 x 8192 floats, its result
// compared with coalesce::transpose's element for element.
//
// A block of 64 threads takes one 32 x 32 tile. One thread asks the engine for the tile
// (cp.async.bulk.tensor.2d through a tensor map built on the host, 128-byte swizzle: the 16-byte
// chunk k of tile row r lands at chunk k ^ (r % 8)), the block waits on a shared-memory barrier,
// each thread moves a 4 x 4 block of the tile into a second, transposed tile, and one thread asks
// the engine to write that tile to the output. Thread t takes tile rows 4i .. 4i + 3 (i = t / 8)
// and chunk k = t % 8: its four 16-byte reads are conflict-free (8 threads of a quarter warp read
// the 8 chunks of one row), and its four 16-byte writes go to rows 4k + m of the second tile,
// taken in the order m = (s + k / 2) % 4 at step s, so that the 8 rows a quarter warp writes fall
// in 8 different swizzle positions (without the rotation, 4-way conflicts).
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/testing/device.hpp>
#include <coalesce/transpose.hpp>

#include "median_time.hpp"

#include <cuda.h>
#include <cuda/ptx>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstdio>
#include <vector>

using experiments::median_ms;

namespace {

constexpr int tile = 32, threads = 64;

// Byte offset of 16-byte chunk `chunk` of row `row` in a 32 x 32 float tile written by the engine
// with the 128-byte swizzle.
__device__ __forceinline__ unsigned swizzled(unsigned row, unsigned chunk) {
  return row * 128 + ((chunk ^ (row % 8)) * 16);
}

__device__ __forceinline__ float component(const float4& v, unsigned m) {
  return m == 0 ? v.x : m == 1 ? v.y : m == 2 ? v.z : v.w;
}

__global__ void __launch_bounds__(threads)
    tma_transpose(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map) {
  __shared__ __align__(1024) unsigned char loaded[tile * tile * sizeof(float)];
  __shared__ __align__(1024) unsigned char transposed[tile * tile * sizeof(float)];
  __shared__ std::uint64_t barrier;
  const unsigned t = threadIdx.x;
  const int c0 = int(blockIdx.x) * tile, r0 = int(blockIdx.y) * tile;
  if (t == 0) {
    cuda::ptx::mbarrier_init(&barrier, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  if (t == 0) {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         &barrier, unsigned(sizeof(loaded)));
    const std::int32_t at[2] = {c0, r0};  // innermost (column) first
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, loaded, &in_map, at, &barrier);
  }
  while (!cuda::ptx::mbarrier_try_wait_parity(&barrier, 0u)) {
  }
  const unsigned i = t / 8, k = t % 8;
  float4 a[4];
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) a[j] = *reinterpret_cast<const float4*>(loaded + swizzled(4 * i + j, k));
  const unsigned rotation = k / 2;
#pragma unroll
  for (unsigned s = 0; s < 4; ++s) {
    const unsigned m = (s + rotation) % 4;  // column 4k + m of the tile becomes row 4k + m
    const float4 b = make_float4(component(a[0], m), component(a[1], m), component(a[2], m), component(a[3], m));
    *reinterpret_cast<float4*>(transposed + swizzled(4 * k + m, i)) = b;
  }
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // the writes, seen by the engine
  __syncthreads();
  if (t == 0) {
    const std::int32_t at[2] = {r0, c0};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &out_map, at, transposed);
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});  // the tile outlives its read
  }
}

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
}

// The tensor map of a pitched matrix of floats, read and written in 32 x 32 boxes, 128-byte swizzle.
bool tile_map(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap& map, coalesce::pitched_view<float> m) {
  const cuuint64_t dims[2] = {m.cols(), m.rows()};
  const cuuint64_t strides[1] = {m.pitch_bytes()};
  const cuuint32_t box[2] = {tile, tile};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, m.data(), dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

int main() {
  const std::size_t n = 8192;
  coalesce::pitched_matrix<float> in(coalesce::testing::random_values<float>(n * n), n, n), expected(n, n), out(n, n);
  const auto encode = encode_tiled();
  CUtensorMap in_map{}, out_map{};
  if (encode == nullptr || !tile_map(encode, in_map, in.view()) || !tile_map(encode, out_map, out.view()))
    return std::printf("no tensor map: cuTensorMapEncodeTiled missing or refused the shape\n"), 1;
  const auto library = [&] { coalesce::transpose(in.view(), expected.view()); };
  const auto by_tma = [&] {
    tma_transpose<<<dim3(unsigned(n / tile), unsigned(n / tile)), threads>>>(in_map, out_map);
  };
  library();
  by_tma();
  const bool same = out.to_vector() == expected.to_vector();
  const std::size_t bytes = n * n * sizeof(float);
  float* copy_to = out.view().data();
  const float* copy_from = in.view().data();
  const double copy_ms = median_ms([&] { cudaMemcpyAsync(copy_to, copy_from, bytes, cudaMemcpyDeviceToDevice); });
  const double library_ms = median_ms(library);
  const double tma_ms = median_ms(by_tma);
  std::printf("transpose of 8192 x 8192 floats (a read and a write of %zu bytes)\n", bytes);
  std::printf("%-52s %.4f ms\n", "cudaMemcpy of the same bytes", copy_ms);
  std::printf("%-52s %.4f ms  %.1f%% of the copy\n", "coalesce::transpose", library_ms, 100.0 * copy_ms / library_ms);
  std::printf("%-52s %.4f ms  %.1f%% of the copy  %.3fx coalesce::transpose  %s\n",
              "hand-written TMA, 32 x 32 tiles, 64 threads a tile", tma_ms, 100.0 * copy_ms / tma_ms,
              library_ms / tma_ms, same ? "" : "MISMATCH");
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess && same ? 0 : 1;
}
