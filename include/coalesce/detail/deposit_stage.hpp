// coalesce::detail: deposit's shared-memory stage for a matrix whose rows are too wide for the
// register-run stage (detail/deposit_runs.hpp), and the pieces the two share. Particles sorted by
// cell hand a block's chunk of consecutive particles a small box of grid points: warp 0 guesses
// the box of the next chunk from the points its first and last particle add to (f called for
// those two with an accumulator that only records rows and columns), the block sums the chunk's
// contributions into a copy of the box in shared memory (adds outside it go straight into the
// grid), and adds each point of the box that received anything into the grid with one global
// atomic. A block whose guess is empty or far larger than the stage, or whose adds mostly missed
// it (particles in no useful order), adds straight into the grid from then on. Users never
// include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/grid_atomics.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>
#include <cstdint>

namespace coalesce::detail {

// The stage: 32 KiB of grid elements per block (at most 2^13 of them), six blocks of 256 threads
// per SM on Hopper.
inline constexpr std::size_t deposit_stage_bytes = 32 * 1024;
// Particles per chunk: a multiple of the block's 256 threads. Larger chunks spread a box's flush
// over more particles: on an H200, 16 M sorted particles into 2048 x 2048 floats, chunks of
// 1024, 2048 and 4096 took 0.252, 0.239 and 0.221 ms.
inline constexpr unsigned deposit_threads = 256;
inline constexpr unsigned deposit_chunk = 16 * deposit_threads;
// Waves of blocks launched: more than one, so that blocks whose chunks cost more (a box across
// rows) are balanced by the ones that start after them (on an H200, 512 x 8192 floats: 0.270 ms
// with one wave, 0.211 with four; 2048 x 2048: level).
inline constexpr unsigned deposit_waves = 4;

inline constexpr unsigned full_warp = 0xffffffffu;

// Adds `value` into box[at] in shared memory, the warp's adds into one point first summed in
// registers. A shared-memory atomicAdd of a float or a double is a compare-and-swap loop, and
// lanes of one warp adding into the same point take one turn each round: particles sorted by cell
// put about four lanes on every point. Lanes in a run of equal points (consecutive lanes, as
// sorted particles give them) sum the run with shuffles, and the run's last lane adds it. A warp
// not whole at the call, or whose lanes all add to different points, adds lane by lane.
template <class G>
__device__ void add_combined_in_warp(G* box, unsigned at, G value) {
  if (__activemask() != full_warp) {
    atomicAdd(box + at, value);
    return;
  }
  const unsigned lane = threadIdx.x % 32;
  const unsigned before = __shfl_up_sync(full_warp, at, 1);
  const unsigned heads = __ballot_sync(full_warp, lane == 0 || before != at);  // the first lane of each run
  if (heads == full_warp) {
    atomicAdd(box + at, value);
    return;
  }
  const unsigned up_to_me = full_warp >> (31 - lane);
  const unsigned head = 31 - unsigned(__clz(heads & up_to_me));  // the first lane of my run
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const G other = __shfl_up_sync(full_warp, value, d);
    if (lane >= head + d) value += other;  // an inclusive scan within the run
  }
  const bool last = lane == 31 || ((heads >> (lane + 1)) & 1u) != 0;
  if (last) atomicAdd(box + at, value);
}

// The extent of the points f adds to for one particle: what the stage calls f with to guess a
// chunk's box.
struct box_bounds {
  unsigned* row_min;
  unsigned* row_max;
  unsigned* col_min;
  unsigned* col_max;
  template <class G>
  __device__ void add(std::size_t r, std::size_t c, G) const {
    *row_min = unsigned(r) < *row_min ? unsigned(r) : *row_min;
    *row_max = unsigned(r) > *row_max ? unsigned(r) : *row_max;
    *col_min = unsigned(c) < *col_min ? unsigned(c) : *col_min;
    *col_max = unsigned(c) > *col_max ? unsigned(c) : *col_max;
  }
};

// The box of grid points a chunk's adds are summed in: rows [first_row, first_row + height),
// columns [first_col, first_col + width), at most `capacity` points.
struct chunk_box {
  unsigned first_row, first_col, height, width;
  __device__ unsigned points() const { return height * width; }
};

// A guessed box this many times the stage's capacity, or more, says "no useful order".
inline constexpr unsigned unordered_box_factor = 4;

// The stage's guess at a chunk's box, from the points its first and its last particle add to:
// particles sorted by cell (row-major) add between them. Both in the same rows: the columns
// between theirs. In different rows: whole rows, cut to the stage's capacity. No box (0 points)
// where neither adds anything or the box would be far larger than the stage. The guess only
// decides speed: an add outside the box goes straight into the grid.
__device__ inline chunk_box guess_chunk_box(unsigned r0, unsigned r1, unsigned c0, unsigned c1, bool same_rows,
                                            unsigned grid_cols, unsigned capacity) {
  if (r0 > r1) return chunk_box{0, 0, 0, 0};  // neither particle adds anything
  chunk_box b{r0, c0, r1 - r0 + 1, c1 - c0 + 1};
  if (!same_rows) {
    b.first_col = 0;
    b.width = grid_cols;
  }
  // Far more than the stage holds: the particles are in no useful order, so no box at all.
  if (std::uint64_t(b.height) * b.width > std::uint64_t(unordered_box_factor) * capacity) return chunk_box{0, 0, 0, 0};
  if (b.height > capacity) b.height = capacity;
  if (b.points() > capacity) b.width = capacity / b.height;
  return b;
}

// The extent of the points the first (lane 0) and the last (lane 1) particle of the chunk
// [start, start + chunk) add to; other lanes, and a particle that adds nothing, get the empty
// extent (r0 > r1).
template <class T, class F>
__device__ void sample_chunk_ends(soa_view<const T, device_space> particles, std::size_t start, unsigned chunk,
                                  const F& f, unsigned& r0, unsigned& r1, unsigned& c0, unsigned& c1) {
  const unsigned lane = threadIdx.x % 32;
  r0 = ~0u, r1 = 0, c0 = ~0u, c1 = 0;
  if (lane < 2 && start < particles.size()) {
    const std::size_t end = start + chunk < particles.size() ? start + chunk : particles.size();
    f(particles[lane == 0 ? start : end - 1], box_bounds{&r0, &r1, &c0, &c1});
  }
}

// Warp 0 of the block guesses the box of the chunk of particles [start, start + Chunk) into
// `out`; lanes 0 and 1 call f for the chunk's first and last particle.
template <unsigned Chunk, class T, class F>
__device__ void guess_box_of_chunk(soa_view<const T, device_space> particles, std::size_t start, const F& f,
                                   unsigned grid_cols, unsigned capacity, chunk_box* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned r0, r1, c0, c1;
  sample_chunk_ends(particles, start, Chunk, f, r0, r1, c0, c1);
  const unsigned last_r0 = __shfl_sync(full_warp, r0, 1), last_r1 = __shfl_sync(full_warp, r1, 1);
  const bool first_adds = r0 <= r1, last_adds = last_r0 <= last_r1;
  const bool same_rows = !first_adds || !last_adds || (r0 == last_r0 && r1 == last_r1);
  r0 = __reduce_min_sync(full_warp, r0);
  r1 = __reduce_max_sync(full_warp, r1);
  c0 = __reduce_min_sync(full_warp, c0);
  c1 = __reduce_max_sync(full_warp, c1);
  if (lane == 0) *out = guess_chunk_box(r0, r1, c0, c1, same_rows, grid_cols, capacity);
}

// f's calls in the stage: an add inside the chunk's box goes into shared memory (a vector
// element as its components, each summed on its own), one outside it straight into the grid
// (through `Global`), and marks the thread as having missed the box.
template <class G, class Global>
struct staged_accumulator {
  using element = grid_element<G>;
  typename element::component* box;
  chunk_box where;
  Global global;
  bool* missed;
  __device__ void add(std::size_t r, std::size_t c, G value) const {
    const unsigned dr = unsigned(r) - where.first_row, dc = unsigned(c) - where.first_col;
    if (dr < where.height && dc < where.width) {
      const unsigned at = (dr * where.width + dc) * element::count;
#pragma unroll
      for (unsigned k = 0; k < element::count; ++k) add_combined_in_warp(box, at + k, element::get(value, k));
    } else {
      global.add(r, c, value);
      *missed = true;
    }
  }
};

// f(particles[i], acc) for the chunk's particles [start, start + chunk), a thread's particles
// deposit_threads apart so that a warp reads consecutive ones.
template <class T, class Acc, class F>
__device__ void deposit_chunk_with(soa_view<const T, device_space> particles, std::size_t start, unsigned chunk,
                                   const Acc& acc, const F& f) {
  for (unsigned k = 0; k < chunk; k += deposit_threads) {
    const std::size_t i = start + k + threadIdx.x;
    if (i < particles.size()) f(particles[i], acc);
  }
}

// The staged deposit into a matrix of fewer than 2^32 rows and columns, with blocks of
// deposit_threads threads, Chunk particles at a time. `Global` is the accumulator of the grid.
// One pass over the particles: the box of a chunk is guessed (by warp 0, during the chunk
// before), the chunk's adds are summed in it, and the box goes out with one atomicAdd per point
// that received anything, leaving it zero. Two barriers a chunk: the adds are done, the flush is
// done. A block whose chunk has no box, or most of whose threads missed it (particles in no
// useful order), adds straight into the grid from then on, with no more guesses or barriers.
template <unsigned Chunk, class T, class G, class Global, class F>
__global__ void __launch_bounds__(deposit_threads)
    staged_deposit_kernel(soa_view<const T, device_space> particles, pitched_view<G, device_space> grid, Global global,
                          F f) {
  static_assert(Chunk % deposit_threads == 0, "coalesce::detail: a chunk is whole blocks of particles");
  using element = grid_element<G>;
  using component = typename element::component;
  constexpr unsigned capacity = unsigned(deposit_stage_bytes / sizeof(G));  // grid points
  __shared__ component box[capacity * element::count];
  __shared__ chunk_box boxes[2];  // this chunk's and the next one's, alternating
  const unsigned grid_cols = unsigned(grid.cols());
  const std::size_t stride = std::size_t(gridDim.x) * Chunk;
  for (unsigned e = threadIdx.x; e < capacity * element::count; e += deposit_threads) box[e] = component(0);
  std::size_t start = std::size_t(blockIdx.x) * Chunk;
  if (threadIdx.x < 32) guess_box_of_chunk<Chunk>(particles, start, f, grid_cols, capacity, &boxes[0]);
  __syncthreads();
  bool staged = true;  // the same in every thread of the block: decided from a barrier's count
  for (unsigned turn = 0; start < particles.size(); start += stride, turn ^= 1u) {
    if (!staged) {
      deposit_chunk_with(particles, start, Chunk, global, f);
      continue;
    }
    const chunk_box where = boxes[turn];
    if (threadIdx.x < 32)
      guess_box_of_chunk<Chunk>(particles, start + stride, f, grid_cols, capacity, &boxes[turn ^ 1u]);
    if (where.points() == 0) {  // no box: particles in no useful order, straight into the grid from now on
      staged = false;
      deposit_chunk_with(particles, start, Chunk, global, f);
      continue;
    }
    bool missed = false;
    deposit_chunk_with(particles, start, Chunk, staged_accumulator<G, Global>{box, where, global, &missed}, f);
    const int missing = __syncthreads_count(missed);
    // e / width by a multiply: exact for e and width below 2^13 (the capacity).
    const unsigned inverse_width = where.width > 1 ? 0xffffffffu / where.width + 1 : 0;
    for (unsigned e = threadIdx.x; e < where.points(); e += deposit_threads) {
      component* const sum = box + e * element::count;
      bool received = false;
#pragma unroll
      for (unsigned k = 0; k < element::count; ++k) received = received || sum[k] != component(0);
      if (received) {
        const unsigned row = where.width > 1 ? __umulhi(e, inverse_width) : e;
        atomic_add_value(&grid(where.first_row + row, where.first_col + (e - row * where.width)), element::make(sum));
#pragma unroll
        for (unsigned k = 0; k < element::count; ++k) sum[k] = component(0);
      }
    }
    staged = missing <= int(deposit_threads / 2);
    __syncthreads();  // the box is zero again, and the next chunk's box is known
  }
}

}  // namespace coalesce::detail
