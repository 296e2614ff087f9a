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
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>

namespace coalesce::detail {

inline constexpr unsigned permute_threads = 256;

// Column L of out at i = column L of in at indices[i], for i < n. Under COALESCE_DEBUG an index
// outside `in` traps with a message; otherwise it is undefined behaviour.
template <std::size_t L, class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_column_kernel(soa_view<const T> in, const Index* indices, std::size_t n, soa_view<T> out) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= n) return;
  const std::size_t from = indices[i];
  COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
  out.template leaf_column<L>()[i] = in.template leaf_column<L>()[from];
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
