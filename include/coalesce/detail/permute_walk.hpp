// coalesce::detail: the kernels behind gather, scatter and sort_by_key. Users never include this
// header. Needs a CUDA compiler.
//
// Permutations go one column at a time, one element per thread: each launch reads the indices
// once more (4 or 8 bytes an element, coalesced) and touches one sector per element on its
// scattered side (gather's reads, scatter's writes), but that side then lies in one column, of
// which the 60 MB L2 of an H200 holds a good part, not in all of them at once. Measured on an
// NVIDIA H200, CUDA 13.0, 32 M particles of six float columns: all columns per thread (each index
// read once) took 5.49 ms, and thrust::gather one column after another 4.55 ms, with about the
// same DRAM bytes (docs/bench/reductions-stencils-reorder). The side that follows the thread
// order is coalesced, a warp's 32 neighbouring elements.
//
// A scattered gather of an element with more columns than its bytes fill sectors goes through
// records instead: one coalesced pass writes every element's leaves side by side (padded to 16 or
// 32 bytes, or to whole sectors), and the gather then reads one record per element - one sector
// for a particle of six floats, where the columns cost six. Whether the permutation is scattered
// is decided on the GPU from a sample of its indices (decide_scattered_kernel), so the choice costs
// no wait on the host. Two kernels follow the decision (launch_staged_gather, in
// detail/layout_permute.hpp, for every kind of view): the first stages the records, or where the
// gather is not scattered does the whole gather, each element's columns read at its index (the
// index read once: a permutation that is not scattered reads its columns' sectors nearly in order
// anyway); the second gathers the records, or returns at once. Each runs one block per 256 or 1024
// elements: striding over one wave of blocks instead measured slower on an H200.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/soa_view.hpp>

#include <cub/block/block_reduce.cuh>

#include <cstddef>
#include <cstring>

namespace coalesce::detail {

inline constexpr unsigned permute_threads = 256;

// The scattered side of a gather is latency-bound: each element's read waits for its index's.
// So each thread takes gather_batch elements a round, gather_batch * permute_threads apart: all
// their indices loaded, then all their reads, then all their stores, so that gather_batch reads
// are in flight per thread instead of one. Rounds stride over n in whatever grid is launched.
inline constexpr unsigned gather_batch = 4;

template <unsigned Batch = gather_batch, class Index, class Read, class Write>
COALESCE_DEVICE COALESCE_FORCEINLINE void for_each_batch(std::size_t n, const Read& read, const Index* indices,
                                                         const Write& write) {
  using value = decltype(read(std::size_t{}, std::size_t{}));
  constexpr std::size_t round = std::size_t(Batch) * permute_threads;
  for (std::size_t first = std::size_t(blockIdx.x) * round + threadIdx.x; first < n;
       first += std::size_t(gridDim.x) * round) {
    std::size_t from[Batch];
#pragma unroll
    for (unsigned k = 0; k < Batch; ++k) {
      const std::size_t i = first + k * permute_threads;
      from[k] = i < n ? std::size_t(indices[i]) : 0;
    }
    value got[Batch];
#pragma unroll
    for (unsigned k = 0; k < Batch; ++k)
      if (first + k * permute_threads < n) got[k] = read(first + k * permute_threads, from[k]);
#pragma unroll
    for (unsigned k = 0; k < Batch; ++k)
      if (first + k * permute_threads < n) write(first + k * permute_threads, got[k]);
  }
}

// Below this many input elements the columns stay in L2, and records save nothing.
inline constexpr std::size_t records_from_elements = std::size_t(1) << 18;

// An element's leaves side by side in whole 16-byte words: 16 or 32 bytes, or whole sectors, so
// that a record never spans more sectors than its bytes need.
template <class T>
struct alignas(16) record_of {
  static constexpr std::size_t bytes = sizeof(T) <= 16 ? 16 : sizeof(T) <= 32 ? 32 : (sizeof(T) + 31) / 32 * 32;
  static constexpr std::size_t sectors = (bytes + 31) / 32;
  uint4 words[bytes / 16];
};

// Whether records save sectors for T: a record spans fewer sectors than T has columns.
template <class T>
inline constexpr bool records_save_sectors_v = record_of<T>::sectors < leaf_count_v<T>;

// A gather of n elements is scattered when more than one in eight of its consecutive indices lie
// a sector's worth of elements apart or more: then most of a column gather's sectors are read for
// one element. Random permutations have nearly every step a jump, nearly sorted ones few, so a
// sample tells them apart: jump_samples pairs at positions spread over the indices by a Weyl
// sequence (the golden ratio's fractional multiples), which no periodic layout of the indices
// keeps landing on the same phase of.
inline constexpr unsigned decide_threads = 1024;
inline constexpr unsigned jump_samples = 2 * decide_threads;

// *scattered = 1 where the gather of n elements by `indices` is scattered, else 0. One block.
template <class Index>
__global__ void __launch_bounds__(decide_threads)
    decide_scattered_kernel(const Index* indices, std::size_t n, unsigned* scattered) {
  constexpr unsigned per_thread = jump_samples / decide_threads;
  const std::size_t pairs = n < 2 ? 0 : n - 1;
  const unsigned samples = pairs < jump_samples ? unsigned(pairs) : jump_samples;
  // Every sample's two indices loaded before any is compared, so that their reads are in flight
  // together: a sample past the last is read at the first pair and not counted (and with fewer
  // than two indices, the only one twice).
  Index a[per_thread], b[per_thread];
#pragma unroll
  for (unsigned r = 0; r < per_thread; ++r) {
    const unsigned k = r * decide_threads + threadIdx.x;
    // The sample's position: k's multiple of the golden ratio, as a fraction of the pairs.
    const std::size_t i = k >= samples       ? 0
                          : samples == pairs ? k
                                             : std::size_t(__umul64hi((k + 1ull) * 0x9E3779B97F4A7C15ull, pairs));
    a[r] = indices[i];
    b[r] = indices[pairs == 0 ? i : i + 1];
  }
  unsigned count = 0;
#pragma unroll
  for (unsigned r = 0; r < per_thread; ++r)
    count += r * decide_threads + threadIdx.x < samples && (a[r] > b[r] ? a[r] - b[r] : b[r] - a[r]) >= 8 ? 1u : 0u;
  using block_sum = cub::BlockReduce<unsigned, decide_threads>;
  __shared__ typename block_sum::TempStorage temp;
  const unsigned total = block_sum(temp).Sum(count);  // valid in thread 0
  if (threadIdx.x == 0) *scattered = total > samples / 8 ? 1u : 0u;
}

// Column L of out at i = column L of in at indices[i], for i < n. Under COALESCE_DEBUG an index
// outside `in` traps with a message; otherwise it is undefined behaviour.
template <std::size_t L, class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_column_kernel(soa_view<const T> in, const Index* indices, std::size_t n, soa_view<T> out) {
  for_each_batch(
      n,
      [&](std::size_t, std::size_t from) {
        COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
        return in.template leaf_column<L>()[from];
      },
      indices, [&](std::size_t i, const auto& value) { out.template leaf_column<L>()[i] = value; });
}

// Column L of out at indices[i] = column L of in at i, for i < in.size(). Under COALESCE_DEBUG an
// index outside `out` traps with a message; otherwise it is undefined behaviour.
template <std::size_t L, class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    scatter_column_kernel(soa_view<const T> in, const Index* indices, soa_view<T> out) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= in.size()) return;
  const std::size_t to = indices[i];
  COALESCE_ASSERT(to < out.size(), "coalesce::scatter: an index is outside the output view");
  out.template leaf_column<L>()[to] = in.template leaf_column<L>()[i];
}

// keys[i] = key(in[i]) and indices[i] = i: the pairs a radix sort orders. The load of a column the
// key never reads is dead and dropped: a cell key of x, y and z reads three columns.
template <class T, class KeyOf, class K, class Index, class View = soa_view<const T>>
__global__ void __launch_bounds__(permute_threads)
    keys_and_indices_kernel(View in, KeyOf key, K* keys, Index* indices) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= in.size()) return;
  T v;
  load_element(in, i, v);
  keys[i] = static_cast<K>(key(element_proxy(v)));
  indices[i] = static_cast<Index>(i);
}

}  // namespace coalesce::detail
