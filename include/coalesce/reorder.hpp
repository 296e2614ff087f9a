// coalesce: reordering a soa_view's elements in every column. gather and scatter permute by an
// index array; sort_by_key orders a device soa_vector by a key of each element, stably (a cell
// index, so that neighbours sit together). Scratch comes from coalesce's pool; everything runs
// asynchronously on the given or the container's stream. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/reorder.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/capture.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/layout_permute.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/permute_checks.hpp>
#  include <coalesce/detail/permute_walk.hpp>
#  include <coalesce/detail/reorder_plan.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/layout_vector.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/soa.hpp>

#  include <cub/device/device_radix_sort.cuh>
#  include <cuda/std/span>
#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>
#  include <type_traits>
#  include <utility>

namespace coalesce {
namespace detail {

// One launch a column, in order (detail/permute_walk.hpp says why), one block per gather_batch *
// permute_threads elements.
template <class T, class Index, std::size_t... L>
void launch_gather_columns(const soa_view<const T>& in, const Index* indices, std::size_t n, const soa_view<T>& out,
                           cudaStream_t stream, const char* what, std::index_sequence<L...>) {
  const unsigned blocks = blocks_for(n, std::size_t(gather_batch) * permute_threads, what);
  throw_if_earlier_error(what);
  ((gather_column_kernel<L, T, Index><<<blocks, permute_threads, 0, stream>>>(in, indices, n, out),
    throw_if_launch_failed(what)),
   ...);
}

// out[i] = in[indices[i]] for i < n. Where T has more columns than its record has sectors, and
// the gather reads at least half the input, a sample of the indices decides on the GPU whether the
// gather is scattered, and a scattered one goes through records (detail/permute_walk.hpp): scratch
// of one record per input element from coalesce's pool, freed in stream order.
template <class T, class Index>
void launch_gather(const soa_view<const T>& in, const Index* indices, std::size_t n, const soa_view<T>& out,
                   cudaStream_t stream, const char* what) {
  if (n == 0) return;
  if constexpr (records_save_sectors_v<T>) {
    if (in.size() >= records_from_elements && 2 * n >= in.size())
      return launch_staged_gather<false>(in, indices, n, out, stream, what);
  }
  launch_gather_columns(in, indices, n, out, stream, what, std::make_index_sequence<leaf_count_v<T>>{});
}

template <class T, class Index, std::size_t... L>
void launch_scatter_columns(const soa_view<const T>& in, const Index* indices, const soa_view<T>& out,
                            cudaStream_t stream, const char* what, std::index_sequence<L...>) {
  const unsigned blocks = blocks_for(in.size(), permute_threads, what);
  throw_if_earlier_error(what);
  ((scatter_column_kernel<L, T, Index><<<blocks, permute_threads, 0, stream>>>(in, indices, out),
    throw_if_launch_failed(what)),
   ...);
}

// Under COALESCE_DEBUG: every column (record, tile) and the indices are memory the GPU reads.
template <class In, class Out, class Index>
void require_device_permutation(const In& in, const Out& out, const Index* indices, std::size_t count,
                                const char* what) {
  require_device_columns(walk_of<In>::columns(in), 1, in.size(), what);
  require_device_columns(walk_of<Out>::columns(out), 1, out.size(), what);
  if (count > 0) require_device_memory(indices, what);
}

// v's elements = the elements at indices[0], ..., indices[v.size() - 1] of v, gathered into scratch
// from coalesce's pool and copied back column by column: v keeps its storage. What a captured sort
// does, since a CUDA graph replays the addresses it recorded: storage that replaced v's would be
// the graph's own memory, which each replay allocates and frees again.
template <class T, class Index, std::size_t... L>
void gather_in_place(const soa_view<T>& v, const Index* indices, cudaStream_t stream, const char* what,
                     std::index_sequence<L...> leaves) {
  const std::size_t n = v.size();
  const auto offsets = column_offsets<T>(n, leaves);
  const owned_bytes<pool_resource> scratch(pool_resource(stream), offsets[sizeof...(L)], allocation_alignment);
  auto* const base = static_cast<unsigned char*>(scratch.get());
  const soa_view<T> gathered(typename soa_view<T>::column_pointers{{(base + offsets[L])...}}, n);
  launch_gather(soa_view<const T>(v), indices, n, gathered, stream, what);
  (copy_rows<device_space, device_space>(v.columns()[L], 0, gathered.columns()[L], 0, n * sizeof(leaf_type_t<T, L>), 1,
                                         stream),
   ...);
}  // the scratch is freed in stream order, after the copies that read it

// Sorts the (key, index) pairs of v's elements and gathers every column by the sorted indices into
// new storage, which then takes the old one's place; while v's stream is being captured, into
// scratch that is copied back (gather_in_place). Index is wide enough for every element.
template <class K, class Index, class Vector, class Key>
void sort_by_key_with(Vector& v, const Key& key, int end_bit) {
  using T = typename Vector::value_type;
  constexpr const char* what = "coalesce::sort_by_key";
  const std::size_t n = v.size();
  const cudaStream_t stream = v.stream();
  const unsigned blocks = blocks_for(n, permute_threads, what);
  throw_if_earlier_error(what);
  const bool capturing = stream_is_capturing(stream);  // asked before anything is allocated or enqueued

  // Keys and indices twice over: cub::DoubleBuffer lets the sort alternate between them, so its
  // own scratch holds only its histograms.
  const pool_resource pool(stream);
  const owned_bytes<pool_resource> keys(pool, 2 * n * sizeof(K), allocation_alignment);
  const owned_bytes<pool_resource> indices(pool, 2 * n * sizeof(Index), allocation_alignment);
  K* const key_buffers = static_cast<K*>(keys.get());
  Index* const index_buffers = static_cast<Index*>(indices.get());
  using const_view = typename Vector::const_view_type;
  keys_and_indices_kernel<T, Key, K, Index, const_view>
      <<<blocks, permute_threads, 0, stream>>>(v.const_view(), key, key_buffers, index_buffers);
  throw_if_launch_failed(what);

  cub::DoubleBuffer<K> sorted_keys(key_buffers, key_buffers + n);
  cub::DoubleBuffer<Index> sorted_indices(index_buffers, index_buffers + n);
  std::size_t temp_bytes = 0;
  throw_on_error(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, sorted_keys, sorted_indices,
                                                 count_as<Index>(n, what), 0, end_bit, stream),
                 "coalesce::sort_by_key: cub::DeviceRadixSort::SortPairs (sizing)");
  const owned_bytes<pool_resource> temp(pool, temp_bytes, allocation_alignment);
  throw_on_error(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, sorted_keys, sorted_indices,
                                                 count_as<Index>(n, what), 0, end_bit, stream),
                 "coalesce::sort_by_key: cub::DeviceRadixSort::SortPairs");

  if (capturing) {
    // Twice the gather's bytes (the copy back reads and writes every column once more), where new
    // storage would be memory of the graph's, gone after each replay.
    const auto* order = static_cast<const Index*>(sorted_indices.Current());
    if constexpr (is_soa_view_v<const_view>)
      gather_in_place(v.view(), order, stream, what, std::make_index_sequence<leaf_count_v<T>>{});
    else gather_in_place(v.view(), order, stream, what);
    return;
  }
  Vector sorted(v.resource());
  sorted.resize_for_overwrite(n);
  const auto* order = static_cast<const Index*>(sorted_indices.Current());
  if constexpr (is_soa_view_v<const_view>) launch_gather(v.const_view(), order, n, sorted.view(), stream, what);
  else launch_gather_elements(v.const_view(), order, n, sorted.view(), stream, what);
  v.swap(sorted);  // the old columns are freed in stream order, after the gather that reads them
}

// sort_by_key's checks and its choice of index width, for a soa_vector or a layout_vector.
template <class T, class Space, class Vector, class Key>
void sort_vector_by_key(Vector& v, const Key& key, int end_bit) {
  static_assert(std::is_same_v<Space, device_space>,
                "coalesce::sort_by_key: the vector is in host_space; sort a host vector's elements with std::sort "
                "or std::stable_sort on its iterators, or copy it into a device vector");
  if constexpr (std::is_same_v<Space, device_space> && sort_key_ok<T, Key>()) {
    using key_type = std::decay_t<decltype(std::declval<Key&>()(std::declval<soa_reference_t<const T>>()))>;
    const int bits = sort_end_bit<key_type>(end_bit, "coalesce::sort_by_key");
    if (v.size() <= 1) return;
    if (permutation_fits_32_bits(v.size()))  // 32-bit indices and count: n <= 2^32 - 1
      sort_by_key_with<key_type, std::uint32_t>(v, key, bits);
    else sort_by_key_with<key_type, std::uint64_t>(v, key, bits);
  }
}

}  // namespace detail

/// out[i] = view[indices[i]] for every i < indices.size(), in every column: `view` and `out` are
/// soa_views of device memory with the same element type (out of indices.size() elements, not
/// overlapping view), `indices` a cuda::std::span of unsigned 32- or 64-bit integers in device
/// memory, each < view.size(). An index out of range traps with a message under COALESCE_DEBUG
/// and is undefined behaviour otherwise. One thread per output element reads its index once and
/// every column of that element: the writes are coalesced, the reads as scattered as the
/// permutation. Asynchronous on `stream`. Throws std::invalid_argument if out has another size,
/// coalesce::cuda_error if the launch fails.
template <class View, class Index, std::size_t Extent, class OutView>
void gather(View view, cuda::std::span<Index, Extent> indices, OutView out, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::gather");
  const auto in_walked = detail::as_walkable(view);
  const auto out_walked = detail::as_walkable(out);
  using in_type = std::remove_const_t<decltype(in_walked)>;
  using out_type = std::remove_const_t<decltype(out_walked)>;
  if constexpr (detail::permute_views_ok<in_type, out_type>() && detail::permute_index_ok<Index>()) {
    constexpr const char* what = "coalesce::gather";
    detail::throw_if_earlier_error(what);  // before the records' allocation
    if (out_walked.size() != indices.size())
      throw std::invalid_argument(std::string(what) + ": the output has " + std::to_string(out_walked.size()) +
                                  " elements and the indices " + std::to_string(indices.size()) + "; they must agree");
    const auto in = detail::as_const_view(in_walked);
    detail::require_device_permutation(in, out_walked, indices.data(), indices.size(), what);
    const auto* index = static_cast<const std::remove_const_t<Index>*>(indices.data());
    if constexpr (detail::is_soa_view_v<in_type> && detail::is_soa_view_v<out_type>)
      detail::launch_gather(in, index, indices.size(), out_walked, stream, what);
    else detail::launch_gather_elements(in, index, indices.size(), out_walked, stream, what);
  }
}

/// out[indices[i]] = view[i] for every i < view.size(), in every column: as gather, with
/// indices.size() == view.size() and each index < out.size(); indices that repeat leave one of
/// their elements, which one unspecified. The reads are coalesced, the writes as scattered as the
/// permutation. An index out of range traps with a message under COALESCE_DEBUG and is undefined
/// behaviour otherwise. Asynchronous on `stream`. Throws std::invalid_argument if the sizes of
/// view and indices differ, coalesce::cuda_error if the launch fails.
template <class View, class Index, std::size_t Extent, class OutView>
void scatter(View view, cuda::std::span<Index, Extent> indices, OutView out, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::scatter");
  const auto in_walked = detail::as_walkable(view);
  const auto out_walked = detail::as_walkable(out);
  using in_type = std::remove_const_t<decltype(in_walked)>;
  using out_type = std::remove_const_t<decltype(out_walked)>;
  if constexpr (detail::permute_views_ok<in_type, out_type>() && detail::permute_index_ok<Index>()) {
    constexpr const char* what = "coalesce::scatter";
    detail::throw_if_earlier_error(what);
    if (in_walked.size() != indices.size())
      throw std::invalid_argument(std::string(what) + ": the input has " + std::to_string(in_walked.size()) +
                                  " elements and the indices " + std::to_string(indices.size()) + "; they must agree");
    const auto in = detail::as_const_view(in_walked);
    detail::require_device_permutation(in, out_walked, indices.data(), indices.size(), what);
    if (in.size() == 0) return;
    using element = typename out_type::element_type;
    const auto* index = static_cast<const std::remove_const_t<Index>*>(indices.data());
    if constexpr (detail::is_soa_view_v<in_type> && detail::is_soa_view_v<out_type>)
      detail::launch_scatter_columns(in, index, out_walked, stream, what,
                                     std::make_index_sequence<detail::leaf_count_v<element>>{});
    else detail::launch_scatter_elements(in, index, out_walked, stream, what);
  }
}

/// The same between device soa_vectors, on the output's stream.
template <class T, class R1, class Index, std::size_t Extent, class R2>
void gather(const soa_vector<T, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
            soa_vector<T, device_space, R2>& out) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::gather");
  gather(v.const_view(), indices, out.view(), out.stream());
}
/// scatter between device soa_vectors, on the output's stream.
template <class T, class R1, class Index, std::size_t Extent, class R2>
void scatter(const soa_vector<T, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
             soa_vector<T, device_space, R2>& out) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::scatter");
  scatter(v.const_view(), indices, out.view(), out.stream());
}

/// Orders the elements of `v` (a device soa_vector) by key(element), stably: elements with equal
/// keys keep their order. key receives what for_each's f receives for a read-only element (the
/// const named-field proxy) and returns an unsigned 32- or 64-bit integer; the host must see that
/// type (a function object, a __host__ __device__ lambda, a __device__ lambda with `-> K`, or
/// cuda::proclaim_return_type<K>). The sort looks at bits [0, end_bit) of the keys: all of the key
/// type's unless end_bit says fewer (a key below 2^20 sorts in 3 passes of 8 bits instead of 4).
///
/// The keys and the elements' indices are written once, sorted as pairs by
/// cub::DeviceRadixSort::SortPairs (scratch from coalesce's pool), and every column is gathered by
/// the sorted indices into new storage from v's resource, which replaces v's (for a moment both
/// are held). Asynchronous on v's stream; iterators and views of v are invalidated.
///
/// While v's stream is being captured into a CUDA graph, the columns are gathered into scratch
/// from coalesce's pool instead and copied back: v keeps its storage, views of it stay valid, and
/// each replay sorts the v.size() elements (as many as at the capture) that v holds at that replay.
/// The scratch is the graph's memory, allocated and freed by each replay; the copy back moves the
/// columns' bytes once more. Throws std::invalid_argument for an end_bit outside [1, bits of the
/// key], coalesce::cuda_error if a launch or the sort fails.
template <class T, class Space, class Resource, class Key>
void sort_by_key(soa_vector<T, Space, Resource>& v, Key key, int end_bit = -1) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::sort_by_key");
  detail::sort_vector_by_key<T, Space>(v, key, end_bit);
}
/// The same on a device layout_vector (records or tiles): the sorted pairs' indices gather every
/// element into new storage, a record's words or a leaf at a time; under a capture, into scratch
/// copied back. On records, each element is read once where it lies, as one run of sizeof(T)
/// bytes, and written once in order.
template <class T, class Layout, class Space, class Resource, class Key>
void sort_by_key(layout_vector<T, Layout, Space, Resource>& v, Key key, int end_bit = -1) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::sort_by_key");
  detail::sort_vector_by_key<T, Space>(v, key, end_bit);
}

/// gather between two device layout_vectors (records or tiles), on the output's stream.
template <class T, class L1, class R1, class Index, std::size_t Extent, class L2, class R2>
void gather(const layout_vector<T, L1, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
            layout_vector<T, L2, device_space, R2>& out) {
  gather(v.const_view(), indices, out.view(), out.stream());
}
/// gather from a device soa_vector into a device layout_vector, on the output's stream.
template <class T, class R1, class Index, std::size_t Extent, class L2, class R2>
void gather(const soa_vector<T, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
            layout_vector<T, L2, device_space, R2>& out) {
  gather(v.const_view(), indices, out.view(), out.stream());
}
/// gather from a device layout_vector into a device soa_vector, on the output's stream.
template <class T, class L1, class R1, class Index, std::size_t Extent, class R2>
void gather(const layout_vector<T, L1, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
            soa_vector<T, device_space, R2>& out) {
  gather(v.const_view(), indices, out.view(), out.stream());
}
/// scatter between two device layout_vectors (records or tiles), on the output's stream.
template <class T, class L1, class R1, class Index, std::size_t Extent, class L2, class R2>
void scatter(const layout_vector<T, L1, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
             layout_vector<T, L2, device_space, R2>& out) {
  scatter(v.const_view(), indices, out.view(), out.stream());
}
/// scatter from a device soa_vector into a device layout_vector, on the output's stream.
template <class T, class R1, class Index, std::size_t Extent, class L2, class R2>
void scatter(const soa_vector<T, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
             layout_vector<T, L2, device_space, R2>& out) {
  scatter(v.const_view(), indices, out.view(), out.stream());
}
/// scatter from a device layout_vector into a device soa_vector, on the output's stream.
template <class T, class L1, class R1, class Index, std::size_t Extent, class R2>
void scatter(const layout_vector<T, L1, device_space, R1>& v, cuda::std::span<Index, Extent> indices,
             soa_vector<T, device_space, R2>& out) {
  scatter(v.const_view(), indices, out.view(), out.stream());
}

}  // namespace coalesce

#endif  // __CUDACC__
