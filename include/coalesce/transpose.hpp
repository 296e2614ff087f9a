// coalesce: out = transpose(in) for pitched matrices, at copy bandwidth. Each block stages a tile
// through a conflict-free shared_tile, so both the global reads (rows of `in`) and the global
// writes (rows of `out`) are coalesced. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/transpose.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/shared_tile.hpp>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>

namespace coalesce {
namespace detail {

// Shapes measured on an NVIDIA H200, CUDA 13.0, 8192 x 8192, as ratios to cudaMemcpy. Doubles:
// 64 x 64 padded tiles ([64][65] underneath, conflict-free both ways), 32 x 8 threads with 8
// loads in flight each, 0.97-0.98 (32 x 32 tiles: 0.88). Floats element by element top out at
// 0.85 (64 x 16 threads; float4 loads no better, the textbook [32][33] kernel 0.86-0.89), so they
// move as 8-byte pairs instead (transpose_pairs_kernel): 0.96.
struct double_transpose_shape {
  static constexpr std::size_t tile = 64;
  static constexpr unsigned block_rows = 8, batch = 8;
};

template <class T, std::size_t Tile, unsigned BlockRows, unsigned Batch, bool Vectorize>
__global__ void __launch_bounds__(32 * BlockRows) transpose_kernel(pitched_view<const T> in, pitched_view<T> out) {
  using tile_type = shared_tile<T, Tile, Tile>;
  // The tile's accesses are shared_tile's own, certified where the tile is declared (its default
  // promise, access::rows_and_columns): load stores 32 consecutive elements of a tile row per warp
  // instruction (layout::row_access), store_transposed reads 32 of a tile column
  // (layout::column_access). A warp's 32 threads stay in one line only when a line is a multiple
  // of 32; the budget is the ideal, 128 bytes per wavefront, both ways.
  static_assert(Tile % 32 == 0,
                "coalesce::detail::transpose_kernel: Tile must be a multiple of 32 (whole warps per tile line)");
  static_assert(tile_type::layout::conflict_free_rows && tile_type::layout::conflict_free_columns,
                "coalesce::detail::transpose_kernel: the tile's row stores and column reads must be conflict-free");
  __shared__ tile_type tile;
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

// 4-byte elements move as 8-byte pairs: each thread loads (r, 2l..2l+1) of four input rows, and
// stores (2l, c), (2l+1, c) of the tile as one pair of an output row. The bytes per access, and
// so the bytes in flight, are those of the double transpose that reaches copy speed; the price
// is a 2-way bank conflict on the tile's scalar accesses, which shared memory absorbs. Tiles cut
// by the matrix edge take the general shared_tile path (certified by shared_tile itself).
template <class T>
__global__ void __launch_bounds__(512) transpose_pairs_kernel(pitched_view<const T> in, pitched_view<T> out) {
  static_assert(sizeof(T) == 4, "transpose_pairs_kernel moves 4-byte elements in pairs");
  constexpr std::size_t tile_size = 64;
  constexpr unsigned rows_per_pass = 16, passes = tile_size / rows_per_pass;  // blockDim (32, 16)
  using tile_type = shared_tile<T, tile_size, tile_size>;
  using layout = typename tile_type::layout;
  // The tile's four warp instructions, declared once and used below as the tile's indices. Lane l
  // stores elements 2l and 2l + 1 of a tile row, and loads elements 2l and 2l + 1 of a tile column.
  // On the [64][65] tile both are stride-2 lanes: lanes l and l + 16 share a bank, so each takes
  // 2 wavefronts where the ideal is 1. The assertions hold the conflict at exactly 2-way, so that
  // neither a regression nor an improvement goes unnoticed.
  constexpr warp_access even_column_stores = warp_access::along_row(2);
  constexpr warp_access odd_column_stores = even_column_stores.from(0, 1);
  constexpr warp_access even_row_loads = warp_access::along_column(2);
  constexpr warp_access odd_row_loads = even_row_loads.from(1, 0);
  static_assert(layout::wavefronts(even_column_stores) == 2 * layout::ideal_wavefronts(even_column_stores) &&
                    layout::wavefronts(odd_column_stores) == 2 * layout::ideal_wavefronts(odd_column_stores),
                "coalesce::detail::transpose_pairs_kernel: the pair stores along a tile row are meant to conflict "
                "exactly 2-way");
  static_assert(layout::wavefronts(even_row_loads) == 2 * layout::ideal_wavefronts(even_row_loads) &&
                    layout::wavefronts(odd_row_loads) == 2 * layout::ideal_wavefronts(odd_row_loads),
                "coalesce::detail::transpose_pairs_kernel: the pair loads along a tile column are meant to conflict "
                "exactly 2-way");
  __shared__ tile_type tile;
  const std::size_t tile_rows = (in.rows() + tile_size - 1) / tile_size;
  const std::size_t tile_cols = (in.cols() + tile_size - 1) / tile_size;
  const bool pitches_allow_pairs = in.pitch_bytes() % 8 == 0 && out.pitch_bytes() % 8 == 0 &&
                                   reinterpret_cast<std::uintptr_t>(in.data()) % 8 == 0 &&
                                   reinterpret_cast<std::uintptr_t>(out.data()) % 8 == 0;
  const unsigned lane = threadIdx.x, row = threadIdx.y;
  for (std::size_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y)
    for (std::size_t tc = blockIdx.x; tc < tile_cols; tc += gridDim.x) {
      const std::size_t r0 = tr * tile_size, c0 = tc * tile_size;
      if (pitches_allow_pairs && r0 + tile_size <= in.rows() && c0 + tile_size <= in.cols()) {
        vector_chunk<T, 2> v[passes];
#  pragma unroll
        for (unsigned k = 0; k < passes; ++k)
          v[k] = *reinterpret_cast<const vector_chunk<T, 2>*>(in.row(r0 + row + k * rows_per_pass) + c0 + 2 * lane);
#  pragma unroll
        for (unsigned k = 0; k < passes; ++k) {
          const unsigned r = row + k * rows_per_pass;
          tile(r + even_column_stores.row(lane), even_column_stores.col(lane)) = v[k][0];
          tile(r + odd_column_stores.row(lane), odd_column_stores.col(lane)) = v[k][1];
        }
        __syncthreads();
#  pragma unroll
        for (unsigned k = 0; k < passes; ++k) {
          const unsigned c = row + k * rows_per_pass;
          const T first = tile(even_row_loads.row(lane), c + even_row_loads.col(lane));
          const T second = tile(odd_row_loads.row(lane), c + odd_row_loads.col(lane));
          *reinterpret_cast<vector_chunk<T, 2>*>(out.row(c0 + c) + r0 + 2 * lane) = vector_chunk<T, 2>{{first, second}};
        }
      } else {
        tile.load(in, r0, c0);
        __syncthreads();
        tile.store_transposed(out, c0, r0);
      }
      __syncthreads();  // the next tile overwrites this one
    }
}

template <class T, std::size_t Tile, unsigned BlockRows, unsigned Batch, bool Vectorize>
void launch_transpose(pitched_view<const T> in, pitched_view<T> out, cudaStream_t stream) {
  throw_if_earlier_error("coalesce::transpose kernel launch");
  const dim3 grid = strided_grid_2d((in.cols() + Tile - 1) / Tile, (in.rows() + Tile - 1) / Tile);
  transpose_kernel<T, Tile, BlockRows, Batch, Vectorize><<<grid, dim3(32, BlockRows), 0, stream>>>(in, out);
  throw_if_launch_failed("coalesce::transpose kernel launch");
}

template <class T>
void launch_transpose_pairs(pitched_view<const T> in, pitched_view<T> out, cudaStream_t stream) {
  throw_if_earlier_error("coalesce::transpose kernel launch");
  constexpr std::size_t tile = 64;
  const dim3 grid = strided_grid_2d((in.cols() + tile - 1) / tile, (in.rows() + tile - 1) / tile);
  transpose_pairs_kernel<T><<<grid, dim3(32, 16), 0, stream>>>(in, out);
  throw_if_launch_failed("coalesce::transpose kernel launch");
}

}  // namespace detail

/// out(c, r) = in(r, c) for every element, asynchronously on `stream`. T is a 4- or 8-byte type;
/// in and out must not overlap. Throws std::invalid_argument if out is not in.cols() x in.rows(),
/// coalesce::cuda_error if the launch fails.
template <class T>
void transpose(pitched_view<const T> in, pitched_view<T> out, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transpose");
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "coalesce::transpose: T must be a 4- or 8-byte type (float, int, double, ...)");
  if (out.rows() != in.cols() || out.cols() != in.rows())
    throw std::invalid_argument("coalesce::transpose: a " + std::to_string(in.rows()) + " x " +
                                std::to_string(in.cols()) + " input needs a " + std::to_string(in.cols()) + " x " +
                                std::to_string(in.rows()) + " output, not " + std::to_string(out.rows()) + " x " +
                                std::to_string(out.cols()));
  if (in.empty()) return;
  if constexpr (sizeof(T) == 4) {
    detail::launch_transpose_pairs(in, out, stream);
  } else {
    using shape = detail::double_transpose_shape;
    detail::launch_transpose<T, shape::tile, shape::block_rows, shape::batch, false>(in, out, stream);
  }
}

/// The same for a writable input view.
template <class T>
void transpose(pitched_view<T> in, pitched_view<T> out, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transpose");
  transpose(pitched_view<const T>(in), out, stream);
}

}  // namespace coalesce

#endif  // __CUDACC__
