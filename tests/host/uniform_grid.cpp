// coalesce::wrap and coalesce::uniform_grid (<coalesce/uniform_grid.hpp>), on the host: the same
// arithmetic runs in device code. Expected values come from exact integer reasoning about the
// inputs (positions chosen as sums of exact binary fractions), or from long double references.
#include <coalesce/uniform_grid.hpp>

#include "coalesce_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace {

// x - k * length in long double, with k chosen so that the result is in [0, length): the
// reference wrap is compared with, to within one rounding of the result.
long double reference_wrap(long double x, long double length) {
  long double r = std::fmod(x, length);
  if (r < 0) r += length;
  return r;
}

}  // namespace

TEST_CASE("wrap leaves a coordinate inside the period alone and maps the period's end to 0") {
  CHECK(coalesce::wrap(0.25f, 1.0f) == 0.25f);
  CHECK(coalesce::wrap(0.0, 3.0) == 0.0);
  CHECK(coalesce::wrap(1.0f, 1.0f) == 0.0f);
  CHECK(coalesce::wrap(3.0, 3.0) == 0.0);
  CHECK(coalesce::wrap(std::nextafter(1.0f, 0.0f), 1.0f) == std::nextafter(1.0f, 0.0f));
}

TEST_CASE("wrap brings back coordinates several lengths away, on both sides, exactly where they are exact") {
  // Sums of binary fractions: every step below is exact in float and double.
  CHECK(coalesce::wrap(5.25f, 2.0f) == 1.25f);
  CHECK(coalesce::wrap(-0.25f, 2.0f) == 1.75f);
  CHECK(coalesce::wrap(-6.5f, 2.0f) == 1.5f);
  CHECK(coalesce::wrap(-8.0, 2.0) == 0.0);
  CHECK(coalesce::wrap(1000.125, 10.0) == 0.125);
  CHECK(coalesce::wrap(-1000.125, 10.0) == 9.875);
}

TEST_CASE("wrap of a tiny negative coordinate is 0, not the length, where x + length rounds to the length") {
  const float f = coalesce::wrap(-1e-8f, 1.0f);
  CHECK(f < 1.0f);
  CHECK(f >= 0.0f);
  CHECK(f == 0.0f);
  const double d = coalesce::wrap(-1e-20, 1.0);
  CHECK(d < 1.0);
  CHECK(d == 0.0);
  // Just big enough not to round away: kept.
  const float g = coalesce::wrap(-0.25f, 1.0f);
  CHECK(g == 0.75f);
}

TEST_CASE("wrap of random coordinates is in [0, length) and within a rounding of the exact image") {
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<double> position(-1e4, 1e4);
  std::uniform_real_distribution<double> period(1e-3, 1e2);
  for (int i = 0; i < 100000; ++i) {
    const float x = float(position(gen));
    const float length = float(period(gen));
    const float w = coalesce::wrap(x, length);
    if (!(w >= 0.0f && w < length)) FAIL("wrap(" << x << ", " << length << ") = " << w << ", outside [0, length)");
    const long double want = reference_wrap(x, length);
    // Periodic distance to the exact image: at most one rounding of a value below length.
    long double gap = std::fabs(want - w);
    if (gap > length / 2) gap = length - gap;
    if (gap > std::numeric_limits<float>::epsilon() * length)
      FAIL("wrap(" << x << ", " << length << ") = " << w << ", exact image " << double(want));
    const double xd = position(gen), ld = period(gen);
    const double wd = coalesce::wrap(xd, ld);
    if (!(wd >= 0.0 && wd < ld)) FAIL("wrap(" << xd << ", " << ld << ") = " << wd << ", outside [0, length)");
  }
}

TEST_CASE("wrap of NaN or infinity is NaN") {
  CHECK(std::isnan(coalesce::wrap(std::numeric_limits<float>::quiet_NaN(), 1.0f)));
  CHECK(std::isnan(coalesce::wrap(std::numeric_limits<double>::infinity(), 1.0)));
}

TEST_CASE("a 2D grid's cell_of gives row along y and column along x, including each cell's lower edge") {
  const coalesce::uniform_grid<2> grid{-1.0f, 2.0f, 0.5f, 0.25f, 8, 4};  // x in [-1, 3), y in [2, 3)
  CHECK(grid.cells() == 32u);
  auto c = grid.cell_of(-1.0f, 2.0f);
  CHECK(c.row == 0);
  CHECK(c.col == 0);
  c = grid.cell_of(0.75f, 2.5f);  // x: 1.75 / 0.5 = 3.5; y: 0.5 / 0.25 = 2 (a lower edge)
  CHECK(c.row == 2);
  CHECK(c.col == 3);
  CHECK(grid.index(c) == 2u * 8u + 3u);
  CHECK(grid.index_of(0.75f, 2.5f) == 19u);
  c = grid.cell_of(std::nextafter(3.0f, 0.0f), std::nextafter(3.0f, 0.0f));
  CHECK(c.row == 3);
  CHECK(c.col == 7);
  CHECK(grid.index(c) == grid.cells() - 1);
}

TEST_CASE("cell_of clamps positions outside the grid to the nearest edge cell, huge and NaN ones included") {
  const coalesce::uniform_grid<2, double> grid{0.0, 0.0, 1.0, 1.0, 10, 5};
  auto c = grid.cell_of(-0.5, -1e300);
  CHECK(c.row == 0);
  CHECK(c.col == 0);
  c = grid.cell_of(10.0, 5.0);  // the upper edges themselves: outside, so the last cell
  CHECK(c.row == 4);
  CHECK(c.col == 9);
  c = grid.cell_of(1e300, 2.5);
  CHECK(c.row == 2);
  CHECK(c.col == 9);
  c = grid.cell_of(-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity());
  CHECK(c.row == 4);
  CHECK(c.col == 0);
#if !COALESCE_DEBUG
  c = grid.cell_of(std::numeric_limits<double>::quiet_NaN(), 3.5);
  CHECK(c.row == 3);
  CHECK(c.col == 0);
#endif
}

TEST_CASE("a 2D grid's cell_of agrees with floor((x - x0) / dx) for random positions inside it") {
  std::mt19937 gen(std::random_device{}());
  const coalesce::uniform_grid<2> grid{0.0f, 0.0f, 1.0f / 2048, 1.0f / 1024, 2048, 1024};
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = unit(gen), y = unit(gen);
    const auto c = grid.cell_of(x, y);
    // dx and dy are powers of two, so (x - 0) / dx is exact and floor of it is the reference.
    const int col = std::min(int(std::floor(double(x) * 2048)), 2047);
    const int row = std::min(int(std::floor(double(y) * 1024)), 1023);
    if (c.col != col || c.row != row)
      FAIL("cell_of(" << x << ", " << y << ") = (" << c.row << ", " << c.col << "), expected (" << row << ", " << col
                      << ")");
    if (grid.index_of(x, y) != std::uint32_t(row) * 2048u + std::uint32_t(col))
      FAIL("index_of(" << x << ", " << y << ")");
  }
}

TEST_CASE("a 3D grid's cell is (z, y, x) and its index that of a pitched_volume element") {
  const coalesce::uniform_grid<3> grid{0.0f, 0.0f, -4.0f, 1.0f, 2.0f, 0.5f, 4, 3, 16};
  CHECK(grid.cells() == 4u * 3u * 16u);
  const auto c = grid.cell_of(3.5f, 4.0f, -0.25f);  // x 3.5 -> 3; y 4 / 2 -> 2; z 3.75 / 0.5 -> 7
  CHECK(c.z == 7);
  CHECK(c.y == 2);
  CHECK(c.x == 3);
  CHECK(grid.index(c) == (7u * 3u + 2u) * 4u + 3u);
  CHECK(grid.index_of(3.5f, 4.0f, -0.25f) == grid.index(c));
  const auto outside = grid.cell_of(-5.0f, 100.0f, 100.0f);
  CHECK(outside.z == 15);
  CHECK(outside.y == 2);
  CHECK(outside.x == 0);
  CHECK(grid.index(outside) == (15u * 3u + 2u) * 4u + 0u);
}

TEST_CASE("wrap and cell_of compose into a periodic grid's cell") {
  const coalesce::uniform_grid<2> grid{0.0f, 0.0f, 0.25f, 0.25f, 4, 4};  // a unit torus
  const auto c = grid.cell_of(coalesce::wrap(-0.1f, 1.0f), coalesce::wrap(2.3f, 1.0f));
  CHECK(c.col == 3);
  CHECK(c.row == 1);
  const auto edge = grid.cell_of(coalesce::wrap(-1e-8f, 1.0f), coalesce::wrap(1.0f, 1.0f));
  CHECK(edge.col == 0);
  CHECK(edge.row == 0);
}
