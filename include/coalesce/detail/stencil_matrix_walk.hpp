// coalesce::detail: the stencil walks of a matrix - the band walk (a thread per vector of
// outputs in K rows) and the element walk for what it cannot take. Users never include this
// header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/tuple>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The band walk: a thread per vector of V = 16 / sizeof(T) outputs (4 floats) of K consecutive
// rows, blocks of 256 threads shaped bx x by (bx vectors across, by bands down). Each thread loads,
// for each input row r0 - R .. r0 + K - 1 + R, the 16-byte vector over its outputs' columns and
// the R elements on either side, all through the read-only path. Two reuses keep DRAM at one read
// of each input element: a thread's K rows share their 2R halo rows in registers, and a block's
// by bands are neighbours in the matrix, so the halo rows one band reads are L1 hits of the band
// next to it rather than L2 traffic. One row-major vector a thread (K = 1, 256 across) leaves
// every halo row to L2 and is slower: the stencils benchmark holds both designs, written by hand,
// as competitors ("float4 chunks" and "float4 bands").
inline constexpr unsigned stencil_block_threads = 256;

// The walk's shape for radius R, vectors of V, inputs Ts: K rows per thread while a thread's
// patches, (K + 2R) x (V + 2R) elements of every input, fit in about 72 registers; blocks 64
// vectors wide for R = 1 and 32 wide (more bands, more vertical reuse) beyond it.
template <int R, int V, class... Ts>
struct band_shape {
  static constexpr std::size_t words_per_row = (((std::size_t(V + 2 * R) * sizeof(Ts) + 3) / 4) + ...);
  static constexpr std::size_t register_budget = 72;
  static constexpr int preferred = R == 1 ? 2 : 4;
  static constexpr int rows_per_thread = std::size_t(preferred + 2 * R) * words_per_row <= register_budget ? preferred
                                         : std::size_t(2 + 2 * R) * words_per_row <= register_budget       ? 2
                                                                                                           : 1;
  static constexpr unsigned block_x = R == 1 ? 64 : 32;
  static constexpr unsigned block_y = stencil_block_threads / block_x;
};

// The band walk (see stencil_block_threads): every input of the same element size, 16-byte
// aligned rows, R <= V. Thread (x, y) of block (bx, by) takes vector bx * blockDim.x + x of every
// row of band by * blockDim.y + y, striding down where the matrix has more bands than the grid
// (the grid is as wide as the rows' vectors: no loop across, whose state would cost registers).
// Positions are in Index: int where every count fits in 31 bits, so that the boundary arithmetic
// is 32-bit.
template <int R, int V, int K, class Index, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_bands(const Policy& policy,
                                                     const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                     const pitched_view<Out>& out, const F& f, Index vectors_per_row,
                                                     bool vector_stores, std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const Index rows = Index(out.rows()), cols = Index(out.cols());
    const Index bands = (rows + K - 1) / K;
    const auto one_band = [&](Index r0, Index c0, bool whole_vector) {
      if constexpr (is_interior_v<Policy>)
        if (r0 + K <= Index(R) || r0 + Index(R) >= rows) return;  // no interior row in the band
      cuda::std::tuple<input_band<Ts, R, V, K>...> patches;
      (cuda::std::get<I>(patches).load(cuda::std::get<I>(in), r0, c0, whole_vector, policy), ...);
      bool whole = whole_vector && vector_stores;
      if constexpr (is_interior_v<Policy>) whole = whole && c0 >= R && c0 + V + R <= cols;
      store_rows<R, V, K, Policy>(
          r0, rows, c0, cols, whole, [&](Index r) { return out.row(std::size_t(r)); },
          [&](int k, int j) { return static_cast<Out>(f(cuda::std::get<I>(patches).at(k, j)...)); });
    };
    const Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
    if (v >= vectors_per_row) return;
    const Index c0 = v * V;
    const Index first = Index(blockIdx.y) * Index(blockDim.y) + Index(threadIdx.y),
                step = Index(gridDim.y) * Index(blockDim.y);
    const bool whole_vector = c0 + V <= cols;
    for (Index b = first; b < bands; b += step) one_band(b * K, c0, whole_vector);
  }
}

template <int R, int V, int K, class Index, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(stencil_block_threads)
    stencil_band_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in, pitched_view<Out> out, F f,
                        Index vectors_per_row, bool vector_stores) {
  walk_bands<R, V, K>(policy, in, out, f, vectors_per_row, vector_stores, std::index_sequence_for<Ts...>{});
}

// The element walk, for what the band walk cannot take (elements of other sizes, rows not
// 16-byte aligned, a radius wider than a thread's vector): a thread per output, 128 x 4 threads per
// block, each neighbour read through the read-only path (nvcc drops the reads f never uses).
template <class T, int R>
struct gathered {
  T values[2 * R + 1][2 * R + 1];
  COALESCE_DEVICE COALESCE_FORCEINLINE neighbourhood<T, R> centre() const {
    return neighbourhood<T, R>(&values[R][R], 2 * R + 1);
  }
};

template <int R, class T, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void gather(gathered<T, R>& g, const pitched_view<const T>& in, long long r,
                                                 long long c, const Policy& policy) {
  const long long rows = (long long)in.rows(), cols = (long long)in.cols();
#pragma unroll
  for (int dr = -R; dr <= R; ++dr) {
    const T* row = row_under(policy, in, r + dr, rows);
#pragma unroll
    for (int dc = -R; dc <= R; ++dc) g.values[R + dr][R + dc] = load_element(row, c + dc, cols, policy);
  }
}

template <int R, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_elements(const Policy& policy,
                                                        const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                        const pitched_view<Out>& out, const F& f,
                                                        std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const long long rows = (long long)out.rows(), cols = (long long)out.cols();
    for (long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y; r < rows;
         r += (long long)gridDim.x * blockDim.y) {
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, r, rows)) continue;
      for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
        if constexpr (is_interior_v<Policy>)
          if (!interior_contains(R, c, cols)) continue;
        cuda::std::tuple<gathered<Ts, R>...> values;
        (gather<R>(cuda::std::get<I>(values), cuda::std::get<I>(in), r, c, policy), ...);
        out(std::size_t(r), std::size_t(c)) = static_cast<Out>(f(cuda::std::get<I>(values).centre()...));
      }
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void stencil_element_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in,
                                       pitched_view<Out> out, F f) {
  walk_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

}  // namespace coalesce::detail
