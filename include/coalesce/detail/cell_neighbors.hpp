// coalesce::detail: which cells for_each_neighbor reads for a particle, and which a block of
// particles stages. Plain integer arithmetic for host and device, so that it is tested with no GPU
// (tests/host/cell_list.cpp). Users never include this header.
//
// Particles sorted by cell index ((z * ny + y) * nx + x) put the cells of one row (fixed y and z)
// next to each other: the three neighbour cells x - 1, x, x + 1 of a row are one contiguous range
// of particles, [offsets[row + x - 1], offsets[row + x + 2]). So a particle's 27 neighbour cells
// (9 in 2D) are 9 ranges (3 in 2D), one per neighbour row; under periodic boundaries the cell
// across the x edge is a range of its own, seen through the periodic image.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <cstdint>

namespace coalesce::detail {

// A cell's coordinates along x, y and z (z = 0 in 2D), and a grid's cells along each (nz = 1 in 2D).
struct cell_coordinates {
  int x, y, z;
};
struct grid_extents {
  int nx, ny, nz;
};

// Neighbour rows per cell: 3 x 3 in 3D, 3 in 2D.
template <int Dims>
inline constexpr int rows_per_cell = Dims == 3 ? 9 : 3;

// Coordinate v of an axis of n cells, one step outside or inside [0, n): true and v unchanged
// inside; outside, false when not periodic, else v wrapped to the other edge and `image` the
// number of box lengths to add to positions found there (-1 below the grid, +1 above).
template <bool Periodic>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE bool wrap_cell(int& v, int n, int& image) {
  image = 0;
  if (v >= 0 && v < n) return true;
  if constexpr (!Periodic) {
    return false;
  } else {
    image = v < 0 ? -1 : 1;
    v = v < 0 ? v + n : v - n;
    return true;
  }
}

// visit(row, slot, image_y, image_z) for each neighbour row of cell c: the rows y + dy, z + dz
// (dz = 0 in 2D) that exist, `row` the linear row index z * ny + y (its first cell is row * nx),
// `slot` the row's place among the rows_per_cell<Dims> (dz + 1) * 3 + (dy + 1) whether it exists
// or not, in increasing slot order. Periodic: every axis has at least 3 cells (checked by the
// caller), so the rows are distinct and each is one image.
COALESCE_DETAIL_EXEC_CHECK_DISABLE  // visit may be device code only (a kernel's lambda)
    template <int Dims, bool Periodic, class Visit>
    COALESCE_HOST_DEVICE COALESCE_FORCEINLINE void visit_neighbor_rows(cell_coordinates c, grid_extents n,
                                                                       Visit&& visit) {
  constexpr int reach_z = Dims == 3 ? 1 : 0;
  for (int dz = -reach_z; dz <= reach_z; ++dz) {
    int z = c.z + dz, image_z = 0;
    if (!wrap_cell<Periodic>(z, n.nz, image_z)) continue;
    for (int dy = -1; dy <= 1; ++dy) {
      int y = c.y + dy, image_y = 0;
      if (!wrap_cell<Periodic>(y, n.ny, image_y)) continue;
      visit(std::uint32_t(z) * std::uint32_t(n.ny) + std::uint32_t(y), (dz + reach_z) * 3 + (dy + 1), image_y, image_z);
    }
  }
}

// visit(first_x, last_x, image_x) for the neighbour cells of column x in a row of nx cells: the
// cells [max(x - 1, 0), min(x + 1, nx - 1)] (image 0), then under periodic boundaries, for a cell
// on an edge, the one across it (nx - 1 for x = 0, image -1; 0 for x = nx - 1, image +1). nx >= 3
// when periodic, so the two never overlap.
COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <bool Periodic, class Visit>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE void visit_neighbor_columns(int x, int nx, Visit&& visit) {
  visit(x > 0 ? x - 1 : 0, x < nx - 1 ? x + 1 : nx - 1, 0);
  if constexpr (Periodic) {
    if (x == 0) visit(nx - 1, nx - 1, -1);
    if (x == nx - 1) visit(0, 0, 1);
  }
}

// The coordinates of the cell of linear index `cell`.
COALESCE_HOST_DEVICE inline cell_coordinates coordinates_of(std::uint32_t cell, grid_extents n) {
  const std::uint32_t row = cell / std::uint32_t(n.nx);
  return {int(cell - row * std::uint32_t(n.nx)), int(row % std::uint32_t(n.ny)), int(row / std::uint32_t(n.ny))};
}

// --- the staged design: what a block of consecutive sorted particles stages -----------------
//
// A block takes particles [first, last] of the sorted order; their cells are [c_first, c_last],
// which span one row, or two consecutive ones (a run that crosses a row's end), or more (sparse
// cells: then the block reads its neighbours from the columns). Each spanned row q has the cells
// [xa, xb] of the block (xa = c_first's x for q = 0, else 0; xb = c_last's x for the last row,
// else nx - 1), and each of its neighbour rows one segment of cells [max(xa - 1, 0), min(xb + 1,
// nx - 1)]: a contiguous range of particles that holds the image-0 neighbours of every particle
// of the block in row q. The block copies those ranges into shared memory, one after another.

// Spanned rows a block stages for: 2 covers a run that crosses one row's end.
inline constexpr int most_staged_rows = 2;
template <int Dims>
inline constexpr int most_stage_segments = most_staged_rows * rows_per_cell<Dims>;

// One segment: cells [first_cell, last_cell] of one neighbour row, positions there seen through
// image (image_y, image_z). empty: no such row (outside a grid that is not periodic, or no second
// spanned row).
struct stage_segment {
  std::uint32_t first_cell, last_cell;
  int image_y, image_z;
  bool empty;
};

// How many rows cells [c_first, c_last] span (c_first <= c_last).
COALESCE_HOST_DEVICE inline std::uint32_t spanned_rows(std::uint32_t c_first, std::uint32_t c_last, int nx) {
  return c_last / std::uint32_t(nx) - c_first / std::uint32_t(nx) + 1;
}

// Segment k (k < most_stage_segments<Dims>) of the block whose cells are [c_first, c_last]:
// spanned row q = k / rows_per_cell, neighbour row slot k % rows_per_cell, in the slot order of
// visit_neighbor_rows. Only meaningful where spanned_rows(c_first, c_last) <= most_staged_rows.
template <int Dims, bool Periodic>
COALESCE_HOST_DEVICE stage_segment stage_segment_at(int k, std::uint32_t c_first, std::uint32_t c_last,
                                                    grid_extents n) {
  stage_segment s{0, 0, 0, 0, true};
  const int q = k / rows_per_cell<Dims>, slot = k % rows_per_cell<Dims>;
  const std::uint32_t rows = spanned_rows(c_first, c_last, n.nx);
  if (std::uint32_t(q) >= rows) return s;
  const cell_coordinates first = coordinates_of(c_first, n), last = coordinates_of(c_last, n);
  const std::uint32_t row = c_first / std::uint32_t(n.nx) + std::uint32_t(q);
  const int xa = q == 0 ? first.x : 0;
  const int xb = std::uint32_t(q) + 1 == rows ? last.x : n.nx - 1;
  const cell_coordinates here{xa, int(row % std::uint32_t(n.ny)), int(row / std::uint32_t(n.ny))};
  visit_neighbor_rows<Dims, Periodic>(here, n, [&](std::uint32_t neighbor, int at, int image_y, int image_z) {
    if (at != slot) return;
    const std::uint32_t base = neighbor * std::uint32_t(n.nx);
    s = stage_segment{base + std::uint32_t(xa > 0 ? xa - 1 : 0),
                      base + std::uint32_t(xb < n.nx - 1 ? xb + 1 : n.nx - 1), image_y, image_z, false};
  });
  return s;
}

// The stage's capacity in particles, for blocks of `threads` particles over `cells` cells holding
// `particles`: the expected count of a block's segments (rows_per_cell rows of the block's
// threads / mean cells, plus two cells at the ends and two more where a block spans two rows, each
// holding the mean), a quarter more for the fluctuations of the counts and a warp, capped at
// `most` (what fits the shared memory a block may take). A block whose segments hold more reads
// its neighbours from the columns instead, so the estimate decides speed, never results.
template <int Dims>
COALESCE_HOST_DEVICE inline std::uint32_t stage_capacity(std::size_t particles, std::size_t cells, unsigned threads,
                                                         std::uint32_t most) {
  const double mean = cells == 0 ? 0.0 : double(particles) / double(cells);
  const double expected = double(rows_per_cell<Dims>) * (double(threads) + 4.0 * mean);
  const double wanted = 1.25 * expected + 32.0;
  return wanted >= double(most) ? most : std::uint32_t(wanted);
}

}  // namespace coalesce::detail
