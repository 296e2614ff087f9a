// coalesce: where a particle sits on a uniform grid. wrap puts a periodic coordinate back into
// [0, length); uniform_grid<2> and uniform_grid<3> give the cell of a position and its linear
// index (the key to sort and bin particles by, <coalesce/particles.hpp>). Plain arithmetic for
// host and device, so it is tested with no GPU.
#pragma once
/// @file

#include <coalesce/config.hpp>

#include <cuda/std/cmath>
#include <cuda/std/type_traits>

#include <cstdint>

namespace coalesce {
namespace detail {

template <class Real>
COALESCE_HOST_DEVICE constexpr bool grid_real_ok() {
  constexpr bool ok = cuda::std::is_same_v<Real, float> || cuda::std::is_same_v<Real, double>;
  static_assert(ok, "coalesce::wrap / coalesce::uniform_grid: positions must be float or double");
  return ok;
}

// The cell along one axis of n cells of width h from x0: floor((x - x0) / h), clamped to [0, n - 1].
// Clamped as a floating-point value, before the conversion to int, which is undefined for values
// outside int's range; NaN fails both comparisons and gives 0.
template <class Real>
COALESCE_HOST_DEVICE int cell_along(Real x, Real x0, Real h, int n) {
  COALESCE_ASSERT(x == x, "coalesce::uniform_grid::cell_of: a coordinate is NaN");
  const Real t = cuda::std::floor((x - x0) / h);
  if (!(t >= Real(0))) return 0;
  if (t >= Real(n - 1)) return n - 1;
  return static_cast<int>(t);
}

}  // namespace detail

/// The periodic image of `x` in [0, length): x - k * length for the integer k that puts it there,
/// for any finite x (negative, or many lengths away). The remainder is computed exactly
/// (cuda::std::fmod), and then length added once for a negative x; where that sum rounds up to
/// length itself (x a tiny negative number: wrap(-1e-8f, 1.0f)), the result is 0, the same point
/// of the period, so the result is always < length. wrap(length, length) is 0, and -0 stays -0
/// (== 0). Float or double; `length` must be > 0 and finite (checked under COALESCE_DEBUG); a NaN
/// or infinite x gives NaN.
template <class Real>
COALESCE_HOST_DEVICE Real wrap(Real x, cuda::std::type_identity_t<Real> length) {
  if constexpr (detail::grid_real_ok<Real>()) {
    COALESCE_ASSERT(length > Real(0) && length == length && length - length == Real(0),
                    "coalesce::wrap: the length must be positive and finite");
    const Real r = cuda::std::fmod(x, length);  // exact: |r| < length, with x's sign
    if (!(r < Real(0))) return r;
    const Real up = r + length;  // rounded: may reach length when r is tiny
    return up < length ? up : Real(0);
  } else {
    return x;
  }
}

/// A uniform grid of Dims (2 or 3) dimensions: cells of equal size, starting at an origin. See
/// uniform_grid<2> and uniform_grid<3>.
template <int Dims, class Real = float>
struct uniform_grid;

/// A 2D grid of nx x ny cells of dx x dy, whose cell (0, 0) has its lower corner at (x0, y0); an
/// aggregate: `coalesce::uniform_grid<2> grid{0.f, 0.f, h, h, 2048, 2048}`. Rows go along y and
/// columns along x, as in a pitched_matrix of ny rows and nx columns: cell (row, col) holds the
/// positions with x0 + col * dx <= x < x0 + (col + 1) * dx and likewise y. Float or double.
template <class Real>
struct uniform_grid<2, Real> {
  static_assert(detail::grid_real_ok<Real>(), "");
  Real x0;  ///< x of the grid's lower corner
  Real y0;  ///< y of the grid's lower corner
  Real dx;  ///< a cell's width (along x), > 0
  Real dy;  ///< a cell's height (along y), > 0
  int nx;   ///< cells along x (columns), >= 1
  int ny;   ///< cells along y (rows), >= 1

  /// A cell's coordinates: row (along y) and column (along x).
  struct cell {
    int row;  ///< along y, in [0, ny)
    int col;  ///< along x, in [0, nx)
  };

  /// The cell holding (x, y). A position outside the grid gets the nearest cell of its edge (each
  /// coordinate clamped to [0, n - 1]), so the result always indexes the grid; so does a position
  /// on the upper edge that rounding puts one cell beyond. A NaN coordinate traps under
  /// COALESCE_DEBUG and gives 0 on that axis otherwise. Wrap periodic coordinates first (wrap).
  COALESCE_HOST_DEVICE cell cell_of(Real x, Real y) const {
    return {detail::cell_along(y, y0, dy, ny), detail::cell_along(x, x0, dx, nx)};
  }
  /// The linear index of cell c, row-major: c.row * nx + c.col, in [0, cells()).
  COALESCE_HOST_DEVICE constexpr std::uint32_t index(cell c) const {
    return std::uint32_t(c.row) * std::uint32_t(nx) + std::uint32_t(c.col);
  }
  /// index(cell_of(x, y)): the key to sort particles by, so that each cell's sit together.
  COALESCE_HOST_DEVICE std::uint32_t index_of(Real x, Real y) const { return index(cell_of(x, y)); }
  /// nx * ny, the number of cells (the bins of coalesce::bin). Must fit 32 bits.
  COALESCE_HOST_DEVICE constexpr std::uint32_t cells() const { return std::uint32_t(nx) * std::uint32_t(ny); }
};

/// A 3D grid of nx x ny x nz cells of dx x dy x dz from (x0, y0, z0), an aggregate as
/// uniform_grid<2>: cell (z, y, x) as element (z, y, x) of a pitched_volume of width nx, height ny
/// and depth nz. Float or double.
template <class Real>
struct uniform_grid<3, Real> {
  static_assert(detail::grid_real_ok<Real>(), "");
  Real x0;  ///< x of the grid's lower corner
  Real y0;  ///< y of the grid's lower corner
  Real z0;  ///< z of the grid's lower corner
  Real dx;  ///< a cell's size along x, > 0
  Real dy;  ///< a cell's size along y, > 0
  Real dz;  ///< a cell's size along z, > 0
  int nx;   ///< cells along x (the width), >= 1
  int ny;   ///< cells along y (the height), >= 1
  int nz;   ///< cells along z (the depth), >= 1

  /// A cell's coordinates, in a pitched_volume's order.
  struct cell {
    int z;  ///< along z, in [0, nz)
    int y;  ///< along y, in [0, ny)
    int x;  ///< along x, in [0, nx)
  };

  /// The cell holding (x, y, z), each coordinate clamped to the grid as in uniform_grid<2>.
  COALESCE_HOST_DEVICE cell cell_of(Real x, Real y, Real z) const {
    return {detail::cell_along(z, z0, dz, nz), detail::cell_along(y, y0, dy, ny), detail::cell_along(x, x0, dx, nx)};
  }
  /// The linear index of cell c: (c.z * ny + c.y) * nx + c.x, in [0, cells()).
  COALESCE_HOST_DEVICE constexpr std::uint32_t index(cell c) const {
    return (std::uint32_t(c.z) * std::uint32_t(ny) + std::uint32_t(c.y)) * std::uint32_t(nx) + std::uint32_t(c.x);
  }
  /// index(cell_of(x, y, z)).
  COALESCE_HOST_DEVICE std::uint32_t index_of(Real x, Real y, Real z) const { return index(cell_of(x, y, z)); }
  /// nx * ny * nz, the number of cells. Must fit 32 bits.
  COALESCE_HOST_DEVICE constexpr std::uint32_t cells() const {
    return std::uint32_t(nx) * std::uint32_t(ny) * std::uint32_t(nz);
  }
};

}  // namespace coalesce
