// coalesce: for_each_neighbor, short-range interactions through a cell list. For each particle
// i, f(p_i, p_j, a) for every other particle j closer than a cutoff, summed into a value of i's
// own: the naive double loop, with the cell list (<coalesce/cell_list.hpp>) finding the j's.
//
//   struct force { float fx, fy, fz; };  COALESCE_FIELDS(force, fx, fy, fz);
//   auto cells = coalesce::make_cell_list(particles, grid, position);   // sorts the particles
//   coalesce::for_each_neighbor(particles, cells, rc, forces, [=] __device__(const auto& pi, const auto& pj, auto& a) {
//     const float dx = pi.x - pj.x, dy = pi.y - pj.y, dz = pi.z - pj.z;
//     const float s = lennard_jones(dx * dx + dy * dy + dz * dz);
//     a.fx += s * dx; a.fy += s * dy; a.fz += s * dz;
//   });
//
// One thread per particle in the cell list's sorted order; a particle's 27 neighbour cells (9 in
// 2D) are read as 9 contiguous ranges (3 in 2D), one per neighbour row, since a row's cells are
// consecutive in that order. Each candidate's position is read from the columns through L1
// (consecutive particles test mostly the same candidates) and its distance tested; f reads p_j's
// other fields for the candidates within the cutoff only (about 16% of those tested). A kernel
// that stages a block's candidates in shared memory is kept beside it and measured slower:
// detail/neighbor_kernels.hpp says what each of the two kernels moves.
//
// Each sum a is private to its thread, added in the order of the sorted particles: the results
// are the same from run to run. Needs a CUDA compiler (it launches a kernel).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/for_each_neighbor.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/boundary.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/cell_neighbors.hpp>
#  include <coalesce/detail/device_memory.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/neighbor_kernels.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda/std/type_traits>
#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {

// Declared here and defined in <coalesce/cell_list.hpp>, included at the end: that header
// includes <coalesce/particles.hpp> (for bin), which may include this one, and whichever comes
// first, each then finds what it needs (the calls here only use a cell_list once instantiated).

template <int Dims, class Real, class Position>
class cell_list;

namespace detail {

template <class Real>
std::string number_text(Real v) {
  return std::to_string(double(v));
}

// The checks of every call, before anything is launched.
template <bool Periodic, int Dims, class Real, class Position>
void check_neighbor_call(std::size_t particles, const cell_list<Dims, Real, Position>& cells, Real cutoff,
                         std::size_t out, const char* what) {
  const auto& g = cells.grid();
  Real smallest = g.dx < g.dy ? g.dx : g.dy;
  std::string sizes = "dx = " + number_text(g.dx) + ", dy = " + number_text(g.dy);
  grid_extents n{g.nx, g.ny, 1};
  if constexpr (Dims == 3) {
    smallest = g.dz < smallest ? g.dz : smallest;
    sizes += ", dz = " + number_text(g.dz);
    n.nz = g.nz;
  }
  if (!(cutoff >= Real(0)))
    throw std::invalid_argument(std::string(what) + ": the cutoff is " + number_text(cutoff) + "; it must be >= 0");
  if (cutoff > smallest)
    throw std::invalid_argument(std::string(what) + ": the cutoff " + number_text(cutoff) +
                                " is larger than a cell of the cell list (" + sizes +
                                "): neighbours would lie beyond the adjacent cells; make the cell list on a grid "
                                "whose cells are at least the cutoff");
  if (particles != cells.size())
    throw std::invalid_argument(std::string(what) + ": the cell list was made for " + std::to_string(cells.size()) +
                                " particles, and " + std::to_string(particles) +
                                " are given; make it again for these particles");
  if (out != particles)
    throw std::invalid_argument(std::string(what) + ": out has " + std::to_string(out) + " elements, and there are " +
                                std::to_string(particles) + " particles; they must agree");
  if (Periodic && (n.nx < 3 || n.ny < 3 || n.nz < (Dims == 3 ? 3 : 1)))
    throw std::invalid_argument(std::string(what) +
                                ": periodic boundaries need at least 3 cells along every axis, so that the "
                                "neighbour cells are distinct and the box is at least 3 cutoffs wide; the grid has " +
                                std::to_string(n.nx) + " x " + std::to_string(n.ny) +
                                (Dims == 3 ? " x " + std::to_string(n.nz) : std::string()));
}

template <int Dims, class Real, class Position>
neighbor_search<Dims, Real, Position> search_of(const cell_list<Dims, Real, Position>& cells, Real cutoff) {
  const auto& g = cells.grid();
  neighbor_search<Dims, Real, Position> s{g,
                                          cells.position(),
                                          cells.offsets().data(),
                                          grid_extents{g.nx, g.ny, 1},
                                          cutoff * cutoff,
                                          {Real(g.nx) * g.dx, Real(g.ny) * g.dy, Real(0)}};
  if constexpr (Dims == 3) {
    s.extents.nz = g.nz;
    s.box[2] = Real(g.nz) * g.dz;
  }
  return s;
}

// The checks, then the kernel of `Design`, on `stream`. What every form calls; the tests call it
// with each design to time them against each other.
template <neighbor_design Design, bool Periodic, class T, int Dims, class Real, class Position, class A, class F>
void run_for_each_neighbor(soa_view<const T> particles, const cell_list<Dims, Real, Position>& cells, Real cutoff,
                           soa_view<A> out, const F& f, cudaStream_t stream) {
  static_assert(!std::is_const_v<A>,
                "coalesce::for_each_neighbor: out must be writable: pass a soa_view<A> (soa_vector::view()), not a "
                "soa_view<const A>");
  if constexpr (!std::is_const_v<A>) {  // else the one message above
    constexpr const char* what = "coalesce::for_each_neighbor";
    check_neighbor_call<Periodic>(particles.size(), cells, cutoff, out.size(), what);
    if (particles.empty()) return;
    require_device_memory(particles.columns()[0], what);
    require_device_memory(out.columns()[0], what);
    require_device_memory(cells.offsets().data(), what);
    throw_if_earlier_error(what);
    const auto s = search_of(cells, cutoff);
    const unsigned blocks = grid_for_all((particles.size() + neighbor_threads - 1) / neighbor_threads);
    if constexpr (Design == neighbor_design::direct) {
      neighbors_direct_kernel<Periodic><<<blocks, neighbor_threads, 0, stream>>>(particles, s, out, f);
    } else {
      // The stage for the blocks' expected ranges (detail/cell_neighbors.hpp), within 48 KiB.
      using staged = staged_position<Dims, Real>;
      const std::uint32_t capacity = stage_capacity<Dims>(particles.size(), cells.cells(), neighbor_threads,
                                                          std::uint32_t(neighbor_stage_bytes / sizeof(staged)));
      neighbors_staged_kernel<Periodic>
          <<<blocks, neighbor_threads, capacity * sizeof(staged), stream>>>(particles, s, out, f, capacity);
    }
    throw_if_launch_failed("coalesce::for_each_neighbor kernel launch");
  }
}

// The container forms run on the particles' stream, which must order the other two.
inline void require_same_neighbor_streams(cudaStream_t particles, cudaStream_t cells, cudaStream_t out) {
  if (particles != cells || particles != out)
    throw std::invalid_argument(
        "coalesce::for_each_neighbor: the particles, the cell list and the output are on different streams; pass "
        "their views and the stream to run on, once the other streams are ordered before it");
}

template <class T>
using read_only_particles_of = soa_view<const std::remove_const_t<T>, device_space>;

}  // namespace detail

/// For each particle i of `particles` (a soa_view of device memory: the particles `cells` was made
/// for, in its order), on `stream`: `A a{}` (value-initialized), then f(p_i, p_j, a) for every
/// particle j != i whose position (by the cell list's position function) is closer to i's than
/// `cutoff` (distance^2 < cutoff^2, tested by coalesce before f is called), then out[i] = a. The
/// contract of for_each_pair, with the pairs cut at the cutoff.
///
/// p_i and p_j are `const T&`, copies of the two particles in registers (only the fields f reads
/// are loaded): take them as `const auto&`. `a` is an `A&`, A the element type of `out` (a
/// soa_view of device memory of particles.size() elements of a struct of COALESCE_FIELDS): take
/// it as `auto&` and add into it. The j of one i come cell row by cell row, in the sorted order,
/// the same on every run. Open boundaries: a position outside the grid sits in the nearest edge
/// cell, which keeps every pair closer than a cell within adjacent cells, so the pairs are still
/// exactly those closer than the cutoff (found more slowly where many crowd an edge cell). Where
/// the cutoff equals the cell size, a pair closer than it by less than the rounding of cell_of (a
/// few units in the last place of position / cell size) may be missed; cells a little larger than
/// the cutoff miss none.
///
/// Moves: each particle's fields that position and f read, once, into its thread; the offsets of
/// its 9 (3D) or 3 (2D) neighbour cell rows, through L1; the positions of the candidates in its
/// 27 (9) neighbour cells, read from the columns through L1, where consecutive particles of the
/// sorted order find mostly the same candidates; and the other fields f reads of p_j, for the
/// pairs within the cutoff only. (A kernel that stages each block's candidates in shared memory is
/// kept beside it, and measured slower: detail/neighbor_kernels.hpp.) Writes out, once per
/// particle, coalesced, and nothing else; f must not write the particles, and changes nothing but
/// a. Work: a distance test for every particle of the 27 (9) cells around each particle's own,
/// 27 rho h^3 of them at rho particles per unit volume and cells of size h; f for the 4/3 pi
/// rc^3 rho of those within the cutoff rc (16% where h = rc), one thread per particle. Measured on
/// an NVIDIA H200, CUDA 13.0 (tests/device/for_each_neighbor.cu, full scope): a Lennard-Jones
/// force on 4 Mi particles with 29 neighbours each in 1.71 ms, 1.22x a hand-written 27-cell
/// kernel (2.09 ms). Throws std::invalid_argument if the cutoff is negative, NaN or larger than a
/// cell (the cells must be at least the cutoff), if `particles` are not as many as the cell list
/// was made for, or out not as many; coalesce::cuda_error if the launch fails (or, attributed to
/// the caller, if an earlier error was pending). Asynchronous on `stream`.
template <class T, int Dims, class Real, class Position, class A, class F>
void for_each_neighbor(soa_view<T> particles, const cell_list<Dims, Real, Position>& cells,
                       cuda::std::type_identity_t<Real> cutoff, soa_view<A> out, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_neighbor");
  detail::run_for_each_neighbor<detail::default_neighbor_design, false>(detail::read_only_particles_of<T>(particles),
                                                                        cells, cutoff, out, f, stream);
}

/// for_each_neighbor across periodic boundaries: the grid's box, nx * dx by ny * dy (by nz * dz),
/// is a torus, and j counts at the distance of its image nearest i; the neighbour cells of an edge
/// cell wrap around. Every position must lie inside the box (wrap them first: coalesce::wrap;
/// checked under COALESCE_DEBUG), and every axis must have at least 3 cells (std::invalid_argument
/// otherwise), so that no two images of j are both within the cutoff. f still receives p_j as
/// stored: for the displacement, take the minimum image itself (dx -= lx * rintf(dx / lx)).
template <class T, int Dims, class Real, class Position, class A, class F>
void for_each_neighbor(soa_view<T> particles, const cell_list<Dims, Real, Position>& cells,
                       cuda::std::type_identity_t<Real> cutoff, soa_view<A> out, F f, periodic_t,
                       cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_neighbor");
  detail::run_for_each_neighbor<detail::default_neighbor_design, true>(detail::read_only_particles_of<T>(particles),
                                                                       cells, cutoff, out, f, stream);
}

/// for_each_neighbor of a device soa_vector into one, on the particles' stream. The output and the
/// cell list must be ordered on that stream: the three streams must be the same
/// (std::invalid_argument otherwise; pass views and a stream to order them yourself).
template <class T, class R1, int Dims, class Real, class Position, class A, class R2, class F>
void for_each_neighbor(const soa_vector<T, device_space, R1>& particles, const cell_list<Dims, Real, Position>& cells,
                       cuda::std::type_identity_t<Real> cutoff, soa_vector<A, device_space, R2>& out, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_neighbor");
  detail::require_same_neighbor_streams(particles.stream(), cells.stream(), out.stream());
  for_each_neighbor(particles.const_view(), cells, cutoff, out.view(), f, particles.stream());
}

/// The same across periodic boundaries.
template <class T, class R1, int Dims, class Real, class Position, class A, class R2, class F>
void for_each_neighbor(const soa_vector<T, device_space, R1>& particles, const cell_list<Dims, Real, Position>& cells,
                       cuda::std::type_identity_t<Real> cutoff, soa_vector<A, device_space, R2>& out, F f, periodic_t) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_neighbor");
  detail::require_same_neighbor_streams(particles.stream(), cells.stream(), out.stream());
  for_each_neighbor(particles.const_view(), cells, cutoff, out.view(), f, periodic, particles.stream());
}

}  // namespace coalesce

#  include <coalesce/cell_list.hpp>

#endif  // __CUDACC__
