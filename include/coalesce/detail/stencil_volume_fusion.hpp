// coalesce::detail: the arithmetic of iterated stencils on volumes (temporal blocking along z) -
// the region of a plane a block holds, the rings of planes each fused sweep keeps in shared
// memory, how many sweeps a pass fuses, and the schedule of a block's walk along z: which plane
// each sweep computes at each step, which planes the edge decides, and where a sweep reads the
// planes around it. Plain constexpr code, shared by the kernel (stencil_fused_volume_walk.hpp)
// and the host test that replays it (tests/host/stencil_volume_fusion.cpp). Users never include
// this header; <coalesce/stencil.hpp> does.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_fusion.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce::detail {

// The fused volume walk's block: 32 x 32 threads, thread (x, y) owning column (y, x) of the
// block's region of every plane (AN5D's scheme, Matsumura et al., CGO'20): it walks z keeping,
// for each sweep but the last, the 2R + 1 newest planes of its own column in registers (the
// queue), so a star's reads along z cost nothing; the neighbours in y and x, and a box's reads off
// the column, come from the sweep's ring of planes in shared memory.
inline constexpr unsigned fused_volume_threads_x = 32;
inline constexpr unsigned fused_volume_threads_y = 32;

// The most sweeps a volume pass fuses: each one more holds 2R + 1 more elements in each thread's
// registers, and past 4 at radius 1 the queues of 32 registers a thread no longer fit (measured:
// bench/experiments/fused_volume_queue.cu).
inline constexpr int fused_volume_most_sweeps = 4;

// The most shared memory a block of any GPU coalesce runs on may opt into (sm_90's 227 KiB); a
// device with less refuses the passes that need more (stencil_iterate.hpp).
inline constexpr std::size_t fused_volume_most_shared_bytes = 227 * 1024;

// Planes a block walks along z in one pass: enough that the 2kR planes read beyond its chunk
// (the halo along z) cost little, few enough that a 512^3 volume gives several blocks a
// multiprocessor (the launch may take fewer on a shallow volume).
inline constexpr int fused_volume_planes_per_block = 64;

template <int R, std::size_t Size>
struct fused_volume_geometry {
  static constexpr bool element_supported = (Size == 4 || Size == 8) && R >= 1 && R <= 2;
  static constexpr int region_rows = int(fused_volume_threads_y);
  static constexpr int region_cols = int(fused_volume_threads_x);
  // A sweep's ring: the 2R + 1 planes the next sweep reads and the one it writes meanwhile. A
  // plane in shared memory has R rows of padding above and below the region, and the rings a row
  // of slack before the first plane and after the last, so that every read of a neighbour (at
  // most R rows and R columns away; a box's corner from the region's first or last element) stays
  // inside the block's shared memory: a read beyond the region's edge (padding, slack, or the row
  // before's last columns) is only for positions a later sweep no longer keeps, whose values no one
  // uses.
  static constexpr int ring_planes = 2 * R + 2;
  static constexpr int plane_elements = (region_rows + 2 * R) * region_cols;
  static constexpr std::size_t plane_bytes = std::size_t(plane_elements) * Size;
  static constexpr int slack_elements = region_cols;
  // Sweeps 0 .. k - 1 keep rings (sweep 0 is the planes as loaded); sweep k writes memory.
  static constexpr std::size_t shared_bytes(int k) {
    return std::size_t(k) * std::size_t(ring_planes) * plane_bytes + 2 * std::size_t(slack_elements) * Size;
  }

  COALESCE_HOST_DEVICE static constexpr int tile_rows(int k) { return region_rows - 2 * k * R; }
  COALESCE_HOST_DEVICE static constexpr int tile_cols(int k) { return region_cols - 2 * k * R; }

  // The 32-bit registers a thread's queues take, and so the blocks of 1024 threads a
  // multiprocessor holds (__launch_bounds__): two, 32 registers a thread, where the queues take
  // at most half of those (the rest hold the addresses, the steps' bounds and the values in
  // flight); one, 64 registers, otherwise.
  static constexpr int queue_words(int k) { return (2 * R + 1) * k * int((Size + 3) / 4); }
  static constexpr int blocks_per_sm(int k) { return queue_words(k) <= 16 ? 2 : 1; }

  // The most sweeps a pass can fuse: at most fused_volume_most_sweeps, a tile of 8 rows and 8
  // columns or more, rings that fit.
  static constexpr int most_sweeps() {
    if (!element_supported) return 1;
    int k = 1;
    while (k < fused_volume_most_sweeps && tile_rows(k + 1) >= 8 && tile_cols(k + 1) >= 8 &&
           shared_bytes(k + 1) <= fused_volume_most_shared_bytes)
      ++k;
    return k;
  }
  static constexpr bool supported = most_sweeps() > 1;
};

// The modelled cost of a pass of k sweeps per useful element-sweep, in clocks of one
// multiprocessor, a step of the walk (every sweep one plane of the block's region) costing the
// most of three: the DRAM bytes (the region read, with the 2kR planes beyond a chunk, and the tile
// written; fused_dram_bytes_per_clock), the shared-memory bytes (every sweep's whole region: a
// star's 4R reads in its plane and one store; fused_shared_bytes_per_clock), and the latency of a
// step's chain of load, store, barrier, loads and arithmetic, which is what bounds the walk:
// measured on an NVIDIA H100 (bench/experiments/fused_volume_queue.cu, 512^3 floats), a step took
// about 900 clocks of a multiprocessor holding two blocks, at k = 2, 3 and 4 alike, above both of
// the others (430 to 640).
inline constexpr double fused_volume_step_clocks = 1800.0;  // one block's step, with nothing beside it

template <int R, std::size_t Size>
constexpr double fused_volume_pass_cost(int k) {
  using g = fused_volume_geometry<R, Size>;
  const double region = double(g::region_rows) * double(g::region_cols);
  const double tile = double(g::tile_rows(k)) * double(g::tile_cols(k));
  const double planes = double(fused_volume_planes_per_block);
  const double dram = (region * (planes + 2.0 * k * R) / planes + tile) * double(Size) / fused_dram_bytes_per_clock;
  const double shared = region * double(k) * double(4 * R + 1) * double(Size) / fused_shared_bytes_per_clock;
  const double latency = fused_volume_step_clocks / double(g::blocks_per_sm(k));
  const double step = dram > shared ? (dram > latency ? dram : latency) : (shared > latency ? shared : latency);
  return step / (double(k) * tile);
}

// The sweeps a pass fuses when the caller does not say, on a device whose blocks may opt into
// `shared_limit` bytes: the k of least modelled cost whose rings fit as many blocks a
// multiprocessor as its registers allow, 1 where that does not beat a single sweep's 2 x Size
// bytes of DRAM. For floats: 4 at radius 1, 3 at radius 2 on an H100 or H200
// (tests/host/stencil_volume_fusion.cpp holds these).
template <int R, std::size_t Size>
constexpr int automatic_fused_volume_sweeps(std::size_t shared_limit) {
  using g = fused_volume_geometry<R, Size>;
  if (!g::supported) return 1;
  int best = 1;
  for (int k = 2; k <= g::most_sweeps() && std::size_t(g::blocks_per_sm(k)) * g::shared_bytes(k) <= shared_limit; ++k)
    if (best == 1 || fused_volume_pass_cost<R, Size>(k) < fused_volume_pass_cost<R, Size>(best)) best = k;
  if (best == 1) return 1;
  const double single_sweep = 2.0 * double(Size) / fused_dram_bytes_per_clock;
  return fused_volume_pass_cost<R, Size>(best) < single_sweep ? best : 1;
}

// Whether a call without coalesce::fuse takes the fused walk of a volume. Not yet: on an NVIDIA
// H100, CUDA 13.0 (docs/bench/iterated-h100, c1f7617), this form ran 100 sweeps of the 7-point
// stencil on 512^3 floats with k = 4 at 1.105x the single sweeps (a pass at 1.17x, where the
// hand-written pass of the same scheme runs 1.87x), and on an H200 single sweeps are about 1.3x
// faster than on an H100, the fused walk not. Single sweeps, the 2.5D walk, stay what the call
// does until it measures faster on both; coalesce::fuse{k} asks for it.
inline constexpr bool fused_volume_walk_by_default = false;

// Whether the kernel runs the steps of a clean chunk (volume_pass_schedule::clean) as ramp and
// steady steps, with compile-time ring slots, instead of general steps around the steady ones.
// Written to remove most of the general steps (20 of a 64-plane chunk's 76, about 4x a steady
// step's instructions each), and replayed on the host (tests/host/stencil_volume_fusion.cpp), but
// not yet run on a GPU: off until device.stencil_iterate_volume passes with it.
inline constexpr bool fused_volume_ramp_steps = false;

// What the edge means for a plane along z, by policy (the in-plane edge is the matrix walk's).
enum class volume_edge { periodic, clamp, constant, interior };

template <class Policy>
COALESCE_HOST_DEVICE constexpr volume_edge volume_edge_of() {
  if constexpr (std::is_same_v<Policy, periodic_t>) return volume_edge::periodic;
  else if constexpr (std::is_same_v<Policy, clamp_t>) return volume_edge::clamp;
  else if constexpr (std::is_same_v<Policy, interior_t>) return volume_edge::interior;
  else return volume_edge::constant;
}

// What sweep s does with a plane at a step of the walk.
enum class plane_work : unsigned char {
  none,     // no plane of this sweep at this step
  compute,  // f on the plane's region (sweep 0: the plane loaded as a single sweep reads it)
  fill,     // the edge decides the whole plane: constant(v) beyond it, interior's border planes
};

// A block's walk along z in one pass of k sweeps, for the output planes [out_lo, out_hi) of its
// chunk. Sweep s works on planes [lo(s), hi(s)): the chunk and (k - s)R planes either side. The
// sweeps advance together, one plane each a step, sweep s lagging sweep s - 1 by R + 1 planes: at
// step j sweep s takes plane anchor + j - s(R + 1), reading sweep s - 1's planes up to the one it
// took at step j - 1. So one barrier a step separates every sweep's writes from its readers, and
// a ring of 2R + 2 planes a sweep holds what the next reads (2R + 1) and what it writes. Plane
// numbers are of type I: the kernel's index type (int where the volume allows), long long on the
// host.
template <int R, class I = long long>
struct volume_pass_schedule {
  volume_edge edge;
  I depth;
  I out_lo, out_hi;  // output planes of the chunk; out_lo < out_hi
  int k;
  I origin = 0;  // the step whose planes take slot 0 of every ring (slot)

  static constexpr int ring = 2 * R + 2;

  COALESCE_HOST_DEVICE constexpr I anchor() const { return out_lo - I(k * R); }
  COALESCE_HOST_DEVICE constexpr I steps() const { return out_hi - out_lo + I(k * (2 * R + 1)); }
  COALESCE_HOST_DEVICE constexpr I plane(int s, I step) const { return anchor() + step - I(s * (R + 1)); }

  // Planes of sweep s: beyond the edge only where they are read as themselves (periodic images,
  // constant(v)); clamp reads the edge plane instead (source_plane), and under interior no
  // computed plane reads beyond the edge.
  COALESCE_HOST_DEVICE constexpr I lo(int s) const {
    const I first = out_lo - I((k - s) * R);
    return (edge == volume_edge::clamp || edge == volume_edge::interior) && first < 0 ? I(0) : first;
  }
  COALESCE_HOST_DEVICE constexpr I hi(int s) const {
    const I end = out_hi + I((k - s) * R);
    return (edge == volume_edge::clamp || edge == volume_edge::interior) && end > depth ? depth : end;
  }

  COALESCE_HOST_DEVICE constexpr plane_work work(int s, I q) const {
    if (q < lo(s) || q >= hi(s)) return plane_work::none;
    if (edge == volume_edge::constant && s > 0 && (q < 0 || q >= depth)) return plane_work::fill;
    if (edge == volume_edge::interior && (q < R || q >= depth - R)) return plane_work::fill;
    return plane_work::compute;
  }

  // The plane of sweep s - 1 that a single sweep reads at q + dz: the nearest edge plane beyond
  // the edge under clamp, else q + dz itself (held by the ring).
  COALESCE_HOST_DEVICE constexpr I source_plane(I q, int dz) const {
    const I p = q + I(dz);
    if (edge != volume_edge::clamp) return p;
    return p < 0 ? I(0) : p >= depth ? depth - 1 : p;
  }

  // Where plane p of a sweep lives in its ring: (p - anchor() - origin) modulo the ring, so that
  // at the steps origin, origin + ring, ... every sweep's plane is in slot 0 (the kernel sets
  // origin to first_steady(), and its steady steps find their slots at compile time).
  COALESCE_HOST_DEVICE constexpr int slot(I p) const {
    const I m = (p - anchor() - origin) % I(ring);
    return int(m < 0 ? m + I(ring) : m);
  }

  // The planes sweep s computes (work: compute), [compute_lo(s), compute_hi(s)), empty where the
  // first is not below the second.
  COALESCE_HOST_DEVICE constexpr I compute_lo(int s) const {
    I c = lo(s);
    if (edge == volume_edge::constant && s > 0 && c < 0) c = 0;
    if (edge == volume_edge::interior && c < I(R)) c = I(R);
    return c;
  }
  COALESCE_HOST_DEVICE constexpr I compute_hi(int s) const {
    I c = hi(s);
    if (edge == volume_edge::constant && s > 0 && c > depth) c = depth;
    if (edge == volume_edge::interior && c > depth - I(R)) c = depth - I(R);
    return c;
  }

  // The steady steps, [first_steady(), steady_end()): every sweep computes its plane, and every
  // plane a sweep reads of the sweep before was computed as itself (none filled, none the edge
  // plane read for one beyond it), so it is the newest 2R + 1 of that sweep's planes, in order:
  // what the thread's queue holds. Every sweep's bounds at its lag, the tightest taken; empty
  // (steady_end() == first_steady()) where they cross.
  COALESCE_HOST_DEVICE constexpr I first_steady() const {
    I first = 0;
    for (int s = 0; s <= k; ++s) {
      const I lag = I(s * (R + 1)) - anchor();
      if (compute_lo(s) + lag > first) first = compute_lo(s) + lag;
      if (s > 0 && compute_lo(s - 1) + I(R) + lag > first) first = compute_lo(s - 1) + I(R) + lag;
    }
    return first < steps() ? first : steps();
  }
  COALESCE_HOST_DEVICE constexpr I steady_end() const {
    I end = steps();
    for (int s = 0; s <= k; ++s) {
      const I lag = I(s * (R + 1)) - anchor();
      if (compute_hi(s) + lag < end) end = compute_hi(s) + lag;
      if (s > 0 && compute_hi(s - 1) - I(R) + lag < end) end = compute_hi(s - 1) - I(R) + lag;
    }
    const I first = first_steady();
    return end > first ? end : first;
  }

  // Whether the chunk is clear of the z edge: every sweep's planes [lo(s), hi(s)) lie inside the
  // volume (under interior, inside its interior), so that no plane is filled, no plane stands for
  // another, and every plane a sweep reads of the sweep before is computed as itself, at the
  // latest the step before. Every step is then a ramp step: sweep s computes at the steps
  // [ramp_first(s), ramp_end(s)) and takes nothing at the others, reading its column from the
  // queue, as in a steady step. Most chunks of a deep volume are clean.
  COALESCE_HOST_DEVICE constexpr bool clean() const {
    const I margin = edge == volume_edge::interior ? I(R) : I(0);
    return anchor() >= margin && out_hi + I(k * R) <= depth - margin;
  }
  COALESCE_HOST_DEVICE static constexpr I ramp_first(int s) { return I(s * (2 * R + 1)); }
  COALESCE_HOST_DEVICE constexpr I ramp_end(int s) const { return out_hi - out_lo + I(2 * k * R + s); }
};

}  // namespace coalesce::detail
