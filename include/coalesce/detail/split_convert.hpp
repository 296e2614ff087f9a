// coalesce::detail: columns into a layout::split whose cold part is records (Cold = layout::aos),
// for coalesce::convert. transform's chunk walk writes such a split one leaf at a time, and a
// warp's store of one cold leaf of 32 consecutive elements then lands in 32 records: on an NVIDIA
// H200, soa -> split of 48-byte bodies (6 hot floats, a 24-byte cold record) ran at 0.476 of
// cudaMemcpy, 20.6 sectors a store request. Here a block takes a chunk of elements, writes their
// hot leaves straight into the hot columns (a warp 32 consecutive elements of a leaf) and
// assembles their cold records in shared memory, then copies the chunk's records out in 16-byte
// words (block_copy), as soa_to_aos_kernel does for whole records. Users never include this
// header; <coalesce/convert.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/block_copy.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/split_map.hpp>
#include <coalesce/detail/value_pack.hpp>
#include <coalesce/error.hpp>
#include <coalesce/layout.hpp>
#include <coalesce/layout_view.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

inline constexpr unsigned split_convert_threads = 256;

// Elements a block stages at once: 256, or fewer where their records would take more than 24 KiB,
// a multiple of the fewest elements whose records are a multiple of 16 bytes (so that every
// chunk's records start where the first chunk's do modulo 16, and one staging offset serves all).
template <std::size_t GroupBytes>
inline constexpr std::size_t split_convert_step = GroupBytes % 16 == 0  ? 1
                                                  : GroupBytes % 8 == 0 ? 2
                                                  : GroupBytes % 4 == 0 ? 4
                                                  : GroupBytes % 2 == 0 ? 8
                                                                        : 16;
template <std::size_t GroupBytes>
inline constexpr std::size_t split_convert_chunk = (GroupBytes * 256 <= 24576 ? 256 : 24576 / GroupBytes) /
                                                   split_convert_step<GroupBytes> * split_convert_step<GroupBytes>;

// Whether convert moves columns into View this way: a writable layout_view of device memory of a
// split whose cold records have no bytes that no leaf holds (with gaps, whole-record copies would
// write bytes convert promises not to touch: those keep the chunk walk), and that fit the stage.
template <class View>
inline constexpr bool stages_split_records_v = false;
template <class T, class Hot>
inline constexpr bool stages_split_records_v<layout_view<T, layout::split<Hot, layout::aos>, device_space>> =
    !layout_map<T, layout::split<Hot, layout::aos>>::has_gaps &&
    split_convert_chunk<layout_map<T, layout::split<Hot, layout::aos>>::group_bytes> > 0;

// Element i's leaves from `from`: the hot ones into to's columns, the cold ones into its record
// in the stage. Every leaf is loaded before any is stored: the compiler cannot tell that the
// stores miss `from`'s columns, so loads between them would wait on each other, and a thread
// would have one load in flight instead of one a leaf (soa -> split of 48-byte bodies ran at
// 0.943 of cudaMemcpy on an NVIDIA H100 that way).
template <class Map, class From, class To, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void split_leaves(const From& from, const To& to, std::size_t i,
                                                       unsigned char* record, std::index_sequence<L...>) {
  const auto values = make_pack(std::remove_cv_t<std::remove_reference_t<decltype(*from.template leaf_pointer<L>(i))>>(
      *from.template leaf_pointer<L>(i))...);
  const auto one = [&](auto leaf) {
    constexpr std::size_t l = decltype(leaf)::value;
    const auto& value = slot<l>(values);
    if constexpr (Map::table.hot[l]) {
      *to.template leaf_pointer<l>(i) = value;
    } else {
      using type = std::remove_cv_t<std::remove_reference_t<decltype(value)>>;
      *reinterpret_cast<type*>(record + Map::template cold_offset<l>) = value;
    }
  };
  (one(std::integral_constant<std::size_t, L>{}), ...);
}

// Aligned16: the records of `to` start 16-byte aligned (the launch checks); otherwise the stage
// starts at their address modulo 16 (staging_offset).
template <class T, class Hot, bool Aligned16, class From>
__global__ void __launch_bounds__(split_convert_threads)
    columns_to_split_records_kernel(From from, layout_view<T, layout::split<Hot, layout::aos>> to) {
  using map = layout_map<T, layout::split<Hot, layout::aos>>;
  constexpr std::size_t group = map::group_bytes, chunk = split_convert_chunk<group>;
  __shared__ __align__(16) unsigned char staging[chunk * group + 15];
  unsigned char* const records = map::cold_record(to.block(), to.first(), to.stride());  // element 0's
  unsigned char* const stage = staging + (Aligned16 ? 0 : staging_offset(records));
  const std::size_t n = to.size();
  for (std::size_t first = std::size_t(blockIdx.x) * chunk; first < n; first += std::size_t(gridDim.x) * chunk) {
    const std::size_t count = n - first < chunk ? n - first : chunk;
    for (unsigned e = threadIdx.x; e < count; e += blockDim.x)
      split_leaves<map>(from, to, first + e, stage + std::size_t(e) * group,
                        std::make_index_sequence<leaf_count_v<T>>{});
    __syncthreads();
    block_copy<split_convert_threads, chunk * group, Aligned16>(records + first * group, stage, count * group);
    __syncthreads();  // the next chunk overwrites the stage
  }
}

// to[i] = from[i] for every element: from a read-only view of columns (soa_view<const T>) or any
// view with leaf_pointer<L>(i), into a split that stages_split_records_v takes.
template <class From, class T, class Hot>
void copy_columns_to_split_records(const From& from, const layout_view<T, layout::split<Hot, layout::aos>>& to,
                                   cudaStream_t stream, const char* what) {
  using map = layout_map<T, layout::split<Hot, layout::aos>>;
  constexpr std::size_t chunk = split_convert_chunk<map::group_bytes>;
  throw_if_earlier_error(what);
  const unsigned grid = grid_for_all((to.size() + chunk - 1) / chunk);
  const bool aligned =
      reinterpret_cast<std::uintptr_t>(map::cold_record(to.block(), to.first(), to.stride())) % 16 == 0;
  if (aligned) columns_to_split_records_kernel<T, Hot, true><<<grid, split_convert_threads, 0, stream>>>(from, to);
  else columns_to_split_records_kernel<T, Hot, false><<<grid, split_convert_threads, 0, stream>>>(from, to);
  throw_if_launch_failed(what);
}

}  // namespace coalesce::detail
