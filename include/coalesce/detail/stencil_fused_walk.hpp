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

// After sweep s (time t0 + s; s = 0 is the region as loaded) of the region `to`, rows and
// columns lo .. end - 1 of it: the elements the edge decides, set as single sweeps would hold them
// (see stencil_fused_kernel). Only blocks whose region reaches the edge call it. Not unrolled:
// few blocks take it, and unrolled it kept every element's address live and spilled.
template <int R, int L, int C, int H, int W, class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void set_edge_elements(const Policy& policy, const fused_pass<T>& pass, T* to,
                                                            int s, Index top, Index left, Index rows, Index cols) {
  const int first_row = int(threadIdx.y) * L, lo = s * R, rows_end = H - s * R, cols_end = W - s * R;
#pragma unroll 1
  for (int m = 0; m < C; ++m)
#pragma unroll 1
    for (int l = 0; l < L; ++l) {
      const int li = first_row + l, lj = int(threadIdx.x) + int(fused_threads_x) * m;
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

// One pass: a block per tile across (blockIdx.x) striding down the tiles of its column of tiles.
// The region (fused_geometry) is loaded as a single sweep would read it at time t0, beyond the
// edge included; sweep s (1 .. k) computes every element of the region less sR on each side from
// the one before, in shared memory, except the last, which computes the inner tile and stores it.
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
template <int R, class T, class Index, class Policy, class F>
__global__ void __launch_bounds__(fused_threads_x* fused_threads_y, fused_geometry<R, sizeof(T)>::blocks_per_sm)
    stencil_fused_kernel(Policy policy, pitched_view<const T> in, pitched_view<T> out, fused_pass<T> pass, F f) {
  if constexpr (stencil_callable<F, R, T, T>()) {
    using g = fused_geometry<R, sizeof(T)>;
    constexpr int L = g::rows_per_thread, C = g::columns_per_thread, H = g::region_rows, W = g::region_cols;
    constexpr int S = 2 * R + 1;
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
        if (at_edge) set_edge_elements<R, L, C, H, W>(policy, pass, region, 0, top, left, rows, cols);

      // What the last sweep stores, and where: row l of the thread's rows is stored if its bit is
      // set, at out_rows + l * pitch + lj (gj = left + lj tested per column).
      unsigned rows_stored = 0;
#pragma unroll
      for (int l = 0; l < L; ++l) {
        const Index gi = top + first_row + l;
        const bool stored = is_interior_v<Policy> ? interior_contains(Index(R), gi, rows) : gi >= 0 && gi < rows;
        if (stored) rows_stored |= 1u << l;
      }
      T* const out_rows = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(out.data()) +
                                               (long long)(top + first_row) * (long long)out.pitch_bytes()) +
                          left;

      // The window's three addresses (below), as offsets from the sweep's region: the same at
      // every sweep and column but for 32 columns a column.
      const int mid_offset = first_row * W + x - R;
      const fused_window_rows<R, L, H> window_rows(first_row);
      const int above_offset = window_rows.above * W, below_offset = window_rows.below * W;
      for (int s = 1; s <= k; ++s) {
        __syncthreads();  // sweep s - 1 is written, and read no more where sweep s writes
        const T* const from = region + ((s - 1) & 1) * (H * W);
        T* const to = region + (s & 1) * (H * W);
        const bool last = s == k;
        const int lo = s * R, rows_end = H - s * R, cols_end = W - s * R;
        // One column at a time (not unrolled): a window each would take C times the registers.
#pragma unroll 1
        for (int m = 0; m < C; ++m) {
          const int lj = x + int(fused_threads_x) * m;
          if (lj < lo || lj >= cols_end) continue;
          // The window: rows first_row - R .. first_row + L - 1 + R, columns lj - R .. lj + R, at
          // fixed offsets from three addresses (fused_window_rows: beyond the region, the
          // thread's own rows, which only uncomputed outputs read).
          const T* const mid = from + (mid_offset + int(fused_threads_x) * m);
          const T* const above = mid + above_offset;
          const T* const below = mid + below_offset;
          T window[L + 2 * R][S];
#pragma unroll
          for (int i = 0; i < L + 2 * R; ++i) {
            const T* const row = i < R ? above + i * W : i < L + R ? mid + (i - R) * W : below + (i - L - R) * W;
#pragma unroll
            for (int d = 0; d < S; ++d) window[i][d] = row[d];
          }
          if (last) {  // the inner tile: stored where single sweeps store
            const Index gj = left + lj;
            const bool column_stored =
                is_interior_v<Policy> ? interior_contains(Index(R), gj, cols) : gj >= 0 && gj < cols;
            unsigned char* const column_bytes = reinterpret_cast<unsigned char*>(out_rows + lj);
            for_rows_in<L>(first_row, lo, rows_end, [&](int l, int) {
              const neighbourhood<T, R> n(&window[l + R][R], S);
              if (column_stored && (rows_stored >> l & 1u))
                *reinterpret_cast<T*>(column_bytes + std::size_t(l) * out.pitch_bytes()) = static_cast<T>(f(n));
            });
            continue;
          }
          for_rows_in<L>(first_row, lo, rows_end, [&](int l, int li) {
            const neighbourhood<T, R> n(&window[l + R][R], S);
            to[li * W + lj] = static_cast<T>(f(n));  // beyond the edge, replaced below
          });
        }
        if (!last && at_edge) {
          // Clamp copies from elements other threads computed; interior and constant set only the
          // thread's own elements (the same as its sweep's), from memory or v.
          if constexpr (std::is_same_v<Policy, clamp_t>) __syncthreads();
          set_edge_elements<R, L, C, H, W>(policy, pass, to, s, top, left, rows, cols);
        }
      }
      __syncthreads();  // the next tile's load writes where the last sweeps read
    }
  }
}

}  // namespace coalesce::detail
