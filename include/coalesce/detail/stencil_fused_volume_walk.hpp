// coalesce::detail: the fused walk of an iterated stencil on a volume (temporal blocking along z,
// the 2.5D scheme of AN5D): a block of 32 x 32 threads holds a 32 x 32 region of each plane (its
// tile and a halo of kR), a thread one column (y, x) of it, and walks z through a chunk of planes,
// its k sweeps advancing together, each R + 1 planes behind the one before
// (volume_pass_schedule). Each sweep but the last keeps its newest 2R + 1 planes of the thread's
// column in registers (the queue: a star's reads along z) and its newest 2R + 2 planes of the
// region in a ring in shared memory (the reads in the plane and off the column). Users never
// include this header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/stencil_volume_fusion.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// What a pass needs besides its input and output, as for matrices (fused_pass): under interior
// the border at time t is u's when t is even and v's when it is odd.
template <class T>
struct fused_volume_pass {
  pitched_volume_view<const T> border[2];
  unsigned long long t0 = 0;
  int sweeps = 1;  // this pass's: the kernel's K (2 .. fused_volume_most_sweeps), or 1 for a single sweep
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

// Steps an input plane is loaded before sweep 0 takes it: a DRAM latency is about two steps.
inline constexpr int fused_volume_loads_ahead = 2;

// How a step of the walk finds its planes: `general` from the schedule at run time (the steps at
// a z edge and while the sweeps start and stop, in chunks that are not clean); `ramp` (the steps
// of a clean chunk outside the steady ones) and `steady` with every ring slot known at compile
// time and the thread's column read from the queue, a ramp step asking which sweeps compute.
enum class volume_step { general, ramp, steady };

template <int... I, class Visit>
COALESCE_DEVICE COALESCE_FORCEINLINE void for_phases(std::integer_sequence<int, I...>, const Visit& visit) {
  (visit(std::integral_constant<int, I>{}), ...);
}

// One pass of K sweeps. Block (bx, by, bz) takes tile bx across, tiles by, by + gridDim.y, ... down,
// and chunks bz, bz + gridDim.z, ... of pass.planes_per_block planes along z. At each step of the
// schedule, sweeps K .. 1 take their planes (so that sweep s reads the queue of sweep s - 1 before
// sweep s - 1 pushes its new plane), then sweep 0 takes the plane loaded two steps before:
//   a sweep that computes reads the planes q - R .. q + R of the sweep before, its own column from
//     the queue in steady steps (from the ring in the others, where the edge may make them other
//     planes) and the rest from the ring; sweep K stores the tile where single sweeps store, the
//     others push their value into their queue and ring;
//   a plane the edge decides whole (constant(v) beyond it, interior's border planes) is filled;
//   in blocks whose region reaches the in-plane edge, the threads beyond it (under interior:
//     outside the interior) set their element of every new plane as single sweeps hold it
//     (constant(v), the border from memory, or under clamp the nearest edge element, after a
//     barrier since another thread computed it);
// then one barrier. Along z the edge is the schedule's: periodic computes the images, clamp reads
// the edge plane, constant and interior fill the planes they decide.
// The steady steps, where every sweep computes and reads only planes computed as themselves
// (volume_pass_schedule::first_steady), are unrolled by the ring's length, so that every ring slot
// is known at compile time. In a clean chunk (volume_pass_schedule::clean: most of them) the steps
// before and after are unrolled the same way (ramp steps), each sweep computing or not; in the
// others they take the schedule's general form.
template <int R, int K, class T, class Index, class Policy, class F>
__global__ void __launch_bounds__(fused_volume_threads_x* fused_volume_threads_y,
                                  fused_volume_geometry<R, sizeof(T)>::blocks_per_sm(K))
    stencil_fused_volume_kernel(Policy policy, pitched_volume_view<const T> in, pitched_volume_view<T> out,
                                fused_volume_pass<T> pass, F f) {
  if constexpr (stencil_callable_with<volume_neighbourhood, F, R, T, T>()) {
    using g = fused_volume_geometry<R, sizeof(T)>;
    constexpr int H = g::region_rows, W = g::region_cols, S = 2 * R + 1, M = g::ring_planes, P = g::plane_elements;
    constexpr int ahead = fused_volume_loads_ahead;
    constexpr volume_edge edge = volume_edge_of<Policy>();
    extern __shared__ __align__(16) unsigned char fused_rings[];
    const int x = int(threadIdx.x), y = int(threadIdx.y);
    // The thread's element of slot 0 of sweep 0's ring (after the slack and the plane's R rows of
    // padding); slot `slot` of sweep s's at (s M + slot) P from it.
    T* const mine = reinterpret_cast<T*>(fused_rings) + g::slack_elements + (R + y) * W + x;

    const Index depth = Index(in.depth()), rows = Index(in.height()), cols = Index(in.width());
    const std::size_t in_pitch = in.pitch_bytes() / sizeof(T), in_slice = in.slice_pitch_bytes() / sizeof(T);
    const std::size_t out_pitch = out.pitch_bytes() / sizeof(T), out_slice = out.slice_pitch_bytes() / sizeof(T);
    const Index tile_rows = Index(g::tile_rows(K)), tile_cols = Index(g::tile_cols(K));
    const Index tiles_down = (rows + tile_rows - 1) / tile_rows;
    const Index chunk_planes = Index(pass.planes_per_block);
    const Index chunks = (depth + chunk_planes - 1) / chunk_planes;
    const Index left = Index(blockIdx.x) * tile_cols - Index(K * R), gj = left + Index(x);
    const auto inside = [&](Index i, Index n) {
      return is_interior_v<Policy> ? interior_contains(Index(R), i, n) : i >= 0 && i < n;
    };
    const Index load_x = boundary_index(policy, gj, cols);
    const bool col_inside = inside(gj, cols);
    const bool col_stored = col_inside && x >= K * R && x < W - K * R;

    for (Index tile = Index(blockIdx.y); tile < tiles_down; tile += Index(gridDim.y)) {
      const Index top = tile * tile_rows - Index(K * R), gi = top + Index(y);
      const Index in_edge = is_interior_v<Policy> ? Index(R) : Index(0);
      const bool at_edge = edge != volume_edge::periodic &&
                           (top < in_edge || left < in_edge || top + H > rows - in_edge || left + W > cols - in_edge);
      const Index load_y = boundary_index(policy, gi, rows);
      const bool row_inside = inside(gi, rows);
      // Whether the edge decides the thread's element at sweeps 1 .. K - 1, and under clamp where
      // the element it copies is, from its own.
      const bool decided = at_edge && !(row_inside && col_inside);
      const int clamp_from =
          int(boundary_index(clamp, gi, rows) - top - Index(y)) * W + int(boundary_index(clamp, gj, cols) - gj);
      // The thread's column in memory, plane 0 (the input after the policy; the output where it is
      // stored).
      const T* const in_column = is_constant_policy_v<Policy> && (load_y < 0 || load_x < 0)
                                     ? nullptr
                                     : in.row(0, std::size_t(load_y)) + load_x;
      T* const out_column =
          col_stored && row_inside && y >= K * R && y < H - K * R ? out.row(0, std::size_t(gi)) + gj : nullptr;

      for (Index chunk = Index(blockIdx.z); chunk < chunks; chunk += Index(gridDim.z)) {
        const Index out_lo = chunk * chunk_planes;
        const Index out_hi = out_lo + chunk_planes < depth ? out_lo + chunk_planes : depth;
        volume_pass_schedule<R, Index> schedule{edge, depth, out_lo, out_hi, K};
        const bool clean = fused_volume_ramp_steps && schedule.clean();
        // Slot 0 of every ring at steps origin, origin + M, ...: a clean chunk's steps are all
        // unrolled from step 0, the others' from the first steady step.
        schedule.origin = clean ? Index(0) : schedule.first_steady();
        const Index steps = schedule.steps(), steady_end = schedule.steady_end();
        // The planes sweep 0 loads as they are (no edge between them and memory), and the steps
        // before the one that takes direct_hi.
        const Index direct_lo = schedule.compute_lo(0) > 0 ? schedule.compute_lo(0) : Index(0);
        const Index direct_hi = schedule.compute_hi(0) < depth ? schedule.compute_hi(0) : depth;
        const Index direct_end = direct_hi - schedule.anchor();

        // Sweep 0's plane at step j, as a single sweep reads it at time t0.
        const auto load = [&](Index j) -> T {
          const Index q = schedule.plane(0, j);
          if (q >= direct_lo && q < direct_hi && in_column != nullptr)
            return load_chunk<true>(in_column + std::size_t(q) * in_slice);
          const plane_work work = schedule.work(0, q);
          if (work == plane_work::fill)  // interior's border planes
            return volume_border_at(pass, pass.t0, q, gi, gj, depth, rows, cols);
          if (work == plane_work::none) return T();
          const Index z = boundary_index(policy, q, depth);
          if constexpr (is_constant_policy_v<Policy>)
            if (z < 0 || in_column == nullptr) return static_cast<T>(policy.value);
          return load_chunk<true>(in_column + std::size_t(z) * in_slice);
        };
        // What the edge sets an element of sweep s to (not under clamp): constant(v), or the
        // border of time t0 + s.
        const auto decided_value = [&](int s, Index q) -> T {
          if constexpr (is_constant_policy_v<Policy>) return static_cast<T>(policy.value);
          else return volume_border_at(pass, pass.t0 + (unsigned long long)s, q, gi, gj, depth, rows, cols);
        };

        T loaded[ahead];
#pragma unroll
        for (int a = 0; a < ahead; ++a) loaded[a] = load(Index(a));
        T queue[K][S];  // sweep s's newest planes of the column, the newest last
#pragma unroll
        for (int s = 0; s < K; ++s)
#pragma unroll
          for (int i = 0; i < S; ++i) queue[s][i] = T();

        // Step j. Ramp and steady (`Known`): every slot at compile time, `phase` = (j - origin)
        // mod M, and the planes loaded and stored at the offsets load_at and store_at from the
        // thread's columns (kept by the caller, one slice more a step; modulo 2^64 where the plane
        // is below 0, and then not used). at_edge_steps: 0 where the block is known not to be at
        // the edge, 1 where it is, 2 where at_edge says (the steady steps are compiled apart for
        // the blocks at the edge, so that their edge code takes no registers from the others').
        const auto step = [&](Index j, auto mode, auto phase, std::size_t load_at, std::size_t store_at,
                              auto at_edge_steps) {
          constexpr volume_step Mode = decltype(mode)::value;
          constexpr bool Steady = Mode == volume_step::steady, Ramp = Mode == volume_step::ramp, Known = Steady || Ramp;
          constexpr int Phase = decltype(phase)::value, Edge = decltype(at_edge_steps)::value;
          // The slot of plane q + dz in a ring, q being sweep s's plane at this step.
          const auto slot_of = [&](int s, Index q, int dz) {
            if constexpr (Known) return ((Phase - s * (R + 1) + dz) % M + M) % M;
            else return schedule.slot(dz == 0 ? q : schedule.source_plane(q, dz));
          };
          // What sweep s does with its plane q at this step.
          const auto work_of = [&](int s, Index q) {
            if constexpr (Steady) return plane_work::compute;
            else if constexpr (Ramp)
              return j >= schedule.ramp_first(s) && j < schedule.ramp_end(s) ? plane_work::compute : plane_work::none;
            else return schedule.work(s, q);
          };
          const T incoming = loaded[0];
#pragma unroll
          for (int a = 0; a + 1 < ahead; ++a) loaded[a] = loaded[a + 1];
          if constexpr (Known) {  // steady steps only where plane(0, j + ahead) is direct
            const auto direct = [&] {
              if constexpr (is_constant_policy_v<Policy>)
                return in_column != nullptr ? load_chunk<true>(in_column + load_at) : static_cast<T>(policy.value);
              else return load_chunk<true>(in_column + load_at);
            };
            if constexpr (Steady) loaded[ahead - 1] = direct();
            else loaded[ahead - 1] = j + Index(ahead) < schedule.ramp_end(0) ? direct() : T();
          } else {
            loaded[ahead - 1] = load(j + Index(ahead));
          }

#pragma unroll
          for (int s = K; s >= 1; --s) {
            const Index q = schedule.plane(s, j);
            const plane_work work = work_of(s, q);
            T value = T();
            if (work == plane_work::compute) {
              T window[S][S][S];  // only what f reads is loaded
#pragma unroll
              for (int dz = -R; dz <= R; ++dz) {
                const T* const from = mine + ((s - 1) * M + slot_of(s, q, dz)) * P;
#pragma unroll
                for (int dy = -R; dy <= R; ++dy)
#pragma unroll
                  for (int dx = -R; dx <= R; ++dx)
                    window[dz + R][dy + R][dx + R] =
                        Known && dy == 0 && dx == 0 ? queue[s - 1][R + dz] : from[dy * W + dx];
              }
              value = static_cast<T>(f(volume_neighbourhood<T, R>(&window[R][R][R], S * S, S)));
            } else if (work == plane_work::fill && s < K) {
              value = decided_value(s, q);
            }
            if (s == K) {  // the tile, stored where single sweeps store
              if (work == plane_work::compute && out_column != nullptr)
                out_column[Known ? store_at : std::size_t(q) * out_slice] = value;
            } else {
#pragma unroll
              for (int i = 0; i + 1 < S; ++i) queue[s][i] = queue[s][i + 1];
              queue[s][S - 1] = value;
              if (work != plane_work::none) mine[(s * M + slot_of(s, q, 0)) * P] = value;
            }
          }
          {  // sweep 0
            const Index q = schedule.plane(0, j);
#pragma unroll
            for (int i = 0; i + 1 < S; ++i) queue[0][i] = queue[0][i + 1];
            queue[0][S - 1] = incoming;
            if (Known || schedule.work(0, q) != plane_work::none) mine[slot_of(0, q, 0) * P] = incoming;
          }

          // The in-plane edge of the planes sweeps 1 .. K - 1 computed, and under interior of the
          // plane sweep 0 loaded: `in` need not be the matrix whose border is time t0's (a pass of
          // an even number of sweeps swaps the matrices and keeps the time's parity).
          if constexpr (edge != volume_edge::periodic && Edge != 0) {
            if (Edge == 1 || at_edge) {
              if constexpr (edge == volume_edge::clamp) __syncthreads();
              if (decided) {
#pragma unroll
                for (int s = edge == volume_edge::interior ? 0 : 1; s < K; ++s) {
                  const Index q = schedule.plane(s, j);
                  if (!Steady && work_of(s, q) != plane_work::compute) continue;
                  T* const element = mine + (s * M + slot_of(s, q, 0)) * P;
                  T value;
                  if constexpr (edge == volume_edge::clamp) value = element[clamp_from];
                  else value = decided_value(s, q);
                  *element = value;
                  queue[s][S - 1] = value;
                }
              }
            }
          }
          __syncthreads();  // this step's planes are written; the next step reads them
        };

        // The unrolled steps: groups of M with compile-time slots, from a step j whose j - origin
        // is a multiple of M; steady ones where every sweep computes and plane(0, j + ahead) is
        // direct, compiled apart for the blocks at the in-plane edge.
        const Index unrolled_end = steady_end < direct_end - Index(ahead) ? steady_end : direct_end - Index(ahead);
        // load_at and store_at: the offsets of step j0's planes, advanced past the group's.
        const auto unrolled = [&](Index j0, auto mode, std::size_t& load_at, std::size_t& store_at,
                                  auto at_edge_steps) {
          for_phases(std::make_integer_sequence<int, M>{}, [&](auto phase) {
            step(j0 + Index(decltype(phase)::value), mode, phase, load_at, store_at, at_edge_steps);
            load_at += in_slice;
            store_at += out_slice;
          });
        };
        using general_t = std::integral_constant<volume_step, volume_step::general>;
        using steady_t = std::integral_constant<volume_step, volume_step::steady>;
        const auto general_step = [&](Index j) {
          step(j, general_t{}, std::integral_constant<int, 0>{}, 0, 0, std::integral_constant<int, 2>{});
        };
        if constexpr (fused_volume_ramp_steps) {
          // One loop, so that each form is compiled once: steady groups, ramp groups elsewhere in
          // a clean chunk (a group may run past the last step: no sweep takes anything there),
          // general steps elsewhere.
          using ramp_t = std::integral_constant<volume_step, volume_step::ramp>;
          const Index steady_from =
              clean ? (schedule.first_steady() + Index(M - 1)) / Index(M) * Index(M) : schedule.origin;
          for (Index j = 0; j < steps;) {
            std::size_t load_at = std::size_t(schedule.plane(0, j + Index(ahead))) * in_slice;
            std::size_t store_at = std::size_t(schedule.plane(K, j)) * out_slice;
            if (j >= steady_from && j + Index(M) <= unrolled_end) {
              if (edge != volume_edge::periodic && at_edge)
                unrolled(j, steady_t{}, load_at, store_at, std::integral_constant<int, 1>{});
              else unrolled(j, steady_t{}, load_at, store_at, std::integral_constant<int, 0>{});
              j += Index(M);
            } else if (clean) {
              unrolled(j, ramp_t{}, load_at, store_at, std::integral_constant<int, 2>{});
              j += Index(M);
            } else {
              general_step(j++);
            }
          }
        } else {
          // General steps, then the steady ones in a loop of their own (the form measured on a
          // GPU), then general steps.
          Index j = 0;
          for (; j < schedule.origin; ++j) general_step(j);
          const auto steady_loop = [&](auto at_edge_steps) {
            std::size_t load_at = std::size_t(schedule.plane(0, j + Index(ahead))) * in_slice;
            std::size_t store_at = std::size_t(schedule.plane(K, j)) * out_slice;
            for (; j + Index(M) <= unrolled_end; j += Index(M))
              unrolled(j, steady_t{}, load_at, store_at, at_edge_steps);
          };
          if (j + Index(M) <= unrolled_end) {
            if (edge != volume_edge::periodic && at_edge) steady_loop(std::integral_constant<int, 1>{});
            else steady_loop(std::integral_constant<int, 0>{});
          }
          for (; j < steps; ++j) general_step(j);
        }
      }
    }
  }
}

}  // namespace coalesce::detail
