// coalesce::detail: bin's two kernels. Users never include this header.
//
// Sorted by key, bin b's first element is the first whose key is >= b: the offsets are where the
// key changes, and finding them needs one read of the keys and one write of the offsets, no
// count. sorted_bins_kernel does that: a block reads a tile of bin_tile consecutive keys into
// shared memory (each key evaluated once, only the columns key reads loaded) and writes the
// offsets of the bins whose first element lies in the tile, the bins after the key before the
// tile up to the tile's last key, each the tile's start plus a binary search of the tile.
// Consecutive threads take consecutive bins, so the offsets go out coalesced however many
// elements a bin holds: dense keys (a few bins a tile) and sparse ones (many empty bins a tile)
// alike. No atomics, no scan, no zeroing first.
//
// The same pass checks the order. A tile with two keys out of order writes nothing and raises its
// block's flag; unsorted_bins_kernel, launched next, reads the flags and returns at once where
// none is raised, and otherwise computes what bin promises for unsorted elements, the exclusive
// sum of the bins' counts: the offsets zeroed, a histogram into them (one atomic per run of equal
// keys in a warp), their exclusive sum in place, in one cooperative launch with a grid barrier
// between the steps, so that nothing has to wait on the host.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/soa_view.hpp>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce::detail {

// 256 threads of 8 keys: a tile of 2048 keys, 8 KiB of shared memory, 8 independent loads a
// thread in flight.
inline constexpr unsigned bin_threads = 256;
inline constexpr unsigned bin_items = 8;
inline constexpr unsigned bin_tile = bin_threads * bin_items;

// Key k's bin, a key at or above `bins` counted as `bins` (in no bin; such keys sort last).
// bins < 2^31, so every bin fits 32 bits whatever the key's type.
template <class K>
__device__ COALESCE_FORCEINLINE std::uint32_t bin_of(K k, std::size_t bins) {
  return k < bins ? std::uint32_t(k) : std::uint32_t(bins);
}

// Element i's bin.
template <class K, class T, class Key>
__device__ COALESCE_FORCEINLINE std::uint32_t bin_at(const soa_view<const T>& view, const Key& key, std::size_t i,
                                                     std::size_t bins) {
  return bin_of(K(key(view[i])), bins);
}

// The place of the first of the `count` ascending bins of `tile` that is >= b (count if none).
__device__ COALESCE_FORCEINLINE unsigned lower_bound_in(const std::uint32_t* tile, unsigned count, std::uint32_t b) {
  unsigned low = 0, high = count;
  while (low < high) {
    const unsigned middle = (low + high) / 2;
    if (tile[middle] < b) low = middle + 1;
    else high = middle;
  }
  return low;
}

// The keys of the tile at `start` (count of them) into this thread's registers: bin_items loads in
// flight, key k of the thread being the tile's element k * bin_threads + threadIdx.x; and the key
// of the element before the tile (one address for the whole block). The keys are held as loaded
// and made bins (clamped) only when they go to shared memory: a clamp right after each load made
// the compiler wait for every load before it issued the next, one DRAM latency per key (0.82 of a
// copy of the keys on an H100). A whole tile is loaded without a bounds test.
template <class K, class T, class Key>
struct bin_tile_keys {
  K keys[bin_items];
  K before;

  __device__ COALESCE_FORCEINLINE void load(const soa_view<const T>& view, const Key& key, std::size_t start,
                                            unsigned count) {
    if (count == bin_tile) {
#pragma unroll
      for (unsigned k = 0; k < bin_items; ++k) keys[k] = K(key(view[start + k * bin_threads + threadIdx.x]));
    } else {
#pragma unroll
      for (unsigned k = 0; k < bin_items; ++k) {
        const unsigned e = k * bin_threads + threadIdx.x;
        keys[k] = e < count ? K(key(view[start + e])) : K(0);
      }
    }
    before = start == 0 ? K(0) : K(key(view[start - 1]));
  }
};

// The offsets of the bins whose first element lies in each tile, for elements sorted by key;
// unsorted_flags[blockIdx.x] = whether the block found keys out of order (then some offsets are
// not written). One wave of blocks striding over the tiles: few flags to read after it. A block
// loads its next tile's keys into registers before it checks and searches the current one, so
// that their loads are in flight while it works (a block that loaded each tile only when the one
// before was done ran at 0.87 of a copy of the keys on an H200, waiting on every load).
template <class K, class T, class Key, class Offset>
__global__ void __launch_bounds__(bin_threads) sorted_bins_kernel(soa_view<const T> view, Key key, std::size_t bins,
                                                                  Offset* offsets, std::uint32_t* unsorted_flags) {
  __shared__ std::uint32_t tile[bin_tile];
  const std::size_t n = view.size(), stride = std::size_t(gridDim.x) * bin_tile;
  const auto count_at = [&](std::size_t start) { return n - start < bin_tile ? unsigned(n - start) : bin_tile; };
  bool unsorted = false;  // the same in every thread of the block: from __syncthreads_or
  bin_tile_keys<K, T, Key> next;
  std::size_t start = std::size_t(blockIdx.x) * bin_tile;
  if (start < n) next.load(view, key, start, count_at(start));
  for (; start < n; start += stride) {
    const unsigned count = count_at(start);
#pragma unroll
    for (unsigned k = 0; k < bin_items; ++k) {
      const unsigned e = k * bin_threads + threadIdx.x;
      if (e < count) tile[e] = bin_of(next.keys[k], bins);
    }
    const std::uint32_t before = bin_of(next.before, bins);
    __syncthreads();
    if (start + stride < n) next.load(view, key, start + stride, count_at(start + stride));
    // Every pair compared, without a branch: nothing waits on a comparison.
    bool out_of_order = threadIdx.x == 0 && start > 0 && before > tile[0];
#pragma unroll
    for (unsigned k = 0; k < bin_items; ++k) {
      const unsigned e = k * bin_threads + threadIdx.x;
      out_of_order |= e + 1 < count && tile[e] > tile[e + 1];
    }
    if (__syncthreads_or(out_of_order)) {  // every thread has read the tile: the next may overwrite it
      unsorted = true;
      continue;
    }
    // Bins (before, last key of the tile] start here; after the last tile, every bin up to `bins`
    // starts at its end (offsets[bins] is the number of keys below bins).
    const std::size_t first_bin = start == 0 ? 0 : std::size_t(before) + 1;
    const std::size_t last_bin = start + count == n ? bins : std::size_t(tile[count - 1]);
    for (std::size_t b = first_bin + threadIdx.x; b <= last_bin; b += bin_threads)
      offsets[b] = Offset(start + lower_bound_in(tile, count, std::uint32_t(b)));
    __syncthreads();  // the tile is read before the next is written
  }
  if (threadIdx.x == 0) unsorted_flags[blockIdx.x] = unsorted ? 1u : 0u;
}

// The counters of the histogram: atomicAdd has no overload for unsigned long (std::uint64_t on
// Linux), only for unsigned long long, the same 64 bits.
template <class Offset>
using bin_counter = std::conditional_t<sizeof(Offset) == 8, unsigned long long, std::uint32_t>;

// Where sorted_bins_kernel raised a flag: offsets[0, bins] = the exclusive sum of the counts of
// the keys in [0, bins) and 0, whatever the order. Launched cooperatively (grid barriers), one
// wave; `partials` holds a sum per block.
template <class K, class T, class Key, class Offset>
__global__ void __launch_bounds__(bin_threads)
    unsorted_bins_kernel(soa_view<const T> view, Key key, std::size_t bins, Offset* offsets,
                         const std::uint32_t* unsorted_flags, unsigned flags, Offset* partials) {
  bool raised = false;
  for (unsigned f = threadIdx.x; f < flags; f += bin_threads) raised = raised || unsorted_flags[f] != 0;
  if (!__syncthreads_or(raised)) return;  // sorted: every block returns here, none reaches a barrier
  namespace cg = cooperative_groups;
  const cg::grid_group grid = cg::this_grid();
  const std::size_t rank = grid.thread_rank(), threads = grid.num_threads();
  for (std::size_t b = rank; b <= bins; b += threads) offsets[b] = Offset(0);
  grid.sync();

  // The histogram: one atomic per run of equal keys among a warp's 32 consecutive elements.
  using counter = bin_counter<Offset>;
  counter* const counts = reinterpret_cast<counter*>(offsets);
  constexpr unsigned all = 0xffffffffu;
  const std::size_t n = view.size();
  const unsigned lane = threadIdx.x % 32;
  for (std::size_t first = rank - lane; first < n; first += threads) {  // the warp stays whole
    const std::size_t i = first + lane;
    const std::uint32_t k = i < n ? bin_at<K>(view, key, i, bins) : std::uint32_t(bins);  // past the end: no bin
    const std::uint32_t before = __shfl_up_sync(all, k, 1), after = __shfl_down_sync(all, k, 1);
    const unsigned heads = __ballot_sync(all, lane == 0 || before != k);  // the first lane of each run
    if ((lane == 31 || after != k) && k < bins) {
      const unsigned head = 31 - unsigned(__clz(heads & (all >> (31 - lane))));
      atomicAdd(counts + k, counter(lane - head + 1));
    }
  }
  grid.sync();

  // The exclusive sum of the bins + 1 counts in place: each block a contiguous part, its sum
  // shared through `partials`, then each part scanned from the sum of the parts before it.
  using reduce = cub::BlockReduce<Offset, bin_threads>;
  using scan = cub::BlockScan<Offset, bin_threads>;
  __shared__ union {
    typename reduce::TempStorage reduce;
    typename scan::TempStorage scan;
  } temp;
  const std::size_t total = bins + 1, part = (total + gridDim.x - 1) / gridDim.x;
  const std::size_t begin = std::size_t(blockIdx.x) * part < total ? std::size_t(blockIdx.x) * part : total;
  const std::size_t end = total - begin < part ? total : begin + part;
  Offset mine = Offset(0);
  for (std::size_t b = begin + threadIdx.x; b < end; b += bin_threads) mine += offsets[b];
  const Offset part_sum = reduce(temp.reduce).Sum(mine);
  if (threadIdx.x == 0) partials[blockIdx.x] = part_sum;
  grid.sync();
  Offset below = Offset(0);
  for (unsigned p = threadIdx.x; p < blockIdx.x; p += bin_threads) below += partials[p];
  __syncthreads();  // temp is free again
  Offset carry = reduce(temp.reduce).Sum(below);
  __shared__ Offset carried;
  if (threadIdx.x == 0) carried = carry;
  __syncthreads();
  carry = carried;
  for (std::size_t base = begin; base < end; base += bin_threads) {
    const std::size_t b = base + threadIdx.x;
    const Offset count = b < end ? offsets[b] : Offset(0);
    Offset before = Offset(0), tile_sum = Offset(0);
    __syncthreads();  // temp is free again
    scan(temp.scan).ExclusiveSum(count, before, tile_sum);
    if (b < end) offsets[b] = carry + before;
    carry += tile_sum;
  }
}

// The blocks of each kernel: one wave of each (the second must be one, to be cooperative).
struct bin_grids {
  unsigned sorted, unsorted;
};

template <class K, class T, class Key, class Offset>
bin_grids bin_grids_for(std::size_t n) {
  constexpr auto sorted = sorted_bins_kernel<K, T, Key, Offset>;
  constexpr auto unsorted = unsorted_bins_kernel<K, T, Key, Offset>;
  const int device = current_device();
  const std::size_t tiles = (n + bin_tile - 1) / bin_tile;
  // Cooperative: every block resident at once, so exactly one wave.
  const unsigned wave =
      unsigned(multiprocessor_count(device)) * unsigned(resident_blocks<unsorted>(device, bin_threads));
  return {one_wave_grid<sorted>(bin_threads, tiles), wave};
}

// The two launches on `stream`, n > 0 elements and bins > 0: `flags` and `partials` are scratch of
// grids.sorted and grids.unsorted elements.
template <class K, class T, class Key, class Offset>
void launch_bins(const soa_view<const T>& view, const Key& key, std::size_t bins, Offset* offsets, bin_grids grids,
                 std::uint32_t* flags, Offset* partials, cudaStream_t stream) {
  sorted_bins_kernel<K, T, Key, Offset><<<grids.sorted, bin_threads, 0, stream>>>(view, key, bins, offsets, flags);
  throw_if_launch_failed("coalesce::bin: the launch of the sorted pass");
  soa_view<const T> v = view;
  Key k = key;
  std::size_t b = bins;
  Offset* o = offsets;
  const std::uint32_t* f = flags;
  unsigned flag_count = grids.sorted;
  Offset* p = partials;
  void* arguments[] = {&v, &k, &b, &o, &f, &flag_count, &p};
  throw_on_error(::cudaLaunchCooperativeKernel(unsorted_bins_kernel<K, T, Key, Offset>, dim3(grids.unsorted),
                                               dim3(bin_threads), arguments, 0, stream),
                 "coalesce::bin: the launch of the unsorted pass");
}

}  // namespace coalesce::detail
