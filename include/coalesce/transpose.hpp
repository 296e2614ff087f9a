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

// 64 x 64 padded tiles ([64][65] underneath, conflict-free both ways). Measured on an NVIDIA H200,
// CUDA 13.0, 8192 x 8192, ratio to cudaMemcpy: floats 0.84 with 64 x 16 threads and 4 loads in
// flight per thread (32 x 8 threads: 0.63; 16-byte loads: no better), doubles 0.96 with 64 x 8
// threads and 8 loads in flight (32 x 32 tiles: 0.88).
template <std::size_t Bytes>
struct transpose_shape;
template <>
struct transpose_shape<4> {
  static constexpr std::size_t tile = 64;
  static constexpr unsigned block_rows = 16, batch = 4;
};
template <>
struct transpose_shape<8> {
  static constexpr std::size_t tile = 64;
  static constexpr unsigned block_rows = 8, batch = 8;
};

template <class T, std::size_t Tile, unsigned BlockRows, unsigned Batch, bool Vectorize>
__global__ void __launch_bounds__(32 * BlockRows) transpose_kernel(pitched_view<const T> in, pitched_view<T> out) {
  __shared__ shared_tile<T, Tile, Tile> tile;
  const std::size_t tile_rows = (in.rows() + Tile - 1) / Tile;
  const std::size_t tile_cols = (in.cols() + Tile - 1) / Tile;
  for (std::size_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y)
    for (std::size_t tc = blockIdx.x; tc < tile_cols; tc += gridDim.x) {
      tile.template load<Batch, Vectorize>(in, tr * Tile, tc * Tile);
      __syncthreads();
      tile.store_transposed(out, tc * Tile, tr * Tile);
      __syncthreads();  // the next tile overwrites this one
    }
}

template <class T, std::size_t Tile, unsigned BlockRows, unsigned Batch, bool Vectorize>
void launch_transpose(pitched_view<const T> in, pitched_view<T> out, cudaStream_t stream) {
  constexpr std::size_t most_blocks_per_dimension = 65535;
  const std::size_t tile_rows = (in.rows() + Tile - 1) / Tile;
  const std::size_t tile_cols = (in.cols() + Tile - 1) / Tile;
  const dim3 grid(unsigned(tile_cols < most_blocks_per_dimension ? tile_cols : most_blocks_per_dimension),
                  unsigned(tile_rows < most_blocks_per_dimension ? tile_rows : most_blocks_per_dimension));
  transpose_kernel<T, Tile, BlockRows, Batch, Vectorize><<<grid, dim3(32, BlockRows), 0, stream>>>(in, out);
  throw_on_error(::cudaGetLastError(), "coalesce::transpose kernel launch");
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
  using shape = detail::transpose_shape<sizeof(T)>;
  detail::launch_transpose<T, shape::tile, shape::block_rows, shape::batch, false>(in, out, stream);
}

// The same for a writable input view.
template <class T>
void transpose(pitched_view<T> in, pitched_view<T> out, cudaStream_t stream = 0) {
  transpose(pitched_view<const T>(in), out, stream);
}

}  // namespace coalesce
