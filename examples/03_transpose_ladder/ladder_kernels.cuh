// The transpose ladder's kernels, shared by the example and coalesce's benchmark: the naive
// transpose and the textbook 32 x 32 tiled one, whose only change between rungs is the tile's policy.
#pragma once

#include <coalesce/pitched_matrix.hpp>
#include <coalesce/shared_tile.hpp>

using coalesce::pitched_view;

// Rung 1: one element per thread. Reads are coalesced; writes stride by a whole row.
template <class T>
__global__ void transpose_naive(pitched_view<const T> in, pitched_view<T> out) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t r = blockIdx.y * std::size_t(blockDim.y) + threadIdx.y;
  if (r < in.rows() && c < in.cols()) out(c, r) = in(r, c);
}

// Rungs 2-4: the textbook tiled transpose, 32 x 8 threads per 32 x 32 tile. Only the tile's
// policy changes between rungs; the code is what a user writes with __shared__ float t[32][32].
// The matrix's sides must be multiples of 32.
template <class Policy, class T>
__global__ void transpose_tiled(pitched_view<const T> in, pitched_view<T> out) {
  __shared__ coalesce::shared_tile<T, 32, 32, Policy, coalesce::access::unchecked> tile;
  const std::size_t row0 = blockIdx.y * std::size_t(32), col0 = blockIdx.x * std::size_t(32);
  for (unsigned j = threadIdx.y; j < 32; j += 8) tile(j, threadIdx.x) = in(row0 + j, col0 + threadIdx.x);
  __syncthreads();
  for (unsigned j = threadIdx.y; j < 32; j += 8) out(col0 + j, row0 + threadIdx.x) = tile(threadIdx.x, j);
}
