// coalesce::detail: the arithmetic of iterated stencils (temporal blocking) - the shared-memory
// region a block of the fused walk holds, how many sweeps one pass over memory fuses (k), and how
// `steps` sweeps split into passes so that the result lands where single sweeps would leave it.
// Plain constexpr host code, tested on the host (tests/host/stencil_fusion.cpp). Users never
// include this header; <coalesce/stencil.hpp> does.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>

namespace coalesce::detail {

// The fused walk's block: 32 x 8 threads. Thread (x, y) owns rows y * L .. y * L + L - 1 of the
// region (L = rows_per_thread) and, in its sweeps, the 16-byte vector of columns C x .. C x + C - 1
// (C = columns_per_thread: 4 floats or 2 doubles), so a warp reads and writes one whole shared row
// as 16-byte accesses, and takes the elements beside its vector from the neighbouring lanes. Its
// load from memory takes columns x, x + 32, ...: 32 elements of one global row per load.
inline constexpr unsigned fused_threads_x = 32;
inline constexpr unsigned fused_threads_y = 8;

// The rows a thread owns, L, and so the region's height (8L): 8 where (L + 2R) x (2R + 1)
// elements take at most 80 32-bit registers, 4 where only that fits, and 0 (no fused walk: the
// element size or the radius takes single sweeps) otherwise. (The rule sized the window of an
// earlier form of the walk, a column at a time; the sweeps now keep 2R + 1 rows of C + 2R
// elements, fewer, and the rule stays for the region shapes it gives, which are the measured ones.)
inline constexpr std::size_t fused_window_register_budget = 80;

constexpr std::size_t fused_window_words(int radius, std::size_t element_size, int rows_per_thread) {
  return std::size_t(rows_per_thread + 2 * radius) * std::size_t(2 * radius + 1) * ((element_size + 3) / 4);
}

// The shared-memory region of one block of the fused walk for radius R and elements of `Size`
// bytes: region_rows x region_cols elements, twice (the sweep being read and the one being
// written). A pass of k sweeps writes the inner (region_rows - 2kR) x (region_cols - 2kR) tile.
template <int R, std::size_t Size>
struct fused_geometry {
  // The walk takes elements of 4 and 8 bytes: a warp's access to a shared row is then one or two
  // wavefronts, and 128 x 64 floats or 64 x 64 doubles fit twice in 64 KiB (sm_75's whole opt-in).
  static constexpr bool element_supported = Size == 4 || Size == 8;
  static constexpr int columns_per_thread = Size == 8 ? 2 : 4;
  static constexpr int rows_per_thread = !element_supported                                               ? 0
                                         : fused_window_words(R, Size, 8) <= fused_window_register_budget ? 8
                                         : fused_window_words(R, Size, 4) <= fused_window_register_budget ? 4
                                                                                                          : 0;
  // A sweep takes the R elements beside a thread's vector from the neighbouring lanes' vectors.
  static constexpr bool supported = rows_per_thread > 0 && R <= columns_per_thread;
  static constexpr int region_rows = int(fused_threads_y) * rows_per_thread;
  static constexpr int region_cols = int(fused_threads_x) * columns_per_thread;
  static constexpr std::size_t shared_bytes = 2 * std::size_t(region_rows) * std::size_t(region_cols) * Size;
  // Blocks a multiprocessor holds at once (__launch_bounds__): three of 64 KiB fit sm_90's 228
  // KiB, so the registers are capped for three (80 a thread), and for two where the window alone
  // takes more than half of that.
  static constexpr int blocks_per_sm = fused_window_words(R, Size, rows_per_thread) <= 40 ? 3 : 2;

  // The inner tile a pass of k sweeps writes, along each axis: the region less k halos of R.
  static constexpr int tile_rows(int k) { return region_rows - 2 * k * R; }
  static constexpr int tile_cols(int k) { return region_cols - 2 * k * R; }

  // The most sweeps a pass can fuse: the inner tile keeps at least 8 rows and 8 columns (fewer
  // would recompute the halo more times than the tile is worth).
  static constexpr int most_sweeps() {
    if (!supported) return 1;
    int k = 1;
    while (tile_rows(k + 1) >= 8 && tile_cols(k + 1) >= 8) ++k;
    return k;
  }
};

// The region rows a thread's window reads (stencil_fused_kernel): rows first_row - R .. first_row +
// L - 1 + R around its own L rows, from three addresses at fixed offsets - its own rows, the R rows
// above them (`above` rows from first_row) and the R below (`below`). Where those would lie beyond
// the region (the first and last rows of threads) they are the thread's own rows instead: only the
// outputs of rows outside every sweep's region read them, and those are not computed.
template <int R, int L, int H>
struct fused_window_rows {
  int above, below;

  COALESCE_HOST_DEVICE constexpr explicit fused_window_rows(int first_row)
      : above(first_row >= R ? -R : 0), below(first_row + L + R <= H ? L : L - R) {}

  // The region row that window row i (0 .. L + 2R - 1) of the thread at first_row reads.
  COALESCE_HOST_DEVICE constexpr int row(int first_row, int i) const {
    return first_row + (i < R ? above + i : i < L + R ? i - R : below + (i - L - R));
  }
};

// visit(l, li) for each row l of a thread's L rows (region row li = first_row + l) that lies in a
// sweep's rows [lo, end). Most threads have all of theirs there: they take a copy of the loop with
// no test a row, so that its stores need no branch each (both fused walks).
template <int L, class Visit>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE void for_rows_in(int first_row, int lo, int end, const Visit& visit) {
  if (first_row >= lo && first_row + L <= end) {
    COALESCE_DETAIL_UNROLL
    for (int l = 0; l < L; ++l) visit(l, first_row + l);
  } else {
    COALESCE_DETAIL_UNROLL
    for (int l = 0; l < L; ++l)
      if (first_row + l >= lo && first_row + l < end) visit(l, first_row + l);
  }
}

// The access model of one pass, per useful element-sweep (an element of the inner tile advanced
// one sweep), in cycles of one multiprocessor: the DRAM bytes (the region read once, the tile
// written once) at dram_bytes_per_clock, and the shared-memory words (the region stored once; for
// every sweep every element of the region, which the walk computes whole: its window rows, each a
// vector of C elements and 2R beside it by shuffle, a shuffled word counted as a shared one, for
// C outputs, (L + 2R)(C + 2R) / (L C) a element, and one store; the tile read once to go out) at
// shared_bytes_per_clock; the pass costs the larger of the two. The rates are an H100's and
// H200's per multiprocessor: about 16 B a clock of DRAM (3.35-4.8 TB/s over 132 SMs at 1.6-1.98
// GHz) and 128 B a clock of shared memory (32 banks of 4 B).
inline constexpr double fused_dram_bytes_per_clock = 16.0;
inline constexpr double fused_shared_bytes_per_clock = 128.0;

template <int R, std::size_t Size>
constexpr double fused_pass_cost(int k) {
  using g = fused_geometry<R, Size>;
  const double region = double(g::region_rows) * double(g::region_cols);
  const double tile = double(g::tile_rows(k)) * double(g::tile_cols(k));
  const double useful = double(k) * tile;
  const double dram = (region + tile) * double(Size);
  const double window_words = double(g::rows_per_thread + 2 * R) * (1.0 + 2.0 * R / g::columns_per_thread);
  const double words_per_element = window_words / g::rows_per_thread + 1.0;
  const double shared = (region + double(k) * region * words_per_element + tile) * double(Size);
  const double dram_clocks = dram / fused_dram_bytes_per_clock, shared_clocks = shared / fused_shared_bytes_per_clock;
  return (dram_clocks > shared_clocks ? dram_clocks : shared_clocks) / useful;
}

// The sweeps a pass fuses when the caller does not say (coalesce::fuse): the k of least modelled
// cost per useful element-sweep, 1 (single sweeps, the band walk) where fusing gains nothing or
// the walk cannot take the elements or the radius. For floats: 5 at radius 1, 3 at radius 2, 2 at
// radius 3, 1 beyond; for doubles 4 and 2 (tests/host/stencil_fusion.cpp holds these).
template <int R, std::size_t Size>
constexpr int automatic_fused_sweeps() {
  using g = fused_geometry<R, Size>;
  if (!g::supported) return 1;
  int best = 1;
  for (int k = 2; k <= g::most_sweeps(); ++k)
    if (fused_pass_cost<R, Size>(k) < fused_pass_cost<R, Size>(best)) best = k;
  // A single sweep is the band walk, which reads each element about once (8 B a float sweep);
  // the fused walk's k = 1 costs more than that, so fusing must beat the band walk's DRAM time.
  const double band_walk = 2.0 * double(Size) / fused_dram_bytes_per_clock;
  return fused_pass_cost<R, Size>(best) < band_walk ? best : 1;
}

// How `steps` sweeps split into passes of at most k: `passes` passes, the first `longer` of them
// of `sweeps + 1` sweeps and the rest of `sweeps`. Each pass reads one matrix and writes the other,
// so the result is in v after an odd number of passes; single sweeps leave it in v after an odd
// number of sweeps, so the number of passes has the parity of `steps` (one pass more than
// ceil(steps / k) where it would not). Passes are as even as that allows.
struct fused_pass_plan {
  std::size_t passes = 0;
  std::size_t sweeps = 0;  // of the shorter passes
  std::size_t longer = 0;  // passes of sweeps + 1, which come first

  constexpr std::size_t sweeps_of(std::size_t pass) const { return pass < longer ? sweeps + 1 : sweeps; }
  constexpr std::size_t longest() const { return longer > 0 ? sweeps + 1 : sweeps; }
};

constexpr fused_pass_plan plan_fused_passes(std::size_t steps, std::size_t k) {
  fused_pass_plan plan;
  if (steps == 0 || k == 0) return plan;
  std::size_t passes = (steps + k - 1) / k;
  if ((passes ^ steps) & 1) ++passes;  // passes <= steps here: steps / k < steps unless k = 1
  plan.passes = passes;
  plan.sweeps = steps / passes;
  plan.longer = steps % passes;
  return plan;
}

}  // namespace coalesce::detail
