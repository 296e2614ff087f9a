// An experiment, built on demand (target coalesce_experiment_fused_columns, outside ALL): whether
// the 2D fused walk (detail/stencil_fused_walk.hpp) gains from threads that take 4 adjacent
// columns instead of one. One pass of 4 sweeps of the 5-point stencil on 8192 x 8192 floats,
// clamp: coalesce::stencil<1>(4, clamp, u, v, f, fuse{4}) against a hand-written pass.
//
// Why: in the library's pass a thread takes one column of a tile row at a time, L = 8 rows down,
// and reads its window a float at a time. Its sm_90 SASS spends about 13 instructions and 4.25
// shared-memory wavefronts a warp per 32 outputs (26 LDS and 8 STS for 8 outputs a thread), so
// the pass sits nearer the shared-memory bound than the issue bound. Here a warp takes a whole
// region row of 128 floats, a thread a float4 of it: one LDS.128 a row, the elements left and
// right of the float4 from the neighbouring lanes by shuffle, one STS.128 a row: about 2.75
// wavefronts per 32 outputs, if a shuffle costs one. (Scalar side loads instead would hit the
// same bank 4 times a warp, and save nothing.)
//
// The hand-written pass takes only tiles whose region lies inside the matrix (the library's walk
// handles the edges; this asks only what the inner loop is worth): blocks of 32 x 8 threads,
// regions of 64 x 128 floats, tiles of 56 x 120 after 4 sweeps. Its outputs are compared with the
// library's on those tiles, bit for bit (the same sums in the same order).
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/device.hpp>

#include "median_time.hpp"

#include <cstdio>
#include <vector>

using experiments::median_ms;

namespace {

struct five_point {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.2f * (n(0, 0) + n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

constexpr int sweeps = 4, rows_per_thread = 8, threads_y = 8;
constexpr int region_rows = threads_y * rows_per_thread, region_cols = 128;  // 64 x 128
constexpr int tile_rows = region_rows - 2 * sweeps, tile_cols = region_cols - 2 * sweeps;  // 56 x 120

// The 5-point stencil on a float4 of outputs: c the float4 itself, a and b the ones above and
// below, l and r the elements left of c.x and right of c.w. The library's sum, in its order.
__device__ __forceinline__ float point(float centre, float above, float below, float left, float right) {
  return 0.2f * (centre + above + below + left + right);
}
__device__ __forceinline__ float4 five_point_float4(const float4& c, const float4& a, const float4& b, float l,
                                                    float r) {
  return make_float4(point(c.x, a.x, b.x, l, c.y), point(c.y, a.y, b.y, c.x, c.z), point(c.z, a.z, b.z, c.y, c.w),
                     point(c.w, a.w, b.w, c.z, r));
}

// One pass of `sweeps` sweeps: block (bx, by) loads the region at row by * tile_rows, column
// bx * tile_cols, and stores its inner tile; blocks whose region would leave the matrix return.
__global__ void __launch_bounds__(32 * threads_y)
    fused_float4_columns(coalesce::pitched_view<const float> in, coalesce::pitched_view<float> out) {
  extern __shared__ float4 region_words[];  // two regions, 64 KiB: dynamic, opted in at launch
  auto region = reinterpret_cast<float (*)[region_rows][region_cols]>(region_words);
  const int lane = int(threadIdx.x), first_row = int(threadIdx.y) * rows_per_thread;
  const int top = int(blockIdx.y) * tile_rows, left = int(blockIdx.x) * tile_cols;  // the region's corner
  if (top + region_rows > int(in.rows()) || left + region_cols > int(in.cols())) return;
#pragma unroll
  for (int l = 0; l < rows_per_thread; ++l)
    *reinterpret_cast<float4*>(&region[0][first_row + l][4 * lane]) =
        *reinterpret_cast<const float4*>(in.row(std::size_t(top + first_row + l)) + left + 4 * lane);
  // The rows above and below the thread's, kept inside the region (what they give at its edge is
  // read by no output that is kept).
  const int above = first_row > 0 ? first_row - 1 : 0;
  const int below = first_row + rows_per_thread < region_rows ? first_row + rows_per_thread : region_rows - 1;
  for (int s = 1; s <= sweeps; ++s) {
    __syncthreads();
    const auto& from = region[(s - 1) & 1];
    auto& to = region[s & 1];
    float4 a = *reinterpret_cast<const float4*>(&from[above][4 * lane]);
    float4 c = *reinterpret_cast<const float4*>(&from[first_row][4 * lane]);
#pragma unroll
    for (int l = 0; l < rows_per_thread; ++l) {
      const int next = l + 1 < rows_per_thread ? first_row + l + 1 : below;
      const float4 b = *reinterpret_cast<const float4*>(&from[next][4 * lane]);
      // Lane 0's left and lane 31's right are their own elements: the columns they compute with
      // them lie outside every later sweep's region and the tile.
      const float l_elem = __shfl_up_sync(0xffffffffu, c.w, 1);
      const float r_elem = __shfl_down_sync(0xffffffffu, c.x, 1);
      const float4 o = five_point_float4(c, a, b, l_elem, r_elem);
      if (s < sweeps) {
        *reinterpret_cast<float4*>(&to[first_row + l][4 * lane]) = o;
      } else {
        const int li = first_row + l;
        if (li >= sweeps && li < region_rows - sweeps && lane >= 1 && lane < 31)
          *reinterpret_cast<float4*>(out.row(std::size_t(top + li)) + left + 4 * lane) = o;
      }
      a = c;
      c = b;
    }
  }
}

}  // namespace

int main() {
  const std::size_t n = 8192;
  const auto values = coalesce::testing::random_values<float>(n * n);
  coalesce::pitched_matrix<float> u(values, n, n), v(n, n), hand(n, n);
  // The pass reads u; 4 sweeps leave their result in u (timed below again and again: the values
  // change, the time does not).
  const auto library = [&] {
    coalesce::stencil<1>(sweeps, coalesce::clamp, u, v, five_point{}, coalesce::fuse{sweeps});
  };
  coalesce::pitched_matrix<float> source(values, n, n);
  const auto source_view = source.const_view();
  const auto hand_view = hand.view();
  const dim3 grid(unsigned((n - region_cols) / tile_cols + 1), unsigned((n - region_rows) / tile_rows + 1));
  constexpr int shared = 2 * region_rows * region_cols * int(sizeof(float));
  cudaFuncSetAttribute(fused_float4_columns, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  const auto by_hand = [&] { fused_float4_columns<<<grid, dim3(32, threads_y), shared>>>(source_view, hand_view); };
  library();
  by_hand();
  const std::vector<float> want = u.to_vector(), got = hand.to_vector();
  std::size_t compared = 0, differ = 0;
  for (std::size_t by = 0; by < grid.y; ++by)
    for (std::size_t bx = 0; bx < grid.x; ++bx)
      for (std::size_t i = by * tile_rows + sweeps; i < by * tile_rows + region_rows - sweeps; ++i)
        for (std::size_t j = bx * tile_cols + 4; j < bx * tile_cols + region_cols - 4; ++j) {
          ++compared;
          if (got[i * n + j] != want[i * n + j]) ++differ;
        }
  const double library_ms = median_ms(library);
  const double hand_ms = median_ms(by_hand);
  std::printf("one pass of 4 sweeps of the 5-point stencil, 8192 x 8192 floats, clamp\n");
  std::printf("%-60s %.4f ms\n", "coalesce::stencil<1>(4, clamp, u, v, f, fuse{4})", library_ms);
  std::printf("%-60s %.4f ms  %.3fx the library  %zu inner outputs compared, %zu differ\n",
              "hand-written pass, a float4 of columns a thread, shuffles", hand_ms, library_ms / hand_ms, compared,
              differ);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess && differ == 0 ? 0 : 1;
}
