// coalesce::detail: the fused walk of an iterated stencil on a matrix (temporal blocking, as in
// AN5D and EBISU): a block loads its output tile and a halo of kR into shared memory, does k
// sweeps there, each on a region R smaller on every side, and writes the inner tile. Users never
// include this header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_fusion.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace coalesce::detail {

// What a pass needs besides its input and output. Under interior the border (the elements within
// R of the edge) at time t is u's border when t is even and v's when it is odd, since single
// sweeps never write it: border[t & 1], u and v as the call received them. The pass's input holds
// time t0 in its inner elements (its own border may be the other parity's: passes of an even
// number of sweeps leave the two matrices out of step with single sweeps until the last pass).
template <class T>
struct fused_pass {
  pitched_view<const T> border[2];
  unsigned long long t0 = 0;
  int sweeps = 1;  // k: 1 .. fused_geometry::most_sweeps()
};

// Under interior, the border element at (i, j) of time t, (i, j) clamped into the matrix (an
// element beyond the edge is read by no interior output, and a clamped read stays inside). Read
// through the read-only path: no thread of a pass writes a border element.
template <class T, class Index>
COALESCE_DEVICE COALESCE_FORCEINLINE T border_at(const fused_pass<T>& pass, unsigned long long t, Index i, Index j,
                                                 Index rows, Index cols) {
  const Index ci = boundary_index(clamp, i, rows), cj = boundary_index(clamp, j, cols);
  // (A select rather than border[t & 1]: an index computed at run time would copy the kernel's
  // parameter to local memory.)
  const T* const row = (t & 1) ? pass.border[1].row(std::size_t(ci)) : pass.border[0].row(std::size_t(ci));
  return load_chunk<true>(row + cj);
}

// The region columns a thread owns, m = 0 .. C - 1 of them. Its sweeps compute a 16-byte vector
// of a shared row, columns C x .. C x + C - 1 (vector_columns); the region's load from memory
// takes columns x, x + 32, ... (a warp reading 32 consecutive elements of a global row).
enum class fused_columns { vector_columns, warp_columns };
template <fused_columns Mapping, int C>
COALESCE_DEVICE COALESCE_FORCEINLINE int fused_column(int m) {
  return Mapping == fused_columns::vector_columns ? C * int(threadIdx.x) + m
                                                  : int(threadIdx.x) + int(fused_threads_x) * m;
}

// After sweep s (time t0 + s; s = 0 is the region as loaded) of the region `to`, rows and
// columns lo .. end - 1 of it: the elements the edge decides, set as single sweeps would hold them
// (see stencil_fused_kernel), each by the thread that wrote it (Mapping: s = 0 the load's, later
// sweeps the vectors'). Only blocks whose region reaches the edge call it. Not unrolled: few
// blocks take it, and unrolled it kept every element's address live and spilled.
template <int R, int L, int C, int H, int W, fused_columns Mapping, class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void set_edge_elements(const Policy& policy, const fused_pass<T>& pass, T* to,
                                                            int s, Index top, Index left, Index rows, Index cols) {
  const int first_row = int(threadIdx.y) * L, lo = s * R, rows_end = H - s * R, cols_end = W - s * R;
#pragma unroll 1
  for (int m = 0; m < C; ++m)
#pragma unroll 1
    for (int l = 0; l < L; ++l) {
      const int li = first_row + l, lj = fused_column<Mapping, C>(m);
      if (li < lo || li >= rows_end || lj < lo || lj >= cols_end) continue;
      const Index gi = top + li, gj = left + lj;
      if constexpr (is_interior_v<Policy>) {
        if (!interior_contains(Index(R), gi, rows) || !interior_contains(Index(R), gj, cols))
          to[li * W + lj] = border_at(pass, pass.t0 + (unsigned long long)s, gi, gj, rows, cols);
      } else if (gi < 0 || gi >= rows || gj < 0 || gj >= cols) {
        if constexpr (is_constant_policy_v<Policy>) {
          to[li * W + lj] = static_cast<T>(policy.value);
        } else {
          // clamp: the nearest edge element lies in the same region (the region spans the tile,
          // which starts inside the matrix, and reaches gi; the same along columns).
          const Index ci = boundary_index(clamp, gi, rows), cj = boundary_index(clamp, gj, cols);
          to[li * W + lj] = to[int(ci - top) * W + int(cj - left)];
        }
      }
    }
}

// A thread's vector of a shared row: C elements, 16 bytes, moved as one access (the region's rows
// are 16-byte aligned: W C-element vectors of 16 bytes).
template <int C, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_vector16(const T* p, T (&v)[C]) {
  static_assert(C * sizeof(T) == 16, "coalesce::detail::load_vector16: C elements must make 16 bytes");
  const uint4 words = *reinterpret_cast<const uint4*>(p);
  std::memcpy(v, &words, 16);
}
template <int C, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_vector16(T* p, const T (&v)[C]) {
  static_assert(C * sizeof(T) == 16, "coalesce::detail::store_vector16: C elements must make 16 bytes");
  uint4 words;
  std::memcpy(&words, v, 16);
  *reinterpret_cast<uint4*>(p) = words;
}

// The value v of the lane `delta` lanes below (Up) or above, moved as its bits (a 4- or 8-byte
// element of any type). At the warp's ends a lane gets its own.
template <bool Up, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE T from_lane(const T& v) {
  using word = std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
  static_assert(sizeof(T) == sizeof(word), "coalesce::detail::from_lane: elements of 4 or 8 bytes");
  word w;
  std::memcpy(&w, &v, sizeof(T));
  w = Up ? __shfl_up_sync(0xffffffffu, w, 1) : __shfl_down_sync(0xffffffffu, w, 1);
  T got;
  std::memcpy(&got, &w, sizeof(T));
  return got;
}

// One row of a thread's window: its vector of the shared row at `vector`, and the R elements left
// and right of it, which the neighbouring lanes hold (one 16-byte load and 2R shuffles instead of
// 2R + 1 loads an output). Lane 0's left and lane 31's right are their own elements: the outputs
// that read them lie at the region's edge, outside every sweep's region.
template <int R, int C, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void fused_window_row(const T* vector, T (&row)[C + 2 * R]) {
  static_assert(R <= C, "coalesce::detail::fused_window_row: the side elements come from one neighbouring lane");
  T own[C];
  load_vector16<C>(vector, own);
#pragma unroll
  for (int m = 0; m < C; ++m) row[R + m] = own[m];
#pragma unroll
  for (int d = 0; d < R; ++d) {
    row[d] = from_lane<true>(own[C - R + d]);
    row[R + C + d] = from_lane<false>(own[d]);
  }
}

// One pass: a block per tile across (blockIdx.x) striding down the tiles of its column of tiles.
// The region (fused_geometry) is loaded as a single sweep would read it at time t0, beyond the
// edge included; sweep s (1 .. k) computes the region from the one before, in shared memory (what
// it holds beyond sR from the region's sides is read by no later sweep), and the inner tile of the
// last is stored.
// What the edge means inside a pass, so that every sweep equals a single sweep bit for bit:
//   periodic  the region holds the wrapped images of its positions, so f at a position beyond the
//             edge computes that image's value: nothing to do (a topology);
//   clamp     a position beyond the edge holds the nearest edge element of the same sweep;
//   constant  a position beyond the edge holds v at every sweep;
//   interior  the border holds u's border after an even sweep and v's after an odd one (border_at),
//             and the last sweep stores only inner elements, so the border of u and v is never
//             written.
// Those elements are set once a sweep is computed, behind one more barrier, in the blocks whose
// region reaches them (at_edge); the sweep itself computes f everywhere, so that its loop has no
// branch on the edge (an earlier form that selected the border's value in the loop kept the
// border's addresses live and spilled). Every element of f's neighbourhood is then what the single
// sweep's would be, and f computes the same value from the same values.
// A thread's sweep walks its L rows down with a window of 2R + 1 rows, each its vector of C
// elements (one 16-byte shared load) and R elements either side from the neighbouring lanes (2R
// shuffles). For the 5-point stencil on floats that is about 6 instructions and 2.75 shared-memory
// wavefronts (a shuffle counted as one) a warp per 32 outputs, against 13 and 4.25 when a thread
// took one column at a time with scalar loads: a hand-written pass of this form took 4 sweeps on
// 8192^2 floats in 0.2128 ms against that walk's 0.4291 ms (NVIDIA H100, CUDA 13.0,
// bench/experiments/fused_columns.cu).
template <int R, class T, class Index, class Policy, class F>
__global__ void __launch_bounds__(fused_threads_x* fused_threads_y, fused_geometry<R, sizeof(T)>::blocks_per_sm)
    stencil_fused_kernel(Policy policy, pitched_view<const T> in, pitched_view<T> out, fused_pass<T> pass, F f) {
  if constexpr (stencil_callable<F, R, T, T>()) {
    using g = fused_geometry<R, sizeof(T)>;
    constexpr int L = g::rows_per_thread, C = g::columns_per_thread, H = g::region_rows, W = g::region_cols;
    extern __shared__ __align__(16) unsigned char fused_region[];
    T* const region = reinterpret_cast<T*>(fused_region);  // two buffers of H x W, sweeps alternating

    const int k = pass.sweeps;
    const Index rows = Index(in.rows()), cols = Index(in.cols());
    const Index tile_rows = Index(H - 2 * k * R), tile_cols = Index(W - 2 * k * R);
    const Index tiles_down = (rows + tile_rows - 1) / tile_rows;
    const Index left = Index(blockIdx.x) * tile_cols - Index(k * R);  // the region's first column
    const int x = int(threadIdx.x), first_row = int(threadIdx.y) * L;

    for (Index tile = Index(blockIdx.y); tile < tiles_down; tile += Index(gridDim.y)) {
      const Index top = tile * tile_rows - Index(k * R);  // the region's first row
#pragma unroll
      for (int l = 0; l < L; ++l) {
        const int li = first_row + l;
        const Index i = top + li;
        const T* const row = row_under(policy, in, i, rows);
#pragma unroll
        for (int m = 0; m < C; ++m) {
          const int lj = x + int(fused_threads_x) * m;
          region[li * W + lj] = load_element(row, Index(left + lj), cols, policy);
        }
      }
      // Whether the region holds elements the edge decides (beyond it; under interior, the border
      // too), which each sweep then sets after a barrier: one test for the block, so the barrier is
      // uniform. Periodic has none: its region holds the wrapped images, which f computes.
      const Index edge = is_interior_v<Policy> ? Index(R) : Index(0);
      const bool at_edge = !std::is_same_v<Policy, periodic_t> &&
                           (top < edge || left < edge || top + H > rows - edge || left + W > cols - edge);
      // Under interior the load read the border of `in`, which may be the other parity's.
      if constexpr (is_interior_v<Policy>)
        if (at_edge)
          set_edge_elements<R, L, C, H, W, fused_columns::warp_columns>(policy, pass, region, 0, top, left, rows, cols);

      // The window rows' addresses, as offsets from the sweep's region: the thread's vector in its
      // own rows, and in the R rows above and below them (fused_window_rows: beyond the region,
      // the thread's own rows, which only uncomputed outputs read).
      const int own_offset = first_row * W + C * x;
      const fused_window_rows<R, L, H> window_rows(first_row);
      const int above_offset = own_offset + window_rows.above * W, below_offset = own_offset + window_rows.below * W;
      for (int s = 1; s <= k; ++s) {
        __syncthreads();  // sweep s - 1 is written, and read no more where sweep s writes
        const T* const from = region + ((s - 1) & 1) * (H * W);
        T* const to = region + (s & 1) * (H * W) + own_offset;
        const bool last = s == k;
        // The window: the rows row - R .. row + R around the output row, each its vector and R
        // elements either side (fused_window_row), shifted down a row after each output row. The
        // sweep computes every vector of the thread's rows; those outside the sweep's region (at
        // the region's edge, where a lane's side elements are its own) are read by no output that
        // is kept, and the last sweep stores only the tile.
        T window[2 * R + 1][C + 2 * R];
        const auto window_row_at = [&](int i) {
          return from + (i < R       ? above_offset + i * W
                         : i < L + R ? own_offset + (i - R) * W
                                     : below_offset + (i - L - R) * W);
        };
#pragma unroll
        for (int i = 0; i < 2 * R; ++i) fused_window_row<R, C>(window_row_at(i), window[i + 1]);
#pragma unroll
        for (int l = 0; l < L; ++l) {
#pragma unroll
          for (int i = 0; i < 2 * R; ++i)
#pragma unroll
            for (int d = 0; d < C + 2 * R; ++d) window[i][d] = window[i + 1][d];
          fused_window_row<R, C>(window_row_at(l + 2 * R), window[2 * R]);
          T outputs[C];
#pragma unroll
          for (int m = 0; m < C; ++m) outputs[m] = static_cast<T>(f(neighbourhood<T, R>(&window[R][R + m], C + 2 * R)));
          store_vector16<C>(to + l * W, outputs);  // beyond the edge, replaced below
        }
        if (!last && at_edge) {
          // Clamp copies from elements other threads computed; interior and constant set only the
          // thread's own elements (the same as its sweep's), from memory or v.
          if constexpr (std::is_same_v<Policy, clamp_t>) __syncthreads();
          set_edge_elements<R, L, C, H, W, fused_columns::vector_columns>(policy, pass, region + (s & 1) * (H * W), s,
                                                                          top, left, rows, cols);
        }
      }

      // The inner tile to memory where single sweeps store (inside the matrix, or its interior),
      // a warp 32 consecutive elements of a row: after a barrier, so that a thread stores what
      // others computed. (Each thread's own vector, stored from registers, would be one 16-byte
      // store only where kR is a multiple of C, and otherwise C stores 16 bytes apart a lane.)
      __syncthreads();
      const T* const last_sweep = region + (k & 1) * (H * W);
      const int lo = k * R, rows_end = H - k * R, cols_end = W - k * R;
#pragma unroll
      for (int l = 0; l < L; ++l) {
        const int li = first_row + l;
        const Index gi = top + li;
        const bool row_stored = is_interior_v<Policy> ? interior_contains(Index(R), gi, rows) : gi >= 0 && gi < rows;
        if (!row_stored || li < lo || li >= rows_end) continue;
        T* const out_row = out.row(std::size_t(gi)) + left;
#pragma unroll
        for (int m = 0; m < C; ++m) {
          const int lj = fused_column<fused_columns::warp_columns, C>(m);
          const Index gj = left + lj;
          const bool column_stored =
              is_interior_v<Policy> ? interior_contains(Index(R), gj, cols) : gj >= 0 && gj < cols;
          if (column_stored && lj >= lo && lj < cols_end) out_row[lj] = last_sweep[li * W + lj];
        }
      }
      __syncthreads();  // the next tile's load writes where the last sweeps read
    }
  }
}

}  // namespace coalesce::detail
