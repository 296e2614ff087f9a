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

// The fused volume walk's block is the plane walk's, 32 x 8 threads (fused_threads_x/y): thread
// (x, y) owns columns x and x + 32 of the region's plane and rows y * L .. y * L + L - 1, at every
// plane and every sweep. Its register window for one column is (2R + 1) planes of (L + 2R) x
// (2R + 1) elements; only what f reads is loaded, so the window is sized for the shapes iterated
// stencils on volumes are (stars: finite differences, the 7-point Jacobi): a star reads L + 2R
// elements of the column, 2R L beside it and 2R L on the planes around, and L is the most, of 4,
// 2 and 1, that keeps those at 40 32-bit words or fewer. (A box at radius 2 reads all 125 and
// spills; at radius 1 the 27-point box takes 54 words and fits.)
inline constexpr std::size_t fused_volume_star_register_budget = 40;

constexpr std::size_t fused_volume_star_words(int radius, std::size_t element_size, int rows_per_thread) {
  return std::size_t(rows_per_thread + 2 * radius + 4 * radius * rows_per_thread) * ((element_size + 3) / 4);
}

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
  static constexpr int columns_per_thread = 2;
  static constexpr int rows_per_thread = !element_supported                                                         ? 0
                                         : fused_volume_star_words(R, Size, 4) <= fused_volume_star_register_budget ? 4
                                         : fused_volume_star_words(R, Size, 2) <= fused_volume_star_register_budget ? 2
                                         : fused_volume_star_words(R, Size, 1) <= fused_volume_star_register_budget ? 1
                                                                                                                    : 0;
  static constexpr int region_rows = int(fused_threads_y) * rows_per_thread;
  static constexpr int region_cols = int(fused_threads_x) * columns_per_thread;
  // A sweep's ring: the 2R + 1 planes the next sweep reads and the one it writes meanwhile. A
  // plane in shared memory has R rows of padding above and below the region, so that a thread's
  // window (rows first_row - R .. first_row + L - 1 + R) is at fixed offsets from one address: the
  // rows outside the region are read only for positions outside the sweep's region, whose values
  // no one uses.
  static constexpr int ring_planes = 2 * R + 2;
  static constexpr int plane_elements = (region_rows + 2 * R) * region_cols;
  static constexpr std::size_t plane_bytes = std::size_t(plane_elements) * Size;
  // Sweeps 0 .. k - 1 keep rings (sweep 0 is the planes as loaded); sweep k writes memory.
  static constexpr std::size_t shared_bytes(int k) { return std::size_t(k) * std::size_t(ring_planes) * plane_bytes; }

  static constexpr int tile_rows(int k) { return region_rows - 2 * k * R; }
  static constexpr int tile_cols(int k) { return region_cols - 2 * k * R; }

  // The most sweeps a pass can fuse: a tile of 8 rows and 8 columns or more, rings that fit.
  static constexpr int most_sweeps() {
    if (rows_per_thread == 0) return 1;
    int k = 1;
    while (tile_rows(k + 1) >= 8 && tile_cols(k + 1) >= 8 && shared_bytes(k + 1) <= fused_volume_most_shared_bytes) ++k;
    return k;
  }
  static constexpr bool supported = most_sweeps() > 1;
};

// The modelled cost of a pass of k sweeps per useful element-sweep, in clocks of one
// multiprocessor, as for matrices (fused_pass_cost): the DRAM bytes (each plane's region read,
// with the 2kR planes beyond a chunk, and its tile written) against the shared-memory bytes (the
// region stored, then for each sweep its region's elements: a star's loads and one store).
template <int R, std::size_t Size>
constexpr double fused_volume_pass_cost(int k) {
  using g = fused_volume_geometry<R, Size>;
  const double region = double(g::region_rows) * double(g::region_cols);
  const double tile = double(g::tile_rows(k)) * double(g::tile_cols(k));
  const double planes = double(fused_volume_planes_per_block);
  const double dram = (region * (planes + 2.0 * k * R) / planes + tile) * double(Size);
  const int L = g::rows_per_thread;
  const double words_per_element = double(L + 2 * R + 4 * R * L) / double(L) + 1.0;
  double computed = 0.0;
  for (int s = 1; s <= k; ++s) computed += double(g::tile_rows(s)) * double(g::tile_cols(s));
  const double shared = (region + computed * words_per_element) * double(Size);
  const double dram_clocks = dram / fused_dram_bytes_per_clock, shared_clocks = shared / fused_shared_bytes_per_clock;
  return (dram_clocks > shared_clocks ? dram_clocks : shared_clocks) / (double(k) * tile);
}

// The sweeps a pass fuses when the caller does not say, on a device whose blocks may opt into
// `shared_limit` bytes: the k of least modelled cost whose rings take at most half of that (two
// blocks a multiprocessor, so one's barrier hides behind the other's work), 1 where that does not
// beat a single sweep's 2 x Size bytes of DRAM. For floats: 3 at radius 1, 2 at radius 2 on an
// H100 or H200 (tests/host/stencil_volume_fusion.cpp holds these).
template <int R, std::size_t Size>
constexpr int automatic_fused_volume_sweeps(std::size_t shared_limit) {
  using g = fused_volume_geometry<R, Size>;
  if (!g::supported) return 1;
  int best = 1;
  for (int k = 2; k <= g::most_sweeps() && 2 * g::shared_bytes(k) <= shared_limit; ++k)
    if (best == 1 || fused_volume_pass_cost<R, Size>(k) < fused_volume_pass_cost<R, Size>(best)) best = k;
  if (best == 1) return 1;
  const double single_sweep = 2.0 * double(Size) / fused_dram_bytes_per_clock;
  return fused_volume_pass_cost<R, Size>(best) < single_sweep ? best : 1;
}

// Whether a call without coalesce::fuse takes the fused walk of a volume. Not yet: measured on an
// NVIDIA H200, CUDA 13.0, 100 sweeps of the 7-point stencil on 512^3 floats at k = 3 ran at 0.535
// of the single sweeps' speed, while moving 0.35 of their DRAM bytes: the walk issues 1.06 G warp
// instructions a pass, mostly integer (docs/bench/iterated-h200). Single sweeps, the 2.5D walk,
// stay what the call does until the fused walk measures faster; coalesce::fuse{k} asks for it.
inline constexpr bool fused_volume_walk_by_default = false;

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

  // Where plane p of a sweep lives in its ring: planes read or written are >= anchor().
  COALESCE_HOST_DEVICE constexpr int slot(I p) const { return int(unsigned(p - anchor()) % unsigned(ring)); }
};

}  // namespace coalesce::detail
