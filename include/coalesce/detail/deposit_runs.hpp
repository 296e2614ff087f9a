// coalesce::detail: deposit's stage for particles in cell order, their adds summed in registers
// first. A thread takes four consecutive particles of its block's chunk at a time (read as one
// 16-byte load of each column it reads), and keeps the k-th add of each particle in register slot
// k: sorted particles come several to a cell, so a particle mostly adds into the same points as
// the one before it, and its adds join the slots' sums. Only where a point changes does a slot's
// sum go into the chunk's box of the grid in shared memory; each point of the box that received
// anything then goes out with one global atomic. The box is a range of row-major points, so that
// an add's place in it is one multiply-add and a slot's point, always inside the box, needs no
// bounds check. Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/deposit_stage.hpp>
#include <coalesce/detail/grid_atomics.hpp>
#include <coalesce/detail/paired_adds.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/detail/soa_walk.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>
#include <utility>

namespace coalesce::detail {

// A particle's first `run_slots` adds go through register slots (two-dimensional TSC adds 9);
// more go into the box at once.
inline constexpr unsigned run_slots = 9;

// A chunk's box: the grid points [base, base + count) in row-major order, point (r, c) being
// r * pitch + c (pitch in elements). count is 0 for no box; `unordered` says why.
struct linear_box {
  unsigned base, count;
  bool unordered;  // the chunk's particles are in no useful order (else: neither sampled one adds)
};

// Warp 0's guess at the box of the chunk [start, start + chunk): from the first point the
// chunk's first particle adds to, to the last point its last one does (lanes 0 and 1 call f for
// them). Particles sorted by cell (row-major) add in between. The guess decides speed only: an
// add outside the box goes straight into the grid.
template <class T, class F>
__device__ void guess_linear_box(soa_view<const T, device_space> particles, std::size_t start, unsigned chunk,
                                 const F& f, unsigned pitch, unsigned capacity, linear_box* out) {
  unsigned r0, r1, c0, c1;
  sample_chunk_ends(particles, start, chunk, f, r0, r1, c0, c1);
  const unsigned adding = __ballot_sync(full_warp, r0 <= r1);
  const unsigned first = __shfl_sync(full_warp, r0 * pitch + c0, 0), last = __shfl_sync(full_warp, r1 * pitch + c1, 1);
  if (threadIdx.x % 32 != 0) return;
  if ((adding & 3u) != 3u) {
    *out = linear_box{0, 0, false};
  } else if (first > last || last - first >= unordered_box_factor * capacity) {
    *out = linear_box{0, 0, true};
  } else {
    *out = linear_box{first, last - first < capacity ? last - first + 1 : capacity, false};
  }
}

// A thread's run sums: slot k holds the sum so far into point at[k] of the box. A slot no
// particle has used holds point 0 and a zero sum, a run like any other (so a slot's point is
// always inside the box). During a particle its adds are noted in now_*; at its end they join
// the runs where the points are the same (one test when none changed), and where a point changed
// the run so far goes into the box and a new one starts. The box is shared memory at address
// `box` (bytes), `points` points of `count` components each.
template <class G, unsigned Slots>
struct particle_runs {
  using element = grid_element<G>;
  using component = typename element::component;
  static constexpr unsigned count = element::count;

  unsigned at[Slots];
  component sum[Slots][count];
  unsigned now_at[Slots];
  component now[Slots][count];
  unsigned next;  // the slot of the particle's next add
  // Whether a slot was used since clear(): a flag a slot rather than a count, so that where f
  // adds a fixed number of times the unused slots' flags are constant false and their code goes
  // away (a count kept them live: 16 M sorted particles took 2% longer, with more spills).
  bool used[Slots];

  COALESCE_DEVICE COALESCE_FORCEINLINE void clear() {
#pragma unroll
    for (unsigned s = 0; s < Slots; ++s) {
      at[s] = 0;
#pragma unroll
      for (unsigned k = 0; k < count; ++k) sum[s][k] = component(0);
      used[s] = false;
    }
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void begin_particle() { next = 0; }
  // The particle's next add: into box point `point` (any value: past the box is outside it).
  // `outside(point, value)` adds one the box does not hold straight into the grid.
  template <class Outside>
  COALESCE_DEVICE COALESCE_FORCEINLINE void add(unsigned box, unsigned points, unsigned point, const G& value,
                                                const Outside& outside) {
    const unsigned s = next++;
    // s is a constant where f adds a fixed number of times: the compares fold away and the slots
    // stay in registers (a runtime index would put them in local memory).
    if (!note(s, point, value, std::make_index_sequence<Slots>{})) {
      if (point < points) into_box(box, point, value);
      else outside(point, value);
    }
  }
  // The particle's adds into the runs. `first`: the thread's first particle since clear(), whose
  // runs replace the unused slots' without adding them (they are zero).
  template <class Outside>
  COALESCE_DEVICE COALESCE_FORCEINLINE void end_particle(bool first, unsigned box, unsigned points,
                                                         const Outside& outside) {
#pragma unroll
    for (unsigned s = 0; s < Slots; ++s) used[s] = used[s] || s < next;
    if (!first) {
      // Every point the same: the bits of all the slots' differences at once (the common case,
      // sorted particles several to a cell), tested before anything else is computed.
      unsigned differ = 0;
#pragma unroll
      for (unsigned s = 0; s < Slots; ++s)
        if (s < next) differ |= now_at[s] ^ at[s];
      if (differ == 0) {
#pragma unroll
        for (unsigned s = 0; s < Slots; ++s)
          if (s < next) join(s);
        return;
      }
      bool all_new = true;  // every point changed, inside the box
#pragma unroll
      for (unsigned s = 0; s < Slots; ++s)
        if (s < next) all_new = all_new && now_at[s] != at[s] && now_at[s] < points;
      if (all_new) {  // a particle in the next cell: one branch for all its runs
#pragma unroll
        for (unsigned s = 0; s < Slots; ++s)
          if (s < next) {
            into_box(box, at[s], sum[s]);
            start(s);
          }
        return;
      }
    }
#pragma unroll
    for (unsigned s = 0; s < Slots; ++s) {
      if (s >= next) continue;
      if (!first && now_at[s] == at[s]) {
        join(s);
      } else if (now_at[s] < points) {
        if (!first) into_box(box, at[s], sum[s]);
        start(s);
      } else {
        outside(now_at[s], element::make(now[s]));
      }
    }
  }
  // Every run into the box.
  COALESCE_DEVICE COALESCE_FORCEINLINE void flush_all(unsigned box) {
#pragma unroll
    for (unsigned s = 0; s < Slots; ++s)
      if (used[s]) into_box(box, at[s], sum[s]);
  }

 private:
  template <std::size_t... S>
  COALESCE_DEVICE COALESCE_FORCEINLINE bool note(unsigned s, unsigned point, const G& value,
                                                 std::index_sequence<S...>) {
    return ((s == S && (note_in<S>(point, value), true)) || ...);
  }
  template <std::size_t S>
  COALESCE_DEVICE COALESCE_FORCEINLINE void note_in(unsigned point, const G& value) {
    now_at[S] = point;
#pragma unroll
    for (unsigned k = 0; k < count; ++k) now[S][k] = element::get(value, k);
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void join(unsigned s) {
#pragma unroll
    for (unsigned k = 0; k < count; ++k) sum[s][k] += now[s][k];
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void start(unsigned s) {
    at[s] = now_at[s];
#pragma unroll
    for (unsigned k = 0; k < count; ++k) sum[s][k] = now[s][k];
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static void into_box(unsigned box, unsigned point, const G& value) {
#pragma unroll
    for (unsigned k = 0; k < count; ++k)
      shared_atomic_add(box + (point * count + k) * unsigned(sizeof(component)), element::get(value, k));
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static void into_box(unsigned box, unsigned point,
                                                            const component (&value)[count]) {
#pragma unroll
    for (unsigned k = 0; k < count; ++k)
      shared_atomic_add(box + (point * count + k) * unsigned(sizeof(component)), value[k]);
  }
};

// An add the box does not hold: straight into the grid, and the thread noted as having missed.
// `offset` is the point's offset from the box's first, modulo 2^32: base + offset is the point.
template <class G>
struct add_outside {
  G* grid;  // element 0
  unsigned base;
  bool* missed;
  COALESCE_DEVICE COALESCE_FORCEINLINE void operator()(unsigned offset, const G& value) const {
    atomic_add_value(grid + std::size_t(base + offset), value);
    *missed = true;
  }
};

// f's calls in the stage. Point (r, c) of the grid is element r * pitch + c: exact in 32 bits
// (the host checks rows * pitch < 2^32).
template <class G, unsigned Slots>
struct run_accumulator {
  unsigned box;  // the shared-memory address of the box
  linear_box where;
  unsigned pitch;
  pitched_view<G, device_space> grid;
  bool* missed;
  particle_runs<G, Slots>* runs;
  COALESCE_DEVICE COALESCE_FORCEINLINE add_outside<G> outside() const { return {grid.data(), where.base, missed}; }
  COALESCE_DEVICE COALESCE_FORCEINLINE void add(std::size_t r, std::size_t c, G value) const {
    COALESCE_ASSERT(r < grid.rows() && c < grid.cols(), "coalesce::deposit: add(r, c) outside the grid");
    runs->add(box, where.count, unsigned(r) * pitch + unsigned(c) - where.base, value, outside());
  }
};

// Particles a thread takes at a time: a chunk of every column (four floats, two chunks of two
// doubles), at least four.
template <class T>
inline constexpr unsigned consecutive_particles =
    soa_columns<const T>::chunk_elements > 4 ? soa_columns<const T>::chunk_elements : 4;

// f(p, acc) for the consecutive particles [first, first + Each), one thread's, read as chunks of
// each column (VectorLoads: every column's chunks start at the same particle) or one by one.
template <unsigned Each, bool VectorLoads, bool First, class T, class G, unsigned Slots, class F>
COALESCE_DEVICE COALESCE_FORCEINLINE void deposit_consecutive(soa_view<const T, device_space> particles,
                                                              std::size_t first, const run_accumulator<G, Slots>& acc,
                                                              particle_runs<G, Slots>& runs, const F& f) {
  using columns = soa_columns<const T>;
  constexpr unsigned N = columns::chunk_elements;
  // first_particle is a constant once the loops below are unrolled.
  const auto one = [&](const auto& p, bool first_particle) {
    runs.begin_particle();
    f(p, acc);
    runs.end_particle(first_particle, acc.box, acc.where.count, acc.outside());
  };
  if constexpr (VectorLoads) {
    if (first + Each <= particles.size()) {
      const columns cols{particles};
#pragma unroll
      for (unsigned j = 0; j < Each; j += N) {
        T values[N];
        cols.template load<N, true>(grid_position{0, first + j}, values, full_warp);
#pragma unroll
        for (unsigned k = 0; k < N; ++k) one(columns::element(static_cast<const T&>(values[k])), First && j + k == 0);
      }
      return;
    }
  }
#pragma unroll
  for (unsigned j = 0; j < Each; ++j)
    if (first + j < particles.size()) one(particles[first + j], First && j == 0);
}

// Whether the columns of `particles` can be read in chunks that start at the same particle,
// particle 0 included (host side).
template <class T>
bool columns_load_together(soa_view<const T, device_space> particles) {
  using columns = soa_columns<const T>;
  constexpr unsigned N = columns::chunk_elements;
  if constexpr (columns::template warp_staged<N>) {
    return false;  // columns whose chunks are several accesses: read one by one here
  } else {
    const columns cols{particles};
    return cols.template head<N>() == 0 && cols.template aligned_at<N>(0, 0);
  }
}

// Particles a block takes at a time in the stage: 8192 where that many, at the grid's mean
// density, cover fewer points than the stage holds with the row a chunk's box reaches past them
// (fewer flushes of the box); else 4096, which deposit_runs_fit guarantees at a particle a point.
// Measured on an NVIDIA H100, CUDA 13.0, 16 M sorted particles (cloud-in-cell): 0.1077 against
// 0.1100 ms into 2048 x 2048 floats, 0.1036 against 0.1068 ms into 16384 x 256; shuffled, level.
inline constexpr unsigned run_deposit_chunk = 8192, run_deposit_small_chunk = 4096;

inline unsigned choose_run_deposit_chunk(std::size_t particles, std::size_t rows, std::size_t pitch,
                                         std::size_t capacity) {
  if (particles == 0) return run_deposit_small_chunk;
  // run_deposit_chunk / (particles / (rows * pitch)) points, without the division's rounding
  const double points = double(run_deposit_chunk) * double(rows) * double(pitch) / double(particles);
  return points + double(pitch) <= double(capacity) ? run_deposit_chunk : run_deposit_small_chunk;
}

// The staged deposit into a matrix whose points r * pitch + c fit in 32 bits, blocks of
// deposit_threads threads, Chunk particles at a time (a constant: a chunk given at run time took
// registers enough for twice the spills); `Global` is the accumulator of the grid.
// One pass over the particles: the box of a chunk is guessed (by warp 0, during the chunk
// before), the chunk's adds are summed in registers and in the box, and the box goes out with one
// atomicAdd per point that received anything, leaving it zero. Two barriers a chunk. A chunk
// whose two sampled particles add nothing (an f that adds for some particles only) adds straight
// into the grid and the next is staged again; a block whose guess is far larger than the stage,
// or most of whose threads missed their box (particles in no useful order), adds straight into
// the grid from then on. Six blocks an SM (at most 40 registers a thread): on an H200, 16 M
// sorted particles into 2048 x 2048 floats took 0.102 ms so, 0.115 ms at the compiler's choice of
// 54 registers.
inline constexpr unsigned run_deposit_blocks_per_sm = 6;
// At most two waves of blocks, each taking chunks in turn (more blocks than that only queue):
// on an NVIDIA H100, CUDA 13.0, 16 M sorted particles took 0.1060 ms into 2048 x 2048 floats
// against 0.1074 with four waves and 0.1076 with one, 0.1072 against 0.1079 into 1024 x 4096, and
// 0.1034 against 0.1037 into 16384 x 256; 5, 7 or 8 blocks an SM were all slower.
inline constexpr unsigned run_deposit_waves = 2;
// No prefetch: asking L2 (prefetch.global.L2) for each thread's particles 1, 2 or 4 groups ahead of
// those it reads took the same launch from 0.1070 ms to 0.1254, 0.1213 and 0.1394 ms into 2048 x
// 2048 floats (docs/bench/particles-grids-h100/deposit-prefetch.txt, same H100).

template <unsigned Chunk, bool VectorLoads, class T, class G, class Global, class F>
__global__ void __launch_bounds__(deposit_threads, run_deposit_blocks_per_sm)
    run_deposit_kernel(soa_view<const T, device_space> particles, pitched_view<G, device_space> grid, Global global,
                       F f) {
  constexpr unsigned Each = consecutive_particles<T>, chunk = Chunk;
  static_assert(Chunk % (deposit_threads * Each) == 0, "coalesce::detail: a chunk is whole runs of particles");
  using element = grid_element<G>;
  using component = typename element::component;
  constexpr unsigned capacity = unsigned(deposit_stage_bytes / sizeof(G));  // grid points
  __shared__ component box[capacity * element::count];
  __shared__ linear_box boxes[2];  // this chunk's and the next one's, alternating
  const unsigned pitch = unsigned(grid.pitch_bytes() / sizeof(G));
  const std::size_t stride = std::size_t(gridDim.x) * chunk;
  for (unsigned e = threadIdx.x; e < capacity * element::count; e += deposit_threads) box[e] = component(0);
  std::size_t start = std::size_t(blockIdx.x) * chunk;
  if (threadIdx.x < 32) guess_linear_box(particles, start, chunk, f, pitch, capacity, &boxes[0]);
  __syncthreads();
  bool staged = true;  // the same in every thread of the block: decided from shared memory
  for (unsigned turn = 0; start < particles.size(); start += stride, turn ^= 1u) {
    if (!staged) {
      deposit_chunk_paired(particles, start, chunk, grid, global, f);
      continue;
    }
    const linear_box where = boxes[turn];
    if (threadIdx.x < 32) guess_linear_box(particles, start + stride, chunk, f, pitch, capacity, &boxes[turn ^ 1u]);
    if (where.count == 0) {
      deposit_chunk_paired(particles, start, chunk, grid, global, f);
      staged = !where.unordered;
      if (staged) __syncthreads();  // the next chunk's box is known
      continue;
    }
    bool missed = false;
    particle_runs<G, run_slots> runs;
    runs.clear();
    const run_accumulator<G, run_slots> acc{
        unsigned(__cvta_generic_to_shared(box)), where, pitch, grid, &missed, &runs};
    deposit_consecutive<Each, VectorLoads, true>(particles, start + threadIdx.x * Each, acc, runs, f);
    for (unsigned g = deposit_threads * Each; g < chunk; g += deposit_threads * Each)
      deposit_consecutive<Each, VectorLoads, false>(particles, start + g + threadIdx.x * Each, acc, runs, f);
    runs.flush_all(acc.box);
    const int missing = __syncthreads_count(missed);
    G* const first = grid.data() + where.base;
    for (unsigned e = threadIdx.x; e < where.count; e += deposit_threads) {
      component* const sum = box + e * element::count;
      bool received = false;
#pragma unroll
      for (unsigned k = 0; k < element::count; ++k) received = received || sum[k] != component(0);
      if (received) {
        atomic_add_value(first + e, element::make(sum));
#pragma unroll
        for (unsigned k = 0; k < element::count; ++k) sum[k] = component(0);
      }
    }
    staged = missing <= int(deposit_threads / 2);
    __syncthreads();  // the box is zero again, and the next chunk's box is known
  }
}

}  // namespace coalesce::detail
