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
// is counted on the GPU (count_jumps_kernel), so the choice costs no wait on the host: the record
// kernels and the column kernels are all launched, and the ones not chosen return at once. The
// gathers stride over their elements in one wave of blocks, so that a kernel that returns costs
// one wave, not one block per 256 elements (131072 blocks for 32 M, about 50 us a launch).
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>
#include <cstring>

namespace coalesce::detail {

inline constexpr unsigned permute_threads = 256;

// The scattered side of a gather is latency-bound: each element's read waits for its index's.
// So each thread takes gather_batch elements a round, gather_batch * permute_threads apart: all
// their indices loaded, then all their reads, then all their stores, so that gather_batch reads
// are in flight per thread instead of one. Rounds stride over n in whatever grid is launched.
inline constexpr unsigned gather_batch = 4;

template <class Index, class Read, class Write>
COALESCE_DEVICE COALESCE_FORCEINLINE void for_each_batch(std::size_t n, const Read& read, const Index* indices,
                                                         const Write& write) {
  using value = decltype(read(std::size_t{}, std::size_t{}));
  constexpr std::size_t round = std::size_t(gather_batch) * permute_threads;
  for (std::size_t first = std::size_t(blockIdx.x) * round + threadIdx.x; first < n; first += std::size_t(gridDim.x) * round) {
    std::size_t from[gather_batch];
#pragma unroll
    for (unsigned k = 0; k < gather_batch; ++k) {
      const std::size_t i = first + k * permute_threads;
      from[k] = i < n ? std::size_t(indices[i]) : 0;
    }
    value got[gather_batch];
#pragma unroll
    for (unsigned k = 0; k < gather_batch; ++k)
      if (first + k * permute_threads < n) got[k] = read(first + k * permute_threads, from[k]);
#pragma unroll
    for (unsigned k = 0; k < gather_batch; ++k)
      if (first + k * permute_threads < n) write(first + k * permute_threads, got[k]);
  }
}

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
// a sector's worth of elements apart or more: then most of a column gather's sectors are read
// for one element. Random permutations have nearly every step a jump, nearly sorted ones few.
COALESCE_DEVICE COALESCE_FORCEINLINE bool scattered(const unsigned long long* jumps, std::size_t n) {
  return jumps != nullptr && *jumps > n / 8;
}

// *jumps += the count of i + 1 < n with indices[i + 1] and indices[i] 8 or more elements apart.
template <class Index>
__global__ void __launch_bounds__(permute_threads)
    count_jumps_kernel(const Index* indices, std::size_t n, unsigned long long* jumps) {
  unsigned count = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x; i + 1 < n;
       i += std::size_t(gridDim.x) * permute_threads) {
    const Index a = indices[i], b = indices[i + 1];
    count += (a > b ? a - b : b - a) >= 8 ? 1u : 0u;
  }
  count = __reduce_add_sync(0xffffffffu, count);
  if (threadIdx.x % 32 == 0 && count > 0) atomicAdd(jumps, static_cast<unsigned long long>(count));
}

// records[i] = element i of in, for every i, when the gather of n elements is scattered.
template <class T>
__global__ void __launch_bounds__(permute_threads)
    stage_records_kernel(soa_view<const T> in, record_of<T>* records, const unsigned long long* jumps, std::size_t n) {
  if (!scattered(jumps, n)) return;
  for (std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x; i < in.size();
       i += std::size_t(gridDim.x) * permute_threads) {
    T v;
    load_element(in, i, v);
    record_of<T> r{};
    std::memcpy(&r, &v, sizeof(T));
    records[i] = r;
  }
}

// Element i of out = record indices[i], for i < n, when the gather is scattered. Under
// COALESCE_DEBUG an index outside the records traps with a message.
template <class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_records_kernel(const record_of<T>* records, std::size_t count, const Index* indices, std::size_t n,
                          soa_view<T> out, const unsigned long long* jumps) {
  if (!scattered(jumps, n)) return;
  for_each_batch(n, [&](std::size_t i, std::size_t from) {
    COALESCE_ASSERT(from < count, "coalesce::gather: an index is outside the input view");
    return records[from];
  }, indices, [&](std::size_t i, const record_of<T>& r) {
    T v;
    std::memcpy(&v, &r, sizeof(T));
    store_element(out, i, v);
  });
}

// Column L of out at i = column L of in at indices[i], for i < n, unless `jumps` says the gather
// is scattered and the records do it. Under COALESCE_DEBUG an index outside `in` traps with a
// message; otherwise it is undefined behaviour.
template <std::size_t L, class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_column_kernel(soa_view<const T> in, const Index* indices, std::size_t n, soa_view<T> out,
                         const unsigned long long* jumps) {
  if (scattered(jumps, n)) return;
  for_each_batch(n, [&](std::size_t, std::size_t from) {
    COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
    return in.template leaf_column<L>()[from];
  }, indices, [&](std::size_t i, const auto& value) { out.template leaf_column<L>()[i] = value; });
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
template <class T, class KeyOf, class K, class Index>
__global__ void __launch_bounds__(permute_threads)
    keys_and_indices_kernel(soa_view<const T> in, KeyOf key, K* keys, Index* indices) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= in.size()) return;
  T v;
  load_element(in, i, v);
  keys[i] = static_cast<K>(key(element_proxy(v)));
  indices[i] = static_cast<Index>(i);
}

}  // namespace coalesce::detail
