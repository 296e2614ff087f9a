// expect: coalesce::shared_tile: this layout has bank conflicts when a warp reads a column; use coalesce::padded
#include <coalesce/shared_tile.hpp>

__global__ void misuse(float* out) {
  __shared__ coalesce::shared_tile<float, 32, 32, coalesce::unpadded> tile;  // [32][32]: 32-way columns
  tile(threadIdx.y, threadIdx.x) = 1.0f;
  __syncthreads();
  out[threadIdx.x] = tile(threadIdx.x, threadIdx.y);
}
