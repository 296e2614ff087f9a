// coalesce::detail: for_each_neighbor's two kernels. Both take one thread per particle i, in the
// sorted order (consecutive threads: the same or adjacent cells), and walk i's neighbour cells as
// one contiguous range per neighbour row (detail/cell_neighbors.hpp): 9 ranges in 3D instead of
// 27 cells, 3 in 2D. Users never include this header.
//
// direct: each candidate j's position is read from the particles' columns (only those position
//   reads). Threads of a warp read mostly the same j's, a few cells' worth of consecutive
//   particles: served by L1 in one or two lines per load, a load per coordinate per candidate.
// staged: a block takes neighbor_threads consecutive particles; their cells span one row (or two,
//   across a row's end), and the neighbour rows of those cells are a handful of contiguous ranges
//   of particles, 9 per spanned row in 3D. The block copies their positions into shared memory
//   (coalesced: consecutive threads, consecutive particles), as one Real[4] (3D) or Real[2] (2D)
//   per particle, and each thread then reads a candidate's position with one shared-memory load
//   instead of one global load per coordinate. Only the positions are staged: of a 3 x 3 x 3 block
//   of cells of the cutoff's size, 4/3 pi / 27 = 16% lies within the cutoff, so the fields f reads
//   of p_j are read, from the columns, for that 16% only. A block whose cells span more rows
//   (sparse cells) or whose ranges exceed the stage (crowded ones) reads as direct does.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/cell_neighbors.hpp>
#include <coalesce/soa_view.hpp>
#include <coalesce/uniform_grid.hpp>

#include <cuda/std/array>
#include <cuda/std/type_traits>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce::detail {

// Threads per block in both designs; the staged block stages for this many particles.
inline constexpr unsigned neighbor_threads = 128;

// Which kernel for_each_neighbor launches. Both give the same pairs; they differ in what they move
// (see above), and are kept side by side to be measured against each other
// (tests/device/for_each_neighbor.cu times both). Direct, measured: on an H200 (CUDA 13.0), a
// Lennard-Jones force on 4 Mi particles with 29 neighbours each took 1.71 ms direct and 2.68 ms
// staged (a hand-written 27-cell kernel: 2.09 ms). Consecutive sorted particles read mostly the
// same candidates, which L1 serves; the stage's block-wide setup and barriers cost more than the
// loads it saves.
enum class neighbor_design { direct, staged };
inline constexpr neighbor_design default_neighbor_design = neighbor_design::direct;

// The shared memory the staged kernel may take per block without opting in, less room for its
// own tables.
inline constexpr std::size_t neighbor_stage_bytes = 48 * 1024 - 1024;

// What the kernels take of a cell list and of the call.
template <int Dims, class Real, class Position>
struct neighbor_search {
  uniform_grid<Dims, Real> grid;
  Position position;
  const std::uint32_t* offsets;
  grid_extents extents;
  Real cutoff2;
  Real box[3];  // the grid's length along x, y, z: what a periodic image adds
};

// A staged position: Dims coordinates padded to 4 (3D) or 2 (2D) for one 16- or 8-byte load.
template <int Dims, class Real>
struct alignas(sizeof(Real) * (Dims == 3 ? 4 : 2) > 16 ? 16 : sizeof(Real) * (Dims == 3 ? 4 : 2)) staged_position {
  Real c[Dims == 3 ? 4 : 2];
};

template <int Dims, class Real>
using position_of = cuda::std::array<Real, std::size_t(Dims)>;
// The same as a parameter that takes no part in deduction (array's size is a std::size_t, Dims an
// int): the other parameters say what Dims and Real are.
template <int Dims, class Real>
using position_arg = cuda::std::type_identity_t<position_of<Dims, Real>>;

template <int Dims, class Real>
__device__ COALESCE_FORCEINLINE cell_coordinates cell_at(const uniform_grid<Dims, Real>& grid,
                                                         const position_arg<Dims, Real>& r) {
  if constexpr (Dims == 2) {
    const auto c = grid.cell_of(r[0], r[1]);
    return {c.col, c.row, 0};
  } else {
    const auto c = grid.cell_of(r[0], r[1], r[2]);
    return {c.x, c.y, c.z};
  }
}

__device__ COALESCE_FORCEINLINE std::uint32_t cell_index(cell_coordinates c, grid_extents n) {
  return (std::uint32_t(c.z) * std::uint32_t(n.ny) + std::uint32_t(c.y)) * std::uint32_t(n.nx) + std::uint32_t(c.x);
}

// Particle i's position less the periodic image's shift: the point from which a neighbour range
// seen through that image is measured, so the shift costs nothing per candidate.
template <bool Periodic, int Dims, class Real>
__device__ COALESCE_FORCEINLINE position_of<Dims, Real> seen_from(const position_arg<Dims, Real>& at, const Real* box,
                                                                  int image_x, int image_y, int image_z) {
  if constexpr (!Periodic) {
    return at;
  } else {
    position_of<Dims, Real> r = at;
    r[0] -= Real(image_x) * box[0];
    r[1] -= Real(image_y) * box[1];
    if constexpr (Dims == 3) r[2] -= Real(image_z) * box[2];
    return r;
  }
}

template <int Dims, class Real, class Q>
__device__ COALESCE_FORCEINLINE Real squared_distance(const position_arg<Dims, Real>& at, const Q& r) {
  Real d2 = Real(0);
  for (int k = 0; k < Dims; ++k) {
    const Real d = at[k] - r[k];
    d2 += d * d;
  }
  return d2;
}

// f(p_i, p_j, a) for each j in [begin, end), j != i, closer to `at` than the cutoff, positions read
// from the columns.
template <int Dims, class Real, class T, class Position, class Ref, class A, class F>
__device__ COALESCE_FORCEINLINE void visit_columns(const soa_view<const T>& particles,
                                                   const neighbor_search<Dims, Real, Position>& s, std::uint32_t begin,
                                                   std::uint32_t end, std::uint32_t i, const Ref& p_i,
                                                   const position_arg<Dims, Real>& at, A& a, const F& f) {
  for (std::uint32_t j = begin; j < end; ++j) {
    const position_of<Dims, Real> r = s.position(particles[j]);
    if (squared_distance<Dims, Real>(at, r) < s.cutoff2 && j != i) {
      const T p_j = value(particles[j]);  // the loads of what position read already are reused
      f(p_i, p_j, a);
    }
  }
}

// The same for the staged slots [begin, end), slot k holding particle k + to_index (modulo 2^32).
template <int Dims, class Real, class T, class Ref, class A, class F>
__device__ COALESCE_FORCEINLINE void visit_stage(const staged_position<Dims, Real>* stage, std::uint32_t begin,
                                                 std::uint32_t end, std::uint32_t to_index,
                                                 const soa_view<const T>& particles, Real cutoff2, std::uint32_t i,
                                                 const Ref& p_i, const position_arg<Dims, Real>& at, A& a, const F& f) {
  for (std::uint32_t k = begin; k < end; ++k) {
    const staged_position<Dims, Real> q = stage[k];
    if (squared_distance<Dims, Real>(at, q.c) < cutoff2) {
      const std::uint32_t j = k + to_index;
      if (j != i) {
        const T p_j = value(particles[j]);  // only the fields f reads are loaded
        f(p_i, p_j, a);
      }
    }
  }
}

// All of particle i's neighbours, from the columns.
template <bool Periodic, int Dims, class Real, class T, class Position, class Ref, class A, class F>
__device__ COALESCE_FORCEINLINE void neighbors_from_columns(const soa_view<const T>& particles,
                                                            const neighbor_search<Dims, Real, Position>& s,
                                                            std::uint32_t i, const Ref& p_i,
                                                            const position_arg<Dims, Real>& at, cell_coordinates c,
                                                            A& a, const F& f) {
  visit_neighbor_rows<Dims, Periodic>(c, s.extents, [&](std::uint32_t row, int, int image_y, int image_z) {
    const std::uint32_t* const first = s.offsets + row * std::uint32_t(s.extents.nx);
    visit_neighbor_columns<Periodic>(c.x, s.extents.nx, [&](int lo, int hi, int image_x) {
      visit_columns(particles, s, __ldg(first + lo), __ldg(first + hi + 1), i, p_i,
                    seen_from<Periodic, Dims, Real>(at, s.box, image_x, image_y, image_z), a, f);
    });
  });
}

// Under COALESCE_DEBUG: a periodic search takes every position to lie inside the grid's box.
template <bool Periodic, int Dims, class Real, class Position>
__device__ COALESCE_FORCEINLINE void check_inside_box(const neighbor_search<Dims, Real, Position>& s,
                                                      const position_arg<Dims, Real>& at) {
  if constexpr (Periodic) {
    bool inside =
        at[0] >= s.grid.x0 && at[0] < s.grid.x0 + s.box[0] && at[1] >= s.grid.y0 && at[1] < s.grid.y0 + s.box[1];
    if constexpr (Dims == 3) inside = inside && at[2] >= s.grid.z0 && at[2] < s.grid.z0 + s.box[2];
    COALESCE_ASSERT(inside, "coalesce::for_each_neighbor: periodic, and a position lies outside the grid's box "
                            "(coalesce::wrap it into the box first)");
    (void)inside;
  }
}

// Whether f can be called as for_each_neighbor calls it. Checked in device code: on the host, nvcc
// hides a device lambda's call operator.
template <class F, class T, class A>
COALESCE_HOST_DEVICE constexpr bool check_neighbor_function() {
  constexpr bool callable = std::is_invocable_v<const F&, const T&, const T&, A&>;
  static_assert(callable,
                "coalesce::for_each_neighbor: f must be callable as f(p_i, p_j, a), p_i and p_j two particles (const "
                "T&) and a the accumulator of p_i (an A&, A the element type of out): declare f as [] __device__(const "
                "auto& p_i, const auto& p_j, auto& a)");
  return callable;
}

template <bool Periodic, int Dims, class Real, class T, class Position, class A, class F>
__global__ void __launch_bounds__(neighbor_threads)
    neighbors_direct_kernel(soa_view<const T> particles, neighbor_search<Dims, Real, Position> s, soa_view<A> out,
                            F f) {
  if constexpr (check_neighbor_function<F, T, A>()) {
    const std::size_t n = particles.size();
    for (std::size_t i = std::size_t(blockIdx.x) * neighbor_threads + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * neighbor_threads) {
      const position_of<Dims, Real> at = s.position(particles[i]);
      check_inside_box<Periodic>(s, at);
      const T p_i = value(particles[i]);  // in registers: f reads it at every pair
      A a{};
      neighbors_from_columns<Periodic>(particles, s, std::uint32_t(i), p_i, at, cell_at(s.grid, at), a, f);
      out[i] = a;
    }
  }
}

// The staged kernel's tables for the particles [first, last] of a block, written by warp 0: the
// cells of the first and the last particle, each segment's first particle and first slot (the
// slots of segment k are [slot_begin[k], slot_begin[k + 1])), and whether the block stages.
template <int Dims>
struct stage_tables {
  std::uint32_t c_first, c_last;
  std::uint32_t segment_begin[most_stage_segments<Dims>];
  std::uint32_t slot_begin[most_stage_segments<Dims> + 1];
  bool staged;
};

template <bool Periodic, int Dims, class Real, class T, class Position>
__device__ void plan_stage(const soa_view<const T>& particles, const neighbor_search<Dims, Real, Position>& s,
                           std::size_t first, std::size_t last, std::uint32_t capacity, stage_tables<Dims>& t) {
  constexpr unsigned all = 0xffffffffu;
  constexpr int segments = most_stage_segments<Dims>;
  static_assert(segments <= 32, "coalesce::detail: one lane per stage segment");
  const unsigned lane = threadIdx.x;
  std::uint32_t cell = 0;
  if (lane < 2) cell = cell_index(cell_at(s.grid, s.position(particles[lane == 0 ? first : last])), s.extents);
  const std::uint32_t c_first = __shfl_sync(all, cell, 0), c_last = __shfl_sync(all, cell, 1);
  const bool few_rows = c_first <= c_last && spanned_rows(c_first, c_last, s.extents.nx) <= most_staged_rows;
  std::uint32_t begin = 0, count = 0;
  if (few_rows && lane < unsigned(segments)) {
    const stage_segment g = stage_segment_at<Dims, Periodic>(int(lane), c_first, c_last, s.extents);
    if (!g.empty) {
      begin = __ldg(s.offsets + g.first_cell);
      count = __ldg(s.offsets + g.last_cell + 1) - begin;
    }
  }
  std::uint32_t sum = count;  // inclusive scan over the lanes
  for (unsigned d = 1; d < 32; d *= 2) {
    const std::uint32_t below = __shfl_up_sync(all, sum, d);
    if (lane >= d) sum += below;
  }
  if (lane < unsigned(segments)) {
    t.segment_begin[lane] = begin;
    t.slot_begin[lane] = sum - count;
  }
  const std::uint32_t total = __shfl_sync(all, sum, 31);
  if (lane == 0) {
    t.c_first = c_first;
    t.c_last = c_last;
    t.slot_begin[segments] = total;
    t.staged = few_rows && total <= capacity;
  }
}

// Particle i's neighbours through the stage: the image-0 range of each neighbour row from shared
// memory, the range across a periodic x edge from the columns.
template <bool Periodic, int Dims, class Real, class T, class Position, class Ref, class A, class F>
__device__ COALESCE_FORCEINLINE void neighbors_from_stage(const soa_view<const T>& particles,
                                                          const neighbor_search<Dims, Real, Position>& s,
                                                          const staged_position<Dims, Real>* stage,
                                                          const stage_tables<Dims>& t, int q, std::uint32_t i,
                                                          const Ref& p_i, const position_arg<Dims, Real>& at,
                                                          cell_coordinates c, A& a, const F& f) {
  visit_neighbor_rows<Dims, Periodic>(c, s.extents, [&](std::uint32_t row, int slot, int image_y, int image_z) {
    const int k = q * rows_per_cell<Dims> + slot;
    const std::uint32_t* const first = s.offsets + row * std::uint32_t(s.extents.nx);
    const std::uint32_t to_slot = t.slot_begin[k] - t.segment_begin[k];
    visit_neighbor_columns<Periodic>(c.x, s.extents.nx, [&](int lo, int hi, int image_x) {
      const std::uint32_t begin = __ldg(first + lo), end = __ldg(first + hi + 1);
      const position_of<Dims, Real> seen = seen_from<Periodic, Dims, Real>(at, s.box, image_x, image_y, image_z);
      if (!Periodic || image_x == 0)
        visit_stage(stage, begin + to_slot, end + to_slot, 0u - to_slot, particles, s.cutoff2, i, p_i, seen, a, f);
      else visit_columns(particles, s, begin, end, i, p_i, seen, a, f);
    });
  });
}

// Blocks of neighbor_threads consecutive particles, striding over the rest; `capacity` staged
// positions of dynamic shared memory. Three barriers per block of particles: the tables are
// written, the stage is filled, the stage is read.
template <bool Periodic, int Dims, class Real, class T, class Position, class A, class F>
__global__ void __launch_bounds__(neighbor_threads)
    neighbors_staged_kernel(soa_view<const T> particles, neighbor_search<Dims, Real, Position> s, soa_view<A> out, F f,
                            std::uint32_t capacity) {
  if constexpr (check_neighbor_function<F, T, A>()) {
    using staged = staged_position<Dims, Real>;
    extern __shared__ __align__(16) unsigned char neighbor_stage[];
    staged* const stage = reinterpret_cast<staged*>(neighbor_stage);
    __shared__ stage_tables<Dims> t;
    constexpr int segments = most_stage_segments<Dims>;
    const std::size_t n = particles.size();
    for (std::size_t start = std::size_t(blockIdx.x) * neighbor_threads; start < n;
         start += std::size_t(gridDim.x) * neighbor_threads) {
      const std::size_t last = (start + neighbor_threads < n ? start + neighbor_threads : n) - 1;
      if (threadIdx.x < 32) plan_stage<Periodic>(particles, s, start, last, capacity, t);
      __syncthreads();
      if (t.staged) {
        int k = 0;  // the segment of `slot`: slots only grow
        for (std::uint32_t slot = threadIdx.x; slot < t.slot_begin[segments]; slot += neighbor_threads) {
          while (slot >= t.slot_begin[k + 1]) ++k;
          const position_of<Dims, Real> r = s.position(particles[t.segment_begin[k] + (slot - t.slot_begin[k])]);
          staged q{};
          for (int d = 0; d < Dims; ++d) q.c[d] = r[d];
          stage[slot] = q;
        }
      }
      __syncthreads();
      const std::size_t i = start + threadIdx.x;
      if (i <= last) {
        const position_of<Dims, Real> at = s.position(particles[i]);
        check_inside_box<Periodic>(s, at);
        const T p_i = value(particles[i]);
        const cell_coordinates c = cell_at(s.grid, at);
        const std::uint32_t cell = cell_index(c, s.extents);
        A a{};
        // A particle outside the block's cells (moved since the cell list was made) reads the columns.
        if (t.staged && cell >= t.c_first && cell <= t.c_last) {
          const int q = int(cell / std::uint32_t(s.extents.nx) - t.c_first / std::uint32_t(s.extents.nx));
          neighbors_from_stage<Periodic>(particles, s, stage, t, q, std::uint32_t(i), p_i, at, c, a, f);
        } else {
          neighbors_from_columns<Periodic>(particles, s, std::uint32_t(i), p_i, at, c, a, f);
        }
        out[i] = a;
      }
      __syncthreads();
    }
  }
}

}  // namespace coalesce::detail
