// coalesce::detail: gather and scatter where a side is a layout_view (records or tiles), and the
// in-place gather of sort_by_key on a layout_vector. A record side moves each record whole, as
// 16-, 8- or 4-byte words (what its size and the block's alignment allow; read-only loads on the
// input), so a scattered record costs the sectors its bytes span and no more; a tile or column
// side moves a leaf at a time, a warp's writes one run per leaf. A scattered gather from tiles, a
// split or columns first stages the input as records, as soa's gather does. Users never include
// this header.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/detail/layout_copies.hpp>
#include <coalesce/detail/permute_walk.hpp>
#include <coalesce/detail/reorder_plan.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/detail/view_walks.hpp>
#include <coalesce/error.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace coalesce::detail {

// The word a record of T moves in: the widest access (16 bytes at most) that divides its size.
template <class T>
inline constexpr std::size_t record_word = access_alignment(sizeof(T)) > alignof(T) ? access_alignment(sizeof(T))
                                                                                    : alignof(T);

// Whether a view's elements move as whole records of words: a view of records whose start is
// aligned to the word (a container's is; a view built on other memory may not be).
template <class View>
bool moves_records(const View& v) {
  if constexpr (is_record_view_v<View>) {
    using T = typename View::value_type;
    return reinterpret_cast<std::uintptr_t>(v.data()) % record_word<T> == 0;
  } else {
    (void)v;
    return false;
  }
}

// Views of a layout::split whose cold leaves are records: each element's cold record moves whole,
// in words (a leaf at a time, a warp's stores would each write a few bytes of 32 records, and
// every sector would be written in parts).
template <class View>
inline constexpr bool is_split_records_view_v = false;
template <class T, class Hot, class Space>
inline constexpr bool is_split_records_view_v<layout_view<T, layout::split<Hot, layout::aos>, Space>> =
    layout_map<std::remove_const_t<T>, layout::split<Hot, layout::aos>>::group_bytes > 0;

// The word a split's cold record moves in: the widest access (16 bytes at most) that divides its
// size, which also divides its address (the cold part starts 256-byte aligned).
template <std::size_t Bytes>
inline constexpr std::size_t cold_word = Bytes % 16 == 0  ? 16
                                         : Bytes % 8 == 0 ? 8
                                         : Bytes % 4 == 0 ? 4
                                         : Bytes % 2 == 0 ? 2
                                                          : 1;
template <std::size_t Bytes>
struct cold_image {
  unsigned char bytes[Bytes];
};

template <class View, class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void read_split(const View& from, std::size_t i, T& v, std::index_sequence<L...>) {
  using map = layout_map<T, typename View::layout_type>;
  using image = word_image<map::group_bytes, cold_word<map::group_bytes>>;
  const auto* record = map::cold_record(from.block(), from.first() + i, from.stride());
  const image words = load_chunk<true>(reinterpret_cast<const image*>(record));
  cold_image<map::group_bytes> cold;
  std::memcpy(cold.bytes, &words, map::group_bytes);
  ((map::table.hot[L]
        ? (void)(struct_leaf<L>(v) = *from.template leaf_pointer<L>(i))
        : (void)std::memcpy(&struct_leaf<L>(v), cold.bytes + map::template cold_offset<L>, sizeof(leaf_type_t<T, L>))),
   ...);
}
template <class View, class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void write_split(const View& to, std::size_t i, const T& v,
                                                      std::index_sequence<L...>) {
  using map = layout_map<T, typename View::layout_type>;
  cold_image<map::group_bytes> cold{};  // padding written as zero bytes
  ((map::table.hot[L]
        ? (void)(*to.template leaf_pointer<L>(i) = struct_leaf<L>(v))
        : (void)std::memcpy(cold.bytes + map::template cold_offset<L>, &struct_leaf<L>(v), sizeof(leaf_type_t<T, L>))),
   ...);
  using image = word_image<map::group_bytes, cold_word<map::group_bytes>>;
  image words;
  std::memcpy(&words, cold.bytes, map::group_bytes);
  store_chunk(reinterpret_cast<image*>(map::cold_record(to.block(), to.first() + i, to.stride())), words);
}

// Element i of `from`: a record's words (non-coherent loads: the input is never written while a
// gather runs), or a leaf at a time (also where Records is asked of a view of another layout: the
// launch below never runs that instantiation).
template <bool Records, class View, class T = typename View::value_type>
COALESCE_DEVICE COALESCE_FORCEINLINE T read_element(const View& from, std::size_t i) {
  T v;
  if constexpr (Records && is_record_view_v<View>) {
    const auto words =
        load_chunk<true>(reinterpret_cast<const word_image<sizeof(T), record_word<T>>*>(from.data() + i));
    std::memcpy(&v, &words, sizeof(T));
  } else if constexpr (is_split_records_view_v<View>) {
    read_split(from, i, v, std::make_index_sequence<leaf_count_v<T>>{});
  } else {
    load_element(from, i, v);
  }
  return v;
}
template <bool Records, class View, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void write_element(const View& to, std::size_t i, const T& v) {
  if constexpr (Records && is_record_view_v<View>) {
    store_words<record_word<T>>(to.data() + i, v);
  } else if constexpr (is_split_records_view_v<View>) {
    write_split(to, i, v, std::make_index_sequence<leaf_count_v<T>>{});
  } else {
    store_element(to, i, v);
  }
}

// out[i] = in[indices[i]] for i < n, Batch elements a thread in flight.
template <bool InRecords, bool OutRecords, unsigned Batch = gather_batch, class In, class Out, class Index>
__global__ void __launch_bounds__(permute_threads)
    gather_elements_kernel(In in, const Index* indices, std::size_t n, Out out) {
  for_each_batch<Batch>(
      n,
      [&](std::size_t, std::size_t from) {
        COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
        return read_element<InRecords>(in, from);
      },
      indices, [&](std::size_t i, const auto& v) { write_element<OutRecords>(out, i, v); });
}

// out[indices[i]] = in[i] for i < in.size().
template <bool InRecords, bool OutRecords, class In, class Out, class Index>
__global__ void __launch_bounds__(permute_threads) scatter_elements_kernel(In in, const Index* indices, Out out) {
  const std::size_t i = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  if (i >= in.size()) return;
  const std::size_t to = indices[i];
  COALESCE_ASSERT(to < out.size(), "coalesce::scatter: an index is outside the output view");
  write_element<OutRecords>(out, to, read_element<InRecords>(in, i));
}

// Launches Kernel<in records?, out records?> as the views allow.
template <template <bool, bool> class Kernel, class In, class Out, class... Args>
void launch_by_records(const In& in, const Out& out, cudaStream_t stream, const char* what, const Args&... args) {
  // Only the instantiations a view of records can ask for are compiled.
  constexpr bool in_can = is_record_view_v<In>, out_can = is_record_view_v<Out>;
  const bool in_records = moves_records(in), out_records = moves_records(out);
  throw_if_earlier_error(what);
  bool launched = false;
  if constexpr (in_can && out_can) {
    if (in_records && out_records) Kernel<true, true>::template launch<In, Out>(stream, what, args...);
    launched = in_records && out_records;
  }
  if constexpr (in_can) {
    if (!launched && in_records) Kernel<true, false>::template launch<In, Out>(stream, what, args...);
    launched = launched || in_records;
  }
  if constexpr (out_can) {
    if (!launched && out_records) Kernel<false, true>::template launch<In, Out>(stream, what, args...);
    launched = launched || out_records;
  }
  if (!launched) Kernel<false, false>::template launch<In, Out>(stream, what, args...);
  throw_if_launch_failed(what);
}
template <bool InRecords, bool OutRecords>
struct gather_launch {
  template <class In, class Out, class Index>
  static void launch(cudaStream_t stream, const char* what, const In& in, const Index* indices, std::size_t n,
                     const Out& out) {
    // From records, one element a thread: a record's words are already several loads in flight,
    // and measured on an NVIDIA H200 (CUDA 13.0, bench/experiments/record_gather.cu: 32 M 24-byte
    // particles, records to records) 1 a thread took 1.182 ms against 1.209 ms at gather_batch
    // (docs/bench/layouts-h200/record_gather.txt). Columns and tiles keep gather_batch.
    constexpr unsigned batch = InRecords ? 1u : gather_batch;
    const unsigned blocks = blocks_for(n, std::size_t(batch) * permute_threads, what);
    gather_elements_kernel<InRecords, OutRecords, batch><<<blocks, permute_threads, 0, stream>>>(in, indices, n, out);
  }
};
template <bool InRecords, bool OutRecords>
struct scatter_launch {
  template <class In, class Out, class Index>
  static void launch(cudaStream_t stream, const char* what, const In& in, const Index* indices, const Out& out) {
    const unsigned blocks = blocks_for(in.size(), permute_threads, what);
    scatter_elements_kernel<InRecords, OutRecords><<<blocks, permute_threads, 0, stream>>>(in, indices, out);
  }
};

// The sectors a read of one element of View at a random index touches: one per leaf for columns
// and tiles; for a split with records, one per hot leaf and the cold record's.
template <class View>
inline constexpr std::size_t scattered_sectors_v = leaf_count_v<std::remove_const_t<typename View::value_type>>;
template <class T, class Hot, class Space>
inline constexpr std::size_t scattered_sectors_v<layout_view<T, layout::split<Hot, layout::aos>, Space>> =
    layout_map<std::remove_const_t<T>, layout::split<Hot, layout::aos>>::hot_count +
    (layout_map<std::remove_const_t<T>, layout::split<Hot, layout::aos>>::group_bytes + 31) / 32;

// Whether a scattered gather from In goes faster through records (detail/permute_walk.hpp): a
// record spans fewer sectors than an element of In touches. Never for records themselves.
template <class In>
inline constexpr bool stage_records_for_v =
    !is_record_view_v<In> && record_of<std::remove_const_t<typename In::value_type>>::sectors < scattered_sectors_v<In>;

// The record-staged gather of detail/permute_walk.hpp, for any input and output views: where the
// gather is scattered, records[i] = element i of in; where it is not, the whole gather, each
// element read at its index.
template <bool OutRecords, class In, class Out, class Index, class T = typename Out::value_type>
__global__ void __launch_bounds__(permute_threads)
    stage_or_gather_elements_kernel(In in, record_of<T>* records, const Index* indices, std::size_t n, Out out,
                                    const unsigned* scattered) {
  const std::size_t first = std::size_t(blockIdx.x) * permute_threads + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * permute_threads;
  if (*scattered != 0) {
    for (std::size_t i = first; i < in.size(); i += stride) {
      const T v = read_element<false>(in, i);
      record_of<T> r{};
      std::memcpy(&r, &v, sizeof(T));
      records[i] = r;
    }
  } else {
    for (std::size_t i = first; i < n; i += stride) {
      const std::size_t from = indices[i];
      COALESCE_ASSERT(from < in.size(), "coalesce::gather: an index is outside the input view");
      write_element<OutRecords>(out, i, read_element<false>(in, from));
    }
  }
}
// Where the gather is scattered: element i of out = record indices[i], for i < n.
template <bool OutRecords, class Out, class Index, class T = typename Out::value_type>
__global__ void __launch_bounds__(permute_threads)
    gather_staged_records_kernel(const record_of<T>* records, std::size_t count, const Index* indices, std::size_t n,
                                 Out out, const unsigned* scattered) {
  if (*scattered == 0) return;
  for_each_batch(
      n,
      [&](std::size_t, std::size_t from) {
        COALESCE_ASSERT(from < count, "coalesce::gather: an index is outside the input view");
        return records[from];
      },
      indices,
      [&](std::size_t i, const record_of<T>& r) {
        T v;
        std::memcpy(&v, &r, sizeof(T));
        write_element<OutRecords>(out, i, v);
      });
}
template <bool OutRecords, class In, class Index, class Out>
void launch_staged_gather(const In& in, const Index* indices, std::size_t n, const Out& out, cudaStream_t stream,
                          const char* what) {
  using T = typename Out::value_type;
  const pool_resource pool(stream);
  // The decision in the first record's place, so that the records stay aligned.
  const owned_bytes<pool_resource> scratch(pool, (in.size() + 1) * sizeof(record_of<T>), allocation_alignment);
  auto* const scattered = static_cast<unsigned*>(scratch.get());
  auto* const records =
      reinterpret_cast<record_of<T>*>(static_cast<unsigned char*>(scratch.get()) + sizeof(record_of<T>));
  const unsigned first_blocks = blocks_for(in.size() > n ? in.size() : n, permute_threads, what);
  const unsigned gather_blocks = blocks_for(n, std::size_t(gather_batch) * permute_threads, what);
  throw_if_earlier_error(what);
  decide_scattered_kernel<Index><<<1, decide_threads, 0, stream>>>(indices, n, scattered);
  throw_if_launch_failed(what);
  stage_or_gather_elements_kernel<OutRecords>
      <<<first_blocks, permute_threads, 0, stream>>>(in, records, indices, n, out, scattered);
  throw_if_launch_failed(what);
  gather_staged_records_kernel<OutRecords>
      <<<gather_blocks, permute_threads, 0, stream>>>(records, in.size(), indices, n, out, scattered);
  throw_if_launch_failed(what);
}  // the scratch is freed in stream order, after the kernels that use it

// gather where a side is a layout_view (both soa_views: launch_gather's column or staged-record
// walks instead). An input whose element reads touch more sectors than a record (tiles, a split,
// columns into another layout) goes through records, as launch_gather does for soa_views, where
// the gather reads at least half of a large input.
template <class In, class Index, class Out>
void launch_gather_elements(const In& in, const Index* indices, std::size_t n, const Out& out, cudaStream_t stream,
                            const char* what) {
  if (n == 0) return;
  if constexpr (stage_records_for_v<In>) {
    if (in.size() >= records_from_elements && 2 * n >= in.size()) {
      if constexpr (is_record_view_v<Out>) {
        if (moves_records(out)) return launch_staged_gather<true>(in, indices, n, out, stream, what);
      }
      return launch_staged_gather<false>(in, indices, n, out, stream, what);
    }
  }
  launch_by_records<gather_launch>(in, out, stream, what, in, indices, n, out);
}
template <class In, class Index, class Out>
void launch_scatter_elements(const In& in, const Index* indices, const Out& out, cudaStream_t stream,
                             const char* what) {
  if (in.size() == 0) return;
  launch_by_records<scatter_launch>(in, out, stream, what, in, indices, out);
}

// v's elements = those at indices[0], ..., indices[v.size() - 1], gathered into scratch from
// coalesce's pool and copied back: v keeps its storage (sort_by_key under a CUDA graph capture).
template <class T, class Layout, class Index>
void gather_in_place(const layout_view<T, Layout>& v, const Index* indices, cudaStream_t stream, const char* what) {
  const std::size_t n = v.size();
  using map = layout_map<T, Layout>;
  const owned_bytes<pool_resource> scratch(pool_resource(stream), map::bytes(n), allocation_alignment);
  const std::size_t stride = is_split<Layout>::value ? round_up_to(n, 256) : 0;  // the scratch's columns
  const layout_view<T, Layout> gathered(static_cast<unsigned char*>(scratch.get()), n, 0, stride);
  launch_gather_elements(layout_view<const T, Layout>(v), indices, n, gathered, stream, what);
  // v is a whole vector's view (first() == 0): the scratch's first n elements are its layout's.
  copy_layout_prefix<T, device_space, device_space>(Layout{}, v.block(), v.stride(), gathered.block(), stride, n,
                                                    stream);
}  // the scratch is freed in stream order, after the copies that read it

}  // namespace coalesce::detail
