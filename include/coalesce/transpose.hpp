// coalesce: out = transpose(in) for pitched matrices, at copy bandwidth. Each block stages a tile
// through a conflict-free shared_tile, so both the global reads (rows of `in`) and the global
// writes (rows of `out`) are coalesced. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/shared_tile.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace coalesce {
namespace detail {

// 32 x 32 tiles and 32 x 8 threads: each thread moves four elements each way with four loads in
// flight (see shared_tile_view::load), and a float tile's rows take float4 loads whose
// conflict-free shared stores the padded layout guarantees (rows 33 words apart).
inline constexpr std::size_t transpose_tile = 32;
inline constexpr unsigned transpose_block_rows = 8;

template <class T>
__global__ void __launch_bounds__(transpose_tile * transpose_block_rows)
    transpose_kernel(pitched_view<const T> in, pitched_view<T> out) {
  __shared__ shared_tile<T, transpose_tile, transpose_tile> tile;
  const std::size_t tile_rows = (in.rows() + transpose_tile - 1) / transpose_tile;
  const std::size_t tile_cols = (in.cols() + transpose_tile - 1) / transpose_tile;
  for (std::size_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y)
    for (std::size_t tc = blockIdx.x; tc < tile_cols; tc += gridDim.x) {
      tile.load(in, tr * transpose_tile, tc * transpose_tile);
      __syncthreads();
      tile.store_transposed(out, tc * transpose_tile, tr * transpose_tile);
      __syncthreads();  // the next tile overwrites this one
    }
}

}  // namespace detail

// out(c, r) = in(r, c) for every element, asynchronously on `stream`. T is a 4- or 8-byte type;
// in and out must not overlap. Throws std::invalid_argument if out is not in.cols() x in.rows(),
// coalesce::cuda_error if the launch fails.
template <class T>
void transpose(pitched_view<const T> in, pitched_view<T> out, cudaStream_t stream = 0) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "coalesce::transpose: T must be a 4- or 8-byte type (float, int, double, ...)");
  if (out.rows() != in.cols() || out.cols() != in.rows())
    throw std::invalid_argument("coalesce::transpose: a " + std::to_string(in.rows()) + " x " + std::to_string(in.cols()) +
                                " input needs a " + std::to_string(in.cols()) + " x " + std::to_string(in.rows()) +
                                " output, not " + std::to_string(out.rows()) + " x " + std::to_string(out.cols()));
  if (in.empty()) return;
  constexpr std::size_t most_blocks_per_dimension = 65535;
  const std::size_t tile_rows = (in.rows() + detail::transpose_tile - 1) / detail::transpose_tile;
  const std::size_t tile_cols = (in.cols() + detail::transpose_tile - 1) / detail::transpose_tile;
  const dim3 grid(unsigned(tile_cols < most_blocks_per_dimension ? tile_cols : most_blocks_per_dimension),
                  unsigned(tile_rows < most_blocks_per_dimension ? tile_rows : most_blocks_per_dimension));
  detail::transpose_kernel<T><<<grid, dim3(detail::transpose_tile, detail::transpose_block_rows), 0, stream>>>(in, out);
  throw_on_error(::cudaGetLastError(), "coalesce::transpose kernel launch");
}

// The same for a writable input view.
template <class T>
void transpose(pitched_view<T> in, pitched_view<T> out, cudaStream_t stream = 0) {
  transpose(pitched_view<const T>(in), out, stream);
}

}  // namespace coalesce
