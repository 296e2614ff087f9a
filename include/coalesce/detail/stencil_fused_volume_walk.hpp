// coalesce::detail: the fused walk of an iterated stencil on a volume (temporal blocking along z,
// the 2.5D scheme of AN5D): a block holds a region of each plane (its tile and a halo of kR), and
// walks z through a chunk of planes, its k sweeps advancing together, each a few planes behind the
// one before, in rings of planes in shared memory (volume_pass_schedule). Users never include this
// header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_fusion.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/stencil_volume_fusion.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce::detail {

// What a pass needs besides its input and output, as for matrices (fused_pass): under interior
// the border at time t is u's when t is even and v's when it is odd.
template <class T>
struct fused_volume_pass {
  pitched_volume_view<const T> border[2];
  unsigned long long t0 = 0;
  int sweeps = 1;                                         // k: 1 .. fused_volume_geometry::most_sweeps()
  int planes_per_block = fused_volume_planes_per_block;  // a chunk along z
};

// Under interior, the border element at (z, y, x) of time t, the position clamped into the volume,
// through the read-only path (no thread of a pass writes a border element).
template <class T, class Index>
COALESCE_DEVICE COALESCE_FORCEINLINE T volume_border_at(const fused_volume_pass<T>& pass, unsigned long long t, Index z,
                                                        Index y, Index x, Index depth, Index rows, Index cols) {
  const Index cz = boundary_index(clamp, z, depth), cy = boundary_index(clamp, y, rows),
              cx = boundary_index(clamp, x, cols);
  // (A select rather than border[t & 1]: an index computed at run time would copy the kernel's
  // parameter to local memory.)
  const T* const row = (t & 1) ? pass.border[1].row(std::size_t(cz), std::size_t(cy))
                               : pass.border[0].row(std::size_t(cz), std::size_t(cy));
  return load_chunk<true>(row + cx);
}

// The positions of a block's region a sweep holds: the region less sR on each side.
template <int R, int L, int C, int H, int W, class Visit>
COALESCE_DEVICE COALESCE_FORCEINLINE void for_own_positions(int s, const Visit& visit) {
  const int first_row = int(threadIdx.y) * L, lo = s * R, rows_end = H - s * R, cols_end = W - s * R;
#pragma unroll 1
  for (int m = 0; m < C; ++m)
#pragma unroll 1
    for (int l = 0; l < L; ++l) {
      const int li = first_row + l, lj = int(threadIdx.x) + int(fused_threads_x) * m;
      if (li >= lo && li < rows_end && lj >= lo && lj < cols_end) visit(li, lj);
    }
}

// After sweep s of plane q is computed (s = 0: loaded), the in-plane elements the edge decides,
// set as single sweeps hold them: the matrix walk's rules (set_edge_elements), on one plane.
template <int R, int L, int C, int H, int W, class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void set_plane_edge(const Policy& policy, const fused_volume_pass<T>& pass,
                                                         T* plane, int s, Index q, Index top, Index left, Index depth,
                                                         Index rows, Index cols) {
  for_own_positions<R, L, C, H, W>(s, [&](int li, int lj) {
    const Index gi = top + li, gj = left + lj;
    if constexpr (is_interior_v<Policy>) {
      if (!interior_contains(Index(R), gi, rows) || !interior_contains(Index(R), gj, cols))
        plane[li * W + lj] = volume_border_at(pass, pass.t0 + (unsigned long long)s, q, gi, gj, depth, rows, cols);
    } else if (gi < 0 || gi >= rows || gj < 0 || gj >= cols) {
      if constexpr (is_constant_policy_v<Policy>) {
        plane[li * W + lj] = static_cast<T>(policy.value);
      } else {  // clamp: the nearest edge element, in the same region (as for matrices)
        const Index ci = boundary_index(clamp, gi, rows), cj = boundary_index(clamp, gj, cols);
        plane[li * W + lj] = plane[int(ci - top) * W + int(cj - left)];
      }
    }
  });
}

// A plane of sweep s >= 1 that the edge decides whole: constant(v) beyond the edge, interior's
// border planes (from memory, time t0 + s).
template <int R, int L, int C, int H, int W, class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void fill_plane(const Policy& policy, const fused_volume_pass<T>& pass, T* plane,
                                                     int s, Index q, Index top, Index left, Index depth, Index rows,
                                                     Index cols) {
  for_own_positions<R, L, C, H, W>(s, [&](int li, int lj) {
    if constexpr (is_interior_v<Policy>)
      plane[li * W + lj] = volume_border_at(pass, pass.t0 + (unsigned long long)s, q, Index(top + li), Index(left + lj),
                                            depth, rows, cols);
    else if constexpr (is_constant_policy_v<Policy>) plane[li * W + lj] = static_cast<T>(policy.value);
  });
}

// The element of `row` at column c (both after the policy: row null, or c -1, under constant(v)
// for a position beyond the edge).
template <class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE T load_at(const T* row, Index c, const Policy& policy) {
  if constexpr (is_constant_policy_v<Policy>)
    if (row == nullptr || c < 0) return static_cast<T>(policy.value);
  return load_chunk<true>(row + c);
}

// One pass. Block (bx, by, bz) takes tile bx across, tiles by, by + gridDim.y, ... down, and
// chunks bz, bz + gridDim.z, ... of pass.planes_per_block planes along z. For each it walks the
// schedule's steps; at a step:
//   sweep 0 loads its plane's region into registers (as a single sweep reads it at time t0; a
//     border plane under interior from the border),
//   sweeps 1 .. k compute theirs from the planes before in the ring of the sweep before (the last
//     sweep storing the tile where single sweeps store), or fill it where the edge decides it,
//   sweep 0's registers go to its ring (the loads' latency hidden behind the other sweeps' work),
//   the blocks whose region reaches the in-plane edge set it on the planes just computed (clamp
//     after a barrier: it copies elements other threads computed),
// then one barrier. What the edge means is what it means for matrices (stencil_fused_kernel),
// and along z the schedule's: periodic computes the images, clamp reads the edge plane, constant
// and interior fill the planes they decide.
// What does not change from step to step is computed once a tile: the rows and columns a thread
// loads (after the policy) and whether its outputs are stored. A thread's window is at fixed
// offsets from one address a plane (the planes' padding rows), so its loads from shared memory
// take no address arithmetic of their own (measured before these two: about 70 instructions a
// thread for each element-sweep, 7.5 of them the 7-point stencil's arithmetic).
template <int R, class T, class Index, class Policy, class F>
__global__ void __launch_bounds__(fused_threads_x* fused_threads_y, 2)
    stencil_fused_volume_kernel(Policy policy, pitched_volume_view<const T> in, pitched_volume_view<T> out,
                                fused_volume_pass<T> pass, F f) {
  if constexpr (stencil_callable_with<volume_neighbourhood, F, R, T, T>()) {
    using g = fused_volume_geometry<R, sizeof(T)>;
    constexpr int L = g::rows_per_thread, C = g::columns_per_thread, H = g::region_rows, W = g::region_cols;
    constexpr int S = 2 * R + 1, M = g::ring_planes, P = g::plane_elements;
    extern __shared__ __align__(16) unsigned char fused_rings[];
    // Plane `slot` of sweep s's ring, at its region's row 0 (R padding rows before it).
    T* const rings = reinterpret_cast<T*>(fused_rings) + R * W;
    const auto ring_plane = [&](int s, int slot) { return rings + (s * M + slot) * P; };

    const int k = pass.sweeps;
    const Index depth = Index(in.depth()), rows = Index(in.height()), cols = Index(in.width());
    const Index tile_rows = Index(H - 2 * k * R), tile_cols = Index(W - 2 * k * R);
    const Index tiles_down = (rows + tile_rows - 1) / tile_rows;
    const Index chunk_planes = Index(pass.planes_per_block);
    const Index chunks = (depth + chunk_planes - 1) / chunk_planes;
    const Index left = Index(blockIdx.x) * tile_cols - Index(k * R);
    const int x = int(threadIdx.x), first_row = int(threadIdx.y) * L;
    const int own = first_row * W + x;  // the thread's first element in a plane; column m at + 32m
    constexpr volume_edge edge = volume_edge_of<Policy>();

    // The columns the thread loads (after the policy) and stores (inside the volume; under
    // interior, inside its interior).
    // (A bit a column: the loop over columns is not unrolled, and an array indexed in it would be
    // local memory.)
    Index load_col[C];
    unsigned col_stored = 0;
#pragma unroll
    for (int m = 0; m < C; ++m) {
      const Index j = left + x + int(fused_threads_x) * m;
      load_col[m] = boundary_index(policy, j, cols);
      if (is_interior_v<Policy> ? interior_contains(Index(R), j, cols) : j >= 0 && j < cols) col_stored |= 1u << m;
    }

    for (Index tile = Index(blockIdx.y); tile < tiles_down; tile += Index(gridDim.y)) {
      const Index top = tile * tile_rows - Index(k * R);
      const Index in_edge = is_interior_v<Policy> ? Index(R) : Index(0);
      const bool at_edge = edge != volume_edge::periodic &&
                           (top < in_edge || left < in_edge || top + H > rows - in_edge || left + W > cols - in_edge);
      Index load_row[L];
      bool row_stored[L];
#pragma unroll
      for (int l = 0; l < L; ++l) {
        const Index i = top + first_row + l;
        load_row[l] = boundary_index(policy, i, rows);
        row_stored[l] = is_interior_v<Policy> ? interior_contains(Index(R), i, rows) : i >= 0 && i < rows;
      }
      for (Index chunk = Index(blockIdx.z); chunk < chunks; chunk += Index(gridDim.z)) {
        const Index out_lo = chunk * chunk_planes;
        const Index out_hi = out_lo + chunk_planes < depth ? out_lo + chunk_planes : depth;
        const volume_pass_schedule<R, Index> schedule{edge, depth, out_lo, out_hi, k};
        const Index steps = schedule.steps();
        for (Index step = 0; step < steps; ++step) {
          // Sweep 0: the plane's region into registers.
          const Index q0 = schedule.plane(0, step);
          const plane_work work0 = schedule.work(0, q0);
          T incoming[L][C];
          if (work0 == plane_work::compute) {
            const Index z = boundary_index(policy, q0, depth);
#pragma unroll
            for (int l = 0; l < L; ++l) {
              const T* row = nullptr;
              if constexpr (is_constant_policy_v<Policy>) {
                if (z >= 0 && load_row[l] >= 0) row = in.row(std::size_t(z), std::size_t(load_row[l]));
              } else {
                row = in.row(std::size_t(z), std::size_t(load_row[l]));
              }
#pragma unroll
              for (int m = 0; m < C; ++m) incoming[l][m] = load_at(row, load_col[m], policy);
            }
          } else if (work0 == plane_work::fill) {  // interior's border planes
#pragma unroll
            for (int l = 0; l < L; ++l)
#pragma unroll
              for (int m = 0; m < C; ++m)
                incoming[l][m] = volume_border_at(pass, pass.t0, q0, Index(top + first_row + l),
                                                  Index(left + x + int(fused_threads_x) * m), depth, rows, cols);
          }

          // Sweeps 1 .. k.
#pragma unroll 1
          for (int s = 1; s <= k; ++s) {
            const Index q = schedule.plane(s, step);
            const plane_work work = schedule.work(s, q);
            if (work == plane_work::none) continue;
            const bool last = s == k;
            if (work == plane_work::fill) {  // the output's border planes are never written
              if (!last)
                fill_plane<R, L, C, H, W>(policy, pass, ring_plane(s, schedule.slot(q)), s, q, top, left, depth, rows,
                                          cols);
              continue;
            }
            const T* from[S];
#pragma unroll
            for (int dz = 0; dz < S; ++dz)
              from[dz] = ring_plane(s - 1, schedule.slot(schedule.source_plane(q, dz - R))) + own;
            T* const to = ring_plane(s, schedule.slot(q)) + own;
            T* out_row[L];
            if (last) {
#pragma unroll
              for (int l = 0; l < L; ++l)
                out_row[l] =
                    row_stored[l] ? out.row(std::size_t(q), std::size_t(top + first_row + l)) + left + x : nullptr;
            }
            const int lo = s * R, rows_end = H - s * R, cols_end = W - s * R;
#pragma unroll
            for (int m = 0; m < C; ++m) {
              const int lj = x + int(fused_threads_x) * m;
              if (lj < lo || lj >= cols_end) continue;
              const int column = int(fused_threads_x) * m;
              // The window: planes q - R .. q + R, rows first_row - R .. first_row + L - 1 + R,
              // columns lj - R .. lj + R. Only what f reads is loaded.
              T window[S][L + 2 * R][S];
#pragma unroll
              for (int p = 0; p < S; ++p)
#pragma unroll
                for (int i = 0; i < L + 2 * R; ++i)
#pragma unroll
                  for (int d = 0; d < S; ++d) window[p][i][d] = from[p][column + (i - R) * W + d - R];
              if (last) {  // the tile: stored where single sweeps store
                for_rows_in<L>(first_row, lo, rows_end, [&](int l, int) {
                  const volume_neighbourhood<T, R> n(&window[R][l + R][R], (L + 2 * R) * S, S);
                  if (out_row[l] != nullptr && (col_stored >> m & 1u)) out_row[l][column] = static_cast<T>(f(n));
                });
                continue;
              }
              for_rows_in<L>(first_row, lo, rows_end, [&](int l, int) {
                const volume_neighbourhood<T, R> n(&window[R][l + R][R], (L + 2 * R) * S, S);
                to[column + l * W] = static_cast<T>(f(n));  // beyond the edge, replaced below
              });
            }
          }

          // Sweep 0's registers to its ring.
          if (work0 != plane_work::none) {
            T* const plane = ring_plane(0, schedule.slot(q0));
#pragma unroll
            for (int l = 0; l < L; ++l)
#pragma unroll
              for (int m = 0; m < C; ++m) plane[own + l * W + int(fused_threads_x) * m] = incoming[l][m];
            if constexpr (is_interior_v<Policy>)
              if (at_edge && work0 == plane_work::compute)
                set_plane_edge<R, L, C, H, W>(policy, pass, plane, 0, q0, top, left, depth, rows, cols);
          }

          // The in-plane edge of the planes sweeps 1 .. k - 1 computed.
          if (at_edge && k > 1) {
            if constexpr (std::is_same_v<Policy, clamp_t>) __syncthreads();
#pragma unroll 1
            for (int s = 1; s < k; ++s) {
              const Index q = schedule.plane(s, step);
              if (schedule.work(s, q) != plane_work::compute) continue;
              set_plane_edge<R, L, C, H, W>(policy, pass, ring_plane(s, schedule.slot(q)), s, q, top, left, depth, rows,
                                            cols);
            }
          }
          __syncthreads();  // this step's planes are written; the next step reads them
        }
      }
    }
  }
}

}  // namespace coalesce::detail
