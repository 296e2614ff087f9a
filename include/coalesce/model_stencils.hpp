// coalesce::model, stencils: the memory traffic of coalesce::stencil's walks, computed from their
// block shapes - the band walk's halo (one sweep) and the fused walks' passes (several sweeps in
// shared memory, coalesce::stencil<R>(steps, ...), on a matrix and on a volume). constexpr, usable in static_assert, in
// plain host code with no GPU, and in __device__ code. The device tests hold both to the counters.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/model.hpp>

#include <cstddef>

namespace coalesce::model {

/// The halo of a stencil walked in bands (coalesce::stencil's band walk): each thread computes a
/// vector of `vector_elements` outputs in `rows_per_thread` consecutive rows, a block is `block_x`
/// threads across and `block_y` bands down, and every thread loads its vector of each input row
/// it needs (radius rows above and below its own) and the `radius` elements on either side. If
/// L1 keeps what a block loads until its threads are done, L2 serves each sector a block touches
/// once: (block_y * rows_per_thread + 2 * radius) rows, each the block's span of
/// block_x * vector_elements elements plus the sectors holding the halo elements either side. This
/// returns that, over the output sectors the block writes: the L1-to-L2 read traffic of one input
/// per sector of output. Rows start on 32-byte boundaries and the block's span is whole sectors.
/// For floats at radius 1: one vector a thread in blocks of 256 across (the walk's first design)
/// gives 3 x 130 / 128 = 3.05, the bands of 64 x 4 threads and 2 rows 10 x 34 / 256 = 1.33.
COALESCE_HOST_DEVICE constexpr double band_halo_sectors_per_output_sector(unsigned radius, unsigned elem_bytes,
                                                                          unsigned vector_elements,
                                                                          unsigned rows_per_thread, unsigned block_x,
                                                                          unsigned block_y) {
  const double span_sectors = double(block_x) * vector_elements * elem_bytes / sector_bytes;
  const unsigned halo_sectors_each_side = (radius * elem_bytes + sector_bytes - 1) / sector_bytes;
  const double rows_out = double(block_y) * rows_per_thread;
  return (rows_out + 2.0 * radius) * (span_sectors + 2.0 * halo_sectors_each_side) / (rows_out * span_sectors);
}

/// What one pass of the fused walk of an iterated stencil (coalesce::stencil<R>(steps, ...),
/// temporal blocking) moves. A block holds a region of `region_rows` x `region_cols` elements and
/// writes its inner tile, the region less sweeps x radius on every side; blocks tile the matrix.
struct fused_pass_traffic {
  /// DRAM bytes read and written: every sector of the matrix read once and written once, if L2
  /// keeps the halo rows and columns that neighbouring blocks both load (they run together).
  double dram_bytes = 0;
  /// Sectors L2 serves to L1's reads: each block's region once (its rows and columns inside the
  /// matrix; a clamped or wrapped position outside reads a sector the region has already), if L1
  /// keeps what a block loads while its threads read it.
  double l2_sectors_read_by_l1 = 0;
  /// Sectors of output the pass writes: the whole matrix.
  double output_sectors = 0;
};

/// fused_pass_traffic of one pass of `sweeps` sweeps at `radius` on a rows x cols matrix of
/// `elem_bytes` elements whose rows start on sector boundaries: tiles of (region_rows - 2 sweeps
/// radius) x (region_cols - 2 sweeps radius) elements, tile (by, bx)'s region starting sweeps x
/// radius rows above and columns left of it. For the walk's 64 x 128 floats at radius 1 and 4
/// sweeps, on 8192 x 8192: 1.294 sectors from L2 a sector of output, against the band walk's 1.33
/// for one sweep; the DRAM bytes of one read and one write, for 4 sweeps.
COALESCE_HOST_DEVICE constexpr fused_pass_traffic fused_stencil_pass(std::size_t rows, std::size_t cols,
                                                                     unsigned radius, unsigned elem_bytes,
                                                                     unsigned sweeps, unsigned region_rows,
                                                                     unsigned region_cols) {
  fused_pass_traffic t{};
  const long long halo = (long long)sweeps * radius;
  const long long tile_rows = (long long)region_rows - 2 * halo, tile_cols = (long long)region_cols - 2 * halo;
  if (rows == 0 || cols == 0 || tile_rows <= 0 || tile_cols <= 0) return t;
  const double row_sectors = double((cols * elem_bytes + sector_bytes - 1) / sector_bytes);
  t.output_sectors = double(rows) * row_sectors;
  t.dram_bytes = 2.0 * t.output_sectors * sector_bytes;
  // The sectors of one region row, summed over the blocks across; then the region rows of every
  // block down, each with those sectors.
  double sectors_across = 0;
  for (long long left = -halo; left + halo < (long long)cols; left += tile_cols) {
    const long long first = left < 0 ? 0 : left;
    const long long end = left + region_cols > (long long)cols ? (long long)cols : left + region_cols;
    sectors_across += double((end * elem_bytes + sector_bytes - 1) / sector_bytes - first * elem_bytes / sector_bytes);
  }
  double rows_down = 0;
  for (long long top = -halo; top + halo < (long long)rows; top += tile_rows) {
    const long long first = top < 0 ? 0 : top;
    const long long end = top + region_rows > (long long)rows ? (long long)rows : top + region_rows;
    rows_down += double(end - first);
  }
  t.l2_sectors_read_by_l1 = rows_down * sectors_across;
  return t;
}

/// fused_pass_traffic of one pass of the fused walk of a volume (coalesce::stencil<R>(steps, ...)
/// on a pitched_volume): each plane is tiled as fused_stencil_pass tiles a matrix, and blocks walk
/// z in chunks of `chunk_planes`, each loading the planes of its chunk and sweeps x radius beyond
/// it on either side that lie in the volume (reads beyond the edge clamped: the edge plane is
/// already loaded). For the walk's 32 x 32 floats at radius 1 and 4 sweeps, in chunks of 64
/// planes, on 512^3: 2.44 sectors from L2 a sector of output; the DRAM bytes of one read and one
/// write, for 4 sweeps.
COALESCE_HOST_DEVICE constexpr fused_pass_traffic fused_volume_stencil_pass(std::size_t depth, std::size_t rows,
                                                                            std::size_t cols, unsigned radius,
                                                                            unsigned elem_bytes, unsigned sweeps,
                                                                            unsigned region_rows, unsigned region_cols,
                                                                            unsigned chunk_planes) {
  fused_pass_traffic plane = fused_stencil_pass(rows, cols, radius, elem_bytes, sweeps, region_rows, region_cols);
  if (depth == 0 || chunk_planes == 0) return fused_pass_traffic{};
  const long long halo = (long long)sweeps * radius;
  double planes_loaded = 0;
  for (long long z0 = 0; z0 < (long long)depth; z0 += chunk_planes) {
    const long long first = z0 - halo < 0 ? 0 : z0 - halo;
    const long long end = z0 + chunk_planes + halo > (long long)depth ? (long long)depth : z0 + chunk_planes + halo;
    planes_loaded += double(end - first);
  }
  plane.l2_sectors_read_by_l1 *= planes_loaded;
  plane.output_sectors *= double(depth);
  plane.dram_bytes *= double(depth);
  return plane;
}

}  // namespace coalesce::model
