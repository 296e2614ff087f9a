// The host-side arithmetic of coalesce::for_each_neighbor (detail/cell_neighbors.hpp): which
// cells a particle's neighbour search reads, as contiguous stretches of rows, with the periodic
// image of each; and which ranges a block of particles stages in shared memory. The expected
// cells come from a brute-force model written from the definition (every cell whose coordinates
// differ by at most one along each axis, wrapped where periodic), not from the stretches. The
// search itself runs on the GPU, against a host O(n^2) reference, in
// tests/device/for_each_neighbor.cu.
#include <coalesce/detail/cell_neighbors.hpp>
#include <coalesce/uniform_grid.hpp>

#include "coalesce_test.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace d = coalesce::detail;

namespace {

// A neighbour cell as the search sees it: its linear index and the image it is seen through.
using seen_cell = std::tuple<std::uint32_t, int, int, int>;  // cell, image x, y, z

std::uint32_t linear(int x, int y, int z, d::grid_extents n) {
  return (std::uint32_t(z) * std::uint32_t(n.ny) + std::uint32_t(y)) * std::uint32_t(n.nx) + std::uint32_t(x);
}

// The model: every (dx, dy, dz) in {-1, 0, 1}^Dims (dz = 0 in 2D), the cell there if it is inside
// the grid, or, periodic, the cell it wraps to and the image (which side it wrapped from).
template <int Dims>
std::vector<seen_cell> model_neighbors(d::cell_coordinates c, d::grid_extents n, bool periodic) {
  std::vector<seen_cell> out;
  const int reach_z = Dims == 3 ? 1 : 0;
  for (int dz = -reach_z; dz <= reach_z; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int v[3] = {c.x + dx, c.y + dy, c.z + dz}, image[3] = {0, 0, 0};
        const int size[3] = {n.nx, n.ny, n.nz};
        bool inside = true;
        for (int k = 0; k < 3; ++k) {
          if (v[k] >= 0 && v[k] < size[k]) continue;
          if (!periodic) inside = false;
          image[k] = v[k] < 0 ? -1 : 1;
          v[k] -= image[k] * size[k];
        }
        if (inside) out.emplace_back(linear(v[0], v[1], v[2], n), image[0], image[1], image[2]);
      }
  std::sort(out.begin(), out.end());
  return out;
}

// What the search visits: each row from visit_neighbor_rows, each stretch of it from
// visit_neighbor_columns, every cell of every stretch. Also checks the slots come in increasing
// order and name the row's (dz, dy).
template <int Dims, bool Periodic>
std::vector<seen_cell> searched_neighbors(d::cell_coordinates c, d::grid_extents n) {
  std::vector<seen_cell> out;
  int last_slot = -1;
  d::visit_neighbor_rows<Dims, Periodic>(c, n, [&](std::uint32_t row, int slot, int image_y, int image_z) {
    CHECK(slot > last_slot);
    CHECK(slot < d::rows_per_cell<Dims>);
    last_slot = slot;
    const int y = int(row % std::uint32_t(n.ny)), z = int(row / std::uint32_t(n.ny));
    // The slot is (dz + 1) * 3 + (dy + 1) of the unwrapped neighbour row.
    const int dy = y + image_y * n.ny - c.y, dz = z + image_z * n.nz - c.z;
    CHECK(slot == (Dims == 3 ? (dz + 1) * 3 : 0) + dy + 1);
    d::visit_neighbor_columns<Periodic>(c.x, n.nx, [&](int first, int last, int image_x) {
      REQUIRE(first >= 0);
      REQUIRE(last < n.nx);
      REQUIRE(first <= last);
      for (int x = first; x <= last; ++x) out.emplace_back(linear(x, y, z, n), image_x, image_y, image_z);
    });
  });
  std::sort(out.begin(), out.end());
  return out;
}

template <int Dims, bool Periodic>
void check_every_cell(d::grid_extents n) {
  INFO("grid " << n.nx << " x " << n.ny << " x " << n.nz << (Periodic ? ", periodic" : ", open"));
  for (int z = 0; z < n.nz; ++z)
    for (int y = 0; y < n.ny; ++y)
      for (int x = 0; x < n.nx; ++x) {
        INFO("cell " << x << ", " << y << ", " << z);
        const auto got = searched_neighbors<Dims, Periodic>({x, y, z}, n);
        const auto want = model_neighbors<Dims>({x, y, z}, n, Periodic);
        CHECK(got == want);  // each neighbour cell once (sorted lists, so a repeat would differ)
        if (Periodic) CHECK(got.size() == std::size_t(Dims == 3 ? 27 : 9));
      }
}

}  // namespace

TEST_CASE("the neighbour search of an open grid visits each adjacent cell inside the grid exactly once") {
  check_every_cell<3, false>({4, 3, 5});
  check_every_cell<3, false>({1, 1, 1});
  check_every_cell<3, false>({2, 1, 7});
  check_every_cell<3, false>({33, 2, 2});
  check_every_cell<2, false>({5, 7, 1});
  check_every_cell<2, false>({1, 1, 1});
  check_every_cell<2, false>({2, 9, 1});
}

TEST_CASE("the neighbour search of a periodic grid visits 27 (9) distinct cells, those across an edge wrapped") {
  check_every_cell<3, true>({3, 3, 3});
  check_every_cell<3, true>({4, 5, 3});
  check_every_cell<3, true>({7, 3, 4});
  check_every_cell<2, true>({3, 3, 1});
  check_every_cell<2, true>({6, 4, 1});
}

TEST_CASE(
    "a neighbour row is at most two stretches of consecutive cells: the cells beside x, and one across the edge") {
  // Open: one stretch, clamped to the row.
  std::vector<std::tuple<int, int, int>> got;
  const auto record = [&](int first, int last, int image) { got.emplace_back(first, last, image); };
  d::visit_neighbor_columns<false>(0, 10, record);
  d::visit_neighbor_columns<false>(4, 10, record);
  d::visit_neighbor_columns<false>(9, 10, record);
  d::visit_neighbor_columns<false>(0, 1, record);
  CHECK(got == std::vector<std::tuple<int, int, int>>{{0, 1, 0}, {3, 5, 0}, {8, 9, 0}, {0, 0, 0}});
  // Periodic: the edge cells get the cell across the edge, seen one box length away.
  got.clear();
  d::visit_neighbor_columns<true>(0, 10, record);
  d::visit_neighbor_columns<true>(4, 10, record);
  d::visit_neighbor_columns<true>(9, 10, record);
  CHECK(got == std::vector<std::tuple<int, int, int>>{{0, 1, 0}, {9, 9, -1}, {3, 5, 0}, {8, 9, 0}, {0, 0, 1}});
}

TEST_CASE("wrap_cell keeps a coordinate inside, refuses one outside an open axis, and wraps it on a periodic one") {
  int v = 2, image = 7;
  CHECK(d::wrap_cell<false>(v, 5, image));
  CHECK(v == 2);
  CHECK(image == 0);
  v = -1;
  CHECK_FALSE(d::wrap_cell<false>(v, 5, image));
  v = 5;
  CHECK_FALSE(d::wrap_cell<false>(v, 5, image));
  v = -1;
  CHECK(d::wrap_cell<true>(v, 5, image));
  CHECK(v == 4);
  CHECK(image == -1);
  v = 5;
  CHECK(d::wrap_cell<true>(v, 5, image));
  CHECK(v == 0);
  CHECK(image == 1);
}

TEST_CASE("coordinates_of inverts uniform_grid's cell index, in 3D and in 2D") {
  const coalesce::uniform_grid<3> g3{0.f, 0.f, 0.f, 1.f, 1.f, 1.f, 7, 5, 3};
  const d::grid_extents n3{7, 5, 3};
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 7; ++x) {
        const auto c = d::coordinates_of(g3.index({z, y, x}), n3);
        CHECK(c.x == x);
        CHECK(c.y == y);
        CHECK(c.z == z);
      }
  const coalesce::uniform_grid<2> g2{0.f, 0.f, 1.f, 1.f, 6, 4};
  const d::grid_extents n2{6, 4, 1};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x) {
      const auto c = d::coordinates_of(g2.index({y, x}), n2);
      CHECK(c.x == x);
      CHECK(c.y == y);
      CHECK(c.z == 0);
    }
}

TEST_CASE("spanned_rows counts the rows a run of cells touches") {
  CHECK(d::spanned_rows(0, 0, 10) == 1);
  CHECK(d::spanned_rows(3, 9, 10) == 1);
  CHECK(d::spanned_rows(9, 10, 10) == 2);
  CHECK(d::spanned_rows(0, 19, 10) == 2);
  CHECK(d::spanned_rows(5, 35, 10) == 4);
}

namespace {

// For a block whose cells are [c_first, c_last] (spanning at most two rows): every image-0
// stretch that the search of any of its cells visits lies inside the stage segment of its slot
// (spanned row q * rows_per_cell + slot), seen through the same image; segments of rows that do
// not exist are empty; and each segment reaches no further than one cell beyond the block's cells
// in its row.
template <int Dims, bool Periodic>
void check_stage(std::uint32_t c_first, std::uint32_t c_last, d::grid_extents n) {
  INFO("cells " << c_first << " to " << c_last << " of " << n.nx << " x " << n.ny << " x " << n.nz
                << (Periodic ? ", periodic" : ", open"));
  REQUIRE(d::spanned_rows(c_first, c_last, n.nx) <= std::uint32_t(d::most_staged_rows));
  std::vector<d::stage_segment> segments;
  for (int k = 0; k < d::most_stage_segments<Dims>; ++k)
    segments.push_back(d::stage_segment_at<Dims, Periodic>(k, c_first, c_last, n));
  std::vector<bool> used(segments.size(), false);
  for (std::uint32_t cell = c_first; cell <= c_last; ++cell) {
    const d::cell_coordinates c = d::coordinates_of(cell, n);
    const int q = int(cell / std::uint32_t(n.nx) - c_first / std::uint32_t(n.nx));
    d::visit_neighbor_rows<Dims, Periodic>(c, n, [&](std::uint32_t row, int slot, int image_y, int image_z) {
      const int k = q * d::rows_per_cell<Dims> + slot;
      const d::stage_segment& s = segments[std::size_t(k)];
      REQUIRE_FALSE(s.empty);
      used[std::size_t(k)] = true;
      CHECK(s.image_y == image_y);
      CHECK(s.image_z == image_z);
      d::visit_neighbor_columns<Periodic>(c.x, n.nx, [&](int first, int last, int image_x) {
        if (image_x != 0) return;  // read from the columns, not staged
        CHECK(s.first_cell <= row * std::uint32_t(n.nx) + std::uint32_t(first));
        CHECK(row * std::uint32_t(n.nx) + std::uint32_t(last) <= s.last_cell);
      });
    });
  }
  for (std::size_t k = 0; k < segments.size(); ++k) {
    INFO("segment " << k);
    if (!used[k]) {
      CHECK(segments[k].empty);  // staged only where a particle reads it
      continue;
    }
    // Tight: the segment's ends are neighbours of the block's cells in that row.
    const std::uint32_t row = segments[k].first_cell / std::uint32_t(n.nx);
    CHECK(segments[k].last_cell / std::uint32_t(n.nx) == row);
    CHECK(segments[k].first_cell <= segments[k].last_cell);
  }
}

}  // namespace

TEST_CASE("a block's stage segments hold every image-0 neighbour stretch of its cells, one or two rows") {
  std::mt19937 gen(std::random_device{}());
  const d::grid_extents grids3[] = {{9, 4, 5}, {3, 3, 3}, {1, 6, 4}, {40, 3, 3}};
  for (const auto n : grids3) {
    const std::uint32_t cells = std::uint32_t(n.nx * n.ny * n.nz);
    for (int trial = 0; trial < 200; ++trial) {
      const std::uint32_t first = std::uniform_int_distribution<std::uint32_t>(0, cells - 1)(gen);
      // Up to the end of the next row: at most two spanned rows.
      const std::uint32_t row_end = (first / std::uint32_t(n.nx) + 2) * std::uint32_t(n.nx) - 1;
      const std::uint32_t last = std::uniform_int_distribution<std::uint32_t>(first, std::min(row_end, cells - 1))(gen);
      check_stage<3, false>(first, last, n);
      if (n.nx >= 3 && n.ny >= 3 && n.nz >= 3) check_stage<3, true>(first, last, n);
    }
  }
  const d::grid_extents grid2{11, 6, 1};
  for (std::uint32_t first = 0; first < 66; first += 5)
    for (std::uint32_t last = first; last < std::min<std::uint32_t>(66, (first / 11 + 2) * 11); last += 3) {
      check_stage<2, false>(first, last, grid2);
      check_stage<2, true>(first, last, grid2);
    }
}

TEST_CASE("a block spanning one row stages the rows beside it over its cells and one more at each end") {
  // Cells 3..6 of row (y = 2, z = 1) of a 10 x 4 x 3 grid: nine segments, x from 2 to 7.
  const d::grid_extents n{10, 4, 3};
  const std::uint32_t first = linear(3, 2, 1, n), last = linear(6, 2, 1, n);
  int staged = 0;
  for (int k = 0; k < d::most_stage_segments<3>; ++k) {
    const auto s = d::stage_segment_at<3, false>(k, first, last, n);
    if (k >= d::rows_per_cell<3>) {
      CHECK(s.empty);  // no second spanned row
      continue;
    }
    REQUIRE_FALSE(s.empty);
    ++staged;
    const int dz = k / 3 - 1, dy = k % 3 - 1;
    CHECK(s.first_cell == linear(2, 2 + dy, 1 + dz, n));
    CHECK(s.last_cell == linear(7, 2 + dy, 1 + dz, n));
  }
  CHECK(staged == 9);
  // On the open grid's lower edge (y = 0, z = 0) only the rows that exist: four.
  int edge = 0;
  for (int k = 0; k < d::most_stage_segments<3>; ++k)
    if (!d::stage_segment_at<3, false>(k, linear(0, 0, 0, n), linear(4, 0, 0, n), n).empty) ++edge;
  CHECK(edge == 4);
}

TEST_CASE("the stage's capacity covers the expected particles of a block's segments, up to what fits") {
  // 4 Mi particles in 84^3 cells (7.08 each), blocks of 128: 9 rows x (128 + 4 x 7.08) particles expected.
  const std::size_t n = std::size_t(1) << 22, cells = std::size_t(84) * 84 * 84;
  const std::uint32_t capacity = d::stage_capacity<3>(n, cells, 128, 4000);
  const double expected = 9.0 * (128.0 + 4.0 * double(n) / double(cells));
  CHECK(double(capacity) >= 1.25 * expected);
  CHECK(double(capacity) <= 1.25 * expected + 33.0);
  // Crowded cells: capped at what fits.
  CHECK(d::stage_capacity<3>(n, 1000, 128, 4000) == 4000u);
  // Fewer rows in 2D, and empty grids stage nothing but the warp of slack plus the block.
  CHECK(d::stage_capacity<2>(n, cells, 128, 4000) < capacity);
  CHECK(d::stage_capacity<3>(0, cells, 128, 4000) == std::uint32_t(1.25 * 9 * 128 + 32));
}
