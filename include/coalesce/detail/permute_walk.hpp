// coalesce::detail: the kernels behind gather, scatter and sort_by_key. Users never include this
// header. Needs a CUDA compiler.
//
// One element per thread, every column per element: the thread reads its index once and issues
// the loads of all the columns together, so a permutation of B-byte elements reads each index
// once (moving a column at a time would read the indices once per column: for float columns as
// many bytes again as the column itself). The side that follows the thread order (gather's
// writes, scatter's reads) is coalesced, a warp's 32 neighbouring elements per column; the other
// side touches one sector per element and column wherever the permutation scatters neighbours.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>

namespace coalesce::detail {

inline constexpr unsigned permute_threads = 256;

// out[i] = in[indices[i]] for i < n. Under COALESCE_DEBUG an index outside `in` traps with a
// message; otherwise it is undefined behaviour.
template <class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_kernel(soa_view<const T> in, const Index* indices, std::size_t n, soa_view<T> out) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= n) return;
  const std::size_t from = indices[i];
  COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
  T v;
  load_element(in, from, v);
  store_element(out, i, v);
}

// out[indices[i]] = in[i] for i < in.size(). Under COALESCE_DEBUG an index outside `out` traps
// with a message; otherwise it is undefined behaviour.
template <class T, class Index>
__global__ void __launch_bounds__(permute_threads)
    scatter_kernel(soa_view<const T> in, const Index* indices, soa_view<T> out) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= in.size()) return;
  const std::size_t to = indices[i];
  COALESCE_ASSERT(to < out.size(), "coalesce::scatter: an index is outside the output view");
  T v;
  load_element(in, i, v);
  store_element(out, to, v);
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
