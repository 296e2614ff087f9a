// coalesce::detail: deposit's shared-memory stage for a matrix. Particles sorted by cell hand a
// block's chunk of consecutive particles a small box of grid points: the block finds the box
// (f's first call per particle adds nothing, it only records the rows and columns it would add
// to), sums the chunk's contributions into a copy of the box in shared memory, and adds each
// point of the box that received anything into the grid with one global atomic. Where the box
// does not fit the stage (particles in no useful order), the block adds straight into the grid
// from then on, so unsorted particles pay one bounding pass over one chunk per block. Users never
// include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>
#include <cstdint>

namespace coalesce::detail {

// The stage: 32 KiB of grid elements per block, seven blocks of 256 threads per SM on Hopper.
inline constexpr std::size_t deposit_stage_bytes = 32 * 1024;
// Particles per chunk: a multiple of the block's 256 threads.
inline constexpr unsigned deposit_threads = 256;
inline constexpr unsigned deposit_chunk = 4 * deposit_threads;

// f's first call: records the extent of the points it adds to.
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

// f's second call: adds into the block's box in shared memory.
template <class G>
struct box_accumulator {
  G* box;
  unsigned first_row, first_col, height, width;
  __device__ void add(std::size_t r, std::size_t c, G value) const {
    COALESCE_ASSERT(
        unsigned(r) - first_row < height && unsigned(c) - first_col < width,
        "coalesce::deposit: f added to a point its first call did not (f must add the same points each time)");
    atomicAdd(box + (std::size_t(unsigned(r) - first_row) * width + (unsigned(c) - first_col)), value);
  }
};

// f(particles[i], acc) for the chunk's particles [start, start + deposit_chunk), a thread's
// particles deposit_threads apart so that a warp reads consecutive ones.
template <class T, class Acc, class F>
__device__ void deposit_chunk_with(soa_view<const T, device_space> particles, std::size_t start, const Acc& acc,
                                   const F& f) {
  for (unsigned k = 0; k < deposit_chunk; k += deposit_threads) {
    const std::size_t i = start + k + threadIdx.x;
    if (i < particles.size()) f(particles[i], acc);
  }
}

// The staged deposit into a matrix of fewer than 2^32 rows and columns, with blocks of
// deposit_threads threads. `Global` is the accumulator of the grid itself.
template <class T, class G, class Global, class F>
__global__ void __launch_bounds__(deposit_threads)
    staged_deposit_kernel(soa_view<const T, device_space> particles, pitched_view<G, device_space> grid, Global global,
                          F f) {
  constexpr unsigned capacity = unsigned(deposit_stage_bytes / sizeof(G));
  __shared__ G box[capacity];
  __shared__ unsigned row_min, row_max, col_min, col_max;
  bool staged = true;  // the same in every thread of the block: decided from shared values
  for (std::size_t start = std::size_t(blockIdx.x) * deposit_chunk; start < particles.size();
       start += std::size_t(gridDim.x) * deposit_chunk) {
    if (!staged) {
      deposit_chunk_with(particles, start, global, f);
      continue;
    }
    unsigned r0 = ~0u, r1 = 0, c0 = ~0u, c1 = 0;
    deposit_chunk_with(particles, start, box_bounds{&r0, &r1, &c0, &c1}, f);
    if (threadIdx.x == 0) {
      row_min = col_min = ~0u;
      row_max = col_max = 0;
    }
    __syncthreads();
    if (r0 <= r1) {  // this thread adds somewhere
      atomicMin(&row_min, r0);
      atomicMax(&row_max, r1);
      atomicMin(&col_min, c0);
      atomicMax(&col_max, c1);
    }
    __syncthreads();
    const unsigned first_row = row_min, first_col = col_min;
    const bool adds = first_row <= row_max;
    const std::size_t height = adds ? std::size_t(row_max - first_row) + 1 : 0;
    const std::size_t width = adds ? std::size_t(col_max - first_col) + 1 : 0;
    const std::size_t points = height * width;
    __syncthreads();  // every thread has read the bounds before the next chunk resets them
    if (points > capacity) {
      staged = false;  // particles in no useful order: straight into the grid from now on
      deposit_chunk_with(particles, start, global, f);
      continue;
    }
    for (std::size_t e = threadIdx.x; e < points; e += deposit_threads) box[e] = G(0);
    __syncthreads();
    deposit_chunk_with(particles, start,
                       box_accumulator<G>{box, first_row, first_col, unsigned(height), unsigned(width)}, f);
    __syncthreads();
    for (std::size_t e = threadIdx.x; e < points; e += deposit_threads) {
      const G sum = box[e];
      if (sum != G(0)) atomicAdd(&grid(first_row + e / width, first_col + e % width), sum);
    }
    __syncthreads();  // the box is read before the next chunk clears it
  }
}

}  // namespace coalesce::detail
