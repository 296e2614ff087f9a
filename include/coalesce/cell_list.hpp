// coalesce: cell_list, particles sorted by the cell of a uniform grid that holds them, with the
// offset of each cell's first particle: the particles near a point are then a few contiguous
// ranges. What for_each_neighbor (<coalesce/for_each_neighbor.hpp>) walks to find every pair of
// particles closer than a cutoff, the linked-cell list of SPH, molecular dynamics and DEM codes.
//
//   const coalesce::uniform_grid<3> grid{0.f, 0.f, 0.f, h, h, h, nx, ny, nz};   // cells >= the cutoff
//   const auto position = [] __device__(auto p) -> cuda::std::array<float, 3> { return {p.x, p.y, p.z}; };
//   auto cells = coalesce::make_cell_list(particles, grid, position);          // sorts, then bins
//
// Needs a CUDA compiler (it sorts and bins on the device).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/cell_list.hpp sorts and bins on the device: include it from a .cu file, compiled by nvcc (<coalesce/uniform_grid.hpp> has uniform_grid for host code)"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/particles.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/reorder.hpp>
#  include <coalesce/soa.hpp>
#  include <coalesce/uniform_grid.hpp>

#  include <cuda/std/array>
#  include <cuda/std/span>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>
#  include <type_traits>
#  include <utility>

namespace coalesce {
namespace detail {

// position(p) seen from the host: cuda::std::array<Real, Dims>, the coordinates of the grid's
// kind, so that the key, the distances and the user's f agree on one position.
template <int Dims, class Real, class T, class Position>
constexpr bool position_ok() {
  constexpr bool visible = COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(Position);
  static_assert(visible,
                "coalesce::make_cell_list: the host cannot see what a __device__ lambda returns, and checks the "
                "position type: give the lambda a trailing return type ([] __device__(auto p) -> "
                "cuda::std::array<float, 3> {...}), make it __host__ __device__, or pass a function object");
  if constexpr (visible) {
    using result = std::decay_t<decltype(std::declval<Position&>()(std::declval<soa_reference_t<const T>>()))>;
    constexpr bool ok = std::is_same_v<result, cuda::std::array<Real, Dims>>;
    static_assert(ok, "coalesce::make_cell_list: position(p) must return cuda::std::array<Real, Dims> for a "
                      "uniform_grid<Dims, Real> (float or double, as the grid): {p.x, p.y, p.z} for a uniform_grid<3>");
    return ok;
  }
  return false;
}

// The cell index of a particle: the key particles are sorted and binned by.
template <int Dims, class Real, class Position>
struct cell_key {
  uniform_grid<Dims, Real> grid;
  Position position;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  template <class P>
  COALESCE_HOST_DEVICE std::uint32_t operator()(const P& p) const {
    const cuda::std::array<Real, Dims> r = position(p);
    if constexpr (Dims == 2) {
      return grid.index_of(r[0], r[1]);
    } else {
      return grid.index_of(r[0], r[1], r[2]);
    }
  }
};

// Cells along every axis >= 1, of a positive finite size, and a count that bin takes (2^31 - 2 at
// most); in 64 bits, since uniform_grid::cells() wraps past 2^32.
template <int Dims, class Real>
void check_cell_grid(const uniform_grid<Dims, Real>& grid, const char* what) {
  int counts[3] = {grid.nx, grid.ny, 1};
  Real sizes[3] = {grid.dx, grid.dy, Real(1)};
  if constexpr (Dims == 3) {
    counts[2] = grid.nz;
    sizes[2] = grid.dz;
  }
  std::uint64_t cells = 1;
  for (int k = 0; k < 3; ++k) {
    if (counts[k] < 1)
      throw std::invalid_argument(std::string(what) + ": the grid has " + std::to_string(counts[k]) +
                                  " cells along an axis; it needs at least 1");
    if (!(sizes[k] > Real(0)) || sizes[k] - sizes[k] != Real(0))
      throw std::invalid_argument(std::string(what) + ": a cell size is " + std::to_string(sizes[k]) +
                                  "; cells must be of positive, finite size");
    cells *= std::uint64_t(counts[k]);
  }
  if (cells > std::uint64_t(0x7ffffffe))
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(cells) +
                                " cells; coalesce::bin takes at most 2^31 - 2");
}

// The key bits the sort looks at: enough for every cell index below `cells` (20 bits, 3 radix
// passes instead of 4, for a million cells).
inline int cell_key_bits(std::uint32_t cells) {
  int bits = 1;
  while (bits < 32 && (std::uint64_t(1) << bits) < std::uint64_t(cells)) ++bits;
  return bits;
}

}  // namespace detail

/// The particles of each cell of a uniform grid: the grid, the position function that put each
/// particle in its cell, and the cells() + 1 offsets (std::uint32_t, device memory) of particles
/// sorted by cell index: cell c holds the particles [offsets()[c], offsets()[c + 1]). Made by
/// make_cell_list, for the particles it sorted (size() of them), as they were then: moving
/// particles or reordering them again makes it stale (make it again). Owns the offsets, which are
/// released on stream() like a pitched_matrix's elements (a copy copies them, on the device).
///
/// Position is what make_cell_list was given: position(p), p the read-only proxy of a particle,
/// returns its coordinates as cuda::std::array<Real, Dims>. for_each_neighbor measures distances
/// with it, so the cells and the distances always agree.
template <int Dims, class Real, class Position>
class cell_list {
 public:
  using grid_type = uniform_grid<Dims, Real>;            ///< the grid's type
  using position_type = cuda::std::array<Real, Dims>;    ///< what position(p) returns
  using position_function = Position;                    ///< the position function's type
  static constexpr int dimensions = Dims;                ///< 2 or 3
  using offsets_type = pitched_matrix<std::uint32_t>;    ///< where the offsets live: 1 x (cells() + 1)

  /// A cell list of `particles` particles sorted by `grid`'s cell of position(p), with `offsets` their
  /// cells' offsets (what coalesce::bin returns for them). Throws std::invalid_argument if offsets
  /// is not 1 x (grid.cells() + 1).
  cell_list(const grid_type& grid, const Position& position, offsets_type offsets, std::size_t particles)
      : grid_(grid), position_(position), offsets_(std::move(offsets)), size_(particles) {
    if (offsets_.rows() != 1 || offsets_.cols() != std::size_t(grid_.cells()) + 1)
      throw std::invalid_argument("coalesce::cell_list: the offsets are " + std::to_string(offsets_.rows()) + " x " +
                                  std::to_string(offsets_.cols()) + "; 1 x (cells + 1) = 1 x " +
                                  std::to_string(std::size_t(grid_.cells()) + 1) + " are needed");
  }

  const grid_type& grid() const noexcept { return grid_; }              ///< the grid
  const Position& position() const noexcept { return position_; }       ///< the position function
  std::size_t size() const noexcept { return size_; }                   ///< the particles it was made for
  std::uint32_t cells() const noexcept { return grid_.cells(); }        ///< the grid's cells
  cudaStream_t stream() const noexcept { return offsets_.stream(); }    ///< where the offsets are ordered
  /// The cells() + 1 offsets, in device memory: cell c holds particles [offsets[c], offsets[c + 1]).
  cuda::std::span<const std::uint32_t> offsets() const noexcept {
    return cuda::std::span<const std::uint32_t>(offsets_.data(), std::size_t(grid_.cells()) + 1);
  }
  /// The offsets' matrix, to copy them to the host (offsets_matrix().to_vector()).
  const offsets_type& offsets_matrix() const noexcept { return offsets_; }

 private:
  grid_type grid_;
  Position position_;
  offsets_type offsets_;
  std::size_t size_;
};

/// The cell list of `sorted` (a soa_view of device memory of particles already in the order of
/// grid.index_of(position(p)): sort_by_key with that key), on `stream`: only bins. Writes nothing
/// but a new 1 x (cells + 1) pitched_matrix of offsets from coalesce's pool on `stream`
/// (coalesce::bin: one read of the columns position reads, the offsets written once);
/// asynchronous, nothing waits. `position(p)` takes the read-only proxy of a particle and returns
/// cuda::std::array<Real, Dims>, Real and Dims the grid's (the host must see that type: a
/// __device__ lambda needs `-> cuda::std::array<float, 3>`). A position outside the grid counts in
/// the nearest edge cell (uniform_grid::cell_of clamps). Throws std::invalid_argument for a grid
/// with no cells along an axis, cells that are not of positive finite size, or more than 2^31 - 2
/// cells; std::length_error past 2^32 - 1 particles; coalesce::cuda_error if a launch fails.
template <class T, int Dims, class Real, class Position>
cell_list<Dims, Real, Position> make_cell_list(soa_view<T> sorted, const uniform_grid<Dims, Real>& grid,
                                               Position position, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::make_cell_list");
  using element = std::remove_const_t<T>;
  if constexpr (detail::position_ok<Dims, Real, element, Position>()) {
    detail::check_cell_grid(grid, "coalesce::make_cell_list");
    const std::size_t cells = grid.cells();
    pitched_matrix<std::uint32_t> offsets(1, cells + 1, pool_resource(stream));
    bin(soa_view<const element>(sorted), detail::cell_key<Dims, Real, Position>{grid, position}, cells,
        cuda::std::span<std::uint32_t>(offsets.data(), cells + 1), stream);
    return cell_list<Dims, Real, Position>(grid, position, std::move(offsets), sorted.size());
  }
}

/// Sorts `particles` (a device soa_vector) by the cell of `grid` that holds position(p), stably,
/// and returns their cell list: sort_by_key with the cell index as key (only the bits of cells()
/// - 1: 3 radix passes up to 2^24 cells), then make_cell_list of the sorted view, all on
/// particles.stream() with nothing waiting. Moves every column once in the sort's gather (into
/// new storage from the vector's resource: views and iterators of particles are invalidated),
/// plus the sort's keys and indices, scratch from coalesce's pool. position and the exceptions as
/// for the view form, and sort_by_key's.
template <class T, class Resource, int Dims, class Real, class Position>
cell_list<Dims, Real, Position> make_cell_list(soa_vector<T, device_space, Resource>& particles,
                                               const uniform_grid<Dims, Real>& grid, Position position) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::make_cell_list");
  if constexpr (detail::position_ok<Dims, Real, T, Position>()) {
    detail::check_cell_grid(grid, "coalesce::make_cell_list");
    sort_by_key(particles, detail::cell_key<Dims, Real, Position>{grid, position}, detail::cell_key_bits(grid.cells()));
    return make_cell_list(particles.const_view(), grid, position, particles.stream());
  }
}

}  // namespace coalesce

#endif  // __CUDACC__
