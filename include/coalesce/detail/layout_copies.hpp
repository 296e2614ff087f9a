// coalesce::detail: the copies and fills of a layout_vector's block of records or tiles, without
// kernels (so they compile with any C++ compiler): the first `count` elements copied between two
// blocks of one layout, and elements [first, last) set to T{}. Users never include this header.
// Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/byte_copies.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/soa_columns.hpp>  // fill_column
#include <coalesce/detail/split_map.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace coalesce::detail {

// Elements [0, count) of a block of records: one copy of their bytes.
// (The strides, a split's column lengths, are unused by the other layouts.)
template <class T, class ToSpace, class FromSpace>
void copy_layout_prefix(layout::aos, unsigned char* to, std::size_t, const unsigned char* from, std::size_t,
                        std::size_t count, cudaStream_t on) {
  copy_rows<ToSpace, FromSpace>(to, 0, from, 0, count * sizeof(T), 1, on);
}

// Elements [0, count) of a block of tiles: the whole tiles in one copy, then, in the last tile,
// each leaf's run of the elements there (its other lanes were never written: not copied, so no
// uninitialized byte is read).
template <class T, class ToSpace, class FromSpace, std::size_t Lanes, std::size_t... L>
void copy_partial_tile(unsigned char* to, const unsigned char* from, std::size_t whole, std::size_t rest,
                       cudaStream_t on, std::index_sequence<L...>) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  const std::size_t at = whole * map::tile_bytes;
  (copy_rows<ToSpace, FromSpace>(to + at + map::offsets.at[L], 0, from + at + map::offsets.at[L], 0,
                                 rest * sizeof(leaf_type_t<T, L>), 1, on),
   ...);
}
template <class T, class ToSpace, class FromSpace, std::size_t Lanes>
void copy_layout_prefix(layout::aosoa<Lanes>, unsigned char* to, std::size_t, const unsigned char* from, std::size_t,
                        std::size_t count, cudaStream_t on) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  const std::size_t whole = count / Lanes, rest = count % Lanes;
  copy_rows<ToSpace, FromSpace>(to, 0, from, 0, whole * map::tile_bytes, 1, on);
  if (rest > 0)
    copy_partial_tile<T, ToSpace, FromSpace, Lanes>(to, from, whole, rest, on,
                                                    std::make_index_sequence<leaf_count_v<T>>{});
}

// Elements [first, last) of a block of records = T{}: one record from the host, then doubling
// copies (fill_column).
template <class T, class Space>
void fill_layout_value_initialized(layout::aos, unsigned char* block, std::size_t, std::size_t first, std::size_t last,
                                   cudaStream_t on) {
  if (last > first) fill_column<Space>(reinterpret_cast<T*>(block) + first, last - first, T{}, on);
}

// Elements [first, last) of a block of groups of G elements (tiles, or a split's cold records or
// tiles) = T{}, for the leaves L...: the rest of first's group leaf by leaf, then whole groups
// from one group image made on the host, doubling (every lane of the last group is written: lanes
// past `last` are within the allocation, and hold T{} rather than nothing). Map addresses leaf L
// of element i of a block as Map::leaf_pointer<L>(block, i, stride); `groups_at` is where the
// groups start in the block, `group_bytes` their size; Map::grouped(L) says whether leaf L is in
// them (a split's hot leaves are in columns).
template <class T, class Space, class Map, std::size_t G, std::size_t... L>
void fill_groups(unsigned char* block, std::size_t stride, unsigned char* groups_at, std::size_t group_bytes,
                 std::size_t first, std::size_t last, cudaStream_t on, std::index_sequence<L...>) {
  if (last <= first || group_bytes == 0) return;
  const T value{};
  const std::size_t head_end = (first + G - 1) / G * G;
  if (first % G != 0) {
    const std::size_t count = (last < head_end ? last : head_end) - first;
    ((Map::grouped(L)
          ? fill_column<Space>(Map::template leaf_pointer<L>(block, first, stride), count, struct_leaf<L>(value), on)
          : void()),
     ...);
    if (last <= head_end) return;
  }
  // One group's image: its lanes' leaves at their offsets from the group's start (group 0's
  // addresses, within the allocation, less its start).
  std::vector<unsigned char> image(group_bytes);
  for (std::size_t lane = 0; lane < G; ++lane)
    ((Map::grouped(L) ? (void)std::memcpy(image.data() + (reinterpret_cast<unsigned char*>(
                                                              Map::template leaf_pointer<L>(block, lane, stride)) -
                                                          groups_at),
                                          &struct_leaf<L>(value), sizeof(leaf_type_t<T, L>))
                      : void()),
     ...);
  const std::size_t groups = (last - head_end + G - 1) / G;
  unsigned char* start = groups_at + head_end / G * group_bytes;
  copy_rows<Space, host_space>(start, 0, image.data(), 0, group_bytes, 1, on);
  for (std::size_t done = 1; done < groups; done *= 2) {
    const std::size_t n = done < groups - done ? done : groups - done;
    copy_rows<Space, Space>(start + done * group_bytes, 0, start, 0, n * group_bytes, 1, on);
  }
}

// Elements [first, last) of a block of tiles = T{}.
template <class T, class Space, std::size_t Lanes>
void fill_layout_value_initialized(layout::aosoa<Lanes>, unsigned char* block, std::size_t, std::size_t first,
                                   std::size_t last, cudaStream_t on) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  fill_groups<T, Space, map, Lanes>(block, 0, block, map::tile_bytes, first, last, on,
                                    std::make_index_sequence<leaf_count_v<T>>{});
}

// Elements [0, count) of a split block: each hot column's first count values, then the cold
// groups as tiles are (whole groups in one copy, the last one's runs leaf by leaf).
template <class T, class ToSpace, class FromSpace, class Hot, class Cold, std::size_t... L>
void copy_split_prefix(unsigned char* to, std::size_t to_stride, const unsigned char* from, std::size_t from_stride,
                       std::size_t count, cudaStream_t on, std::index_sequence<L...>) {
  using map = layout_map<T, layout::split<Hot, Cold>>;
  ((map::table.hot[L] ? copy_rows<ToSpace, FromSpace>(to + to_stride * map::template column_at<L>, 0,
                                                      from + from_stride * map::template column_at<L>, 0,
                                                      count * sizeof(leaf_type_t<T, L>), 1, on)
                      : void()),
   ...);
  unsigned char* const cold_to = to + map::cold_start(to_stride);
  const unsigned char* const cold_from = from + map::cold_start(from_stride);
  const std::size_t whole = count / map::group, rest = count % map::group, at = whole * map::group_bytes;
  copy_rows<ToSpace, FromSpace>(cold_to, 0, cold_from, 0, at, 1, on);
  if (rest > 0)
    ((map::table.hot[L] ? void()
                        : copy_rows<ToSpace, FromSpace>(cold_to + at + map::template cold_offset<L>, 0,
                                                        cold_from + at + map::template cold_offset<L>, 0,
                                                        rest * sizeof(leaf_type_t<T, L>), 1, on)),
     ...);
}
template <class T, class ToSpace, class FromSpace, class Hot, class Cold>
void copy_layout_prefix(layout::split<Hot, Cold>, unsigned char* to, std::size_t to_stride, const unsigned char* from,
                        std::size_t from_stride, std::size_t count, cudaStream_t on) {
  copy_split_prefix<T, ToSpace, FromSpace, Hot, Cold>(to, to_stride, from, from_stride, count, on,
                                                      std::make_index_sequence<leaf_count_v<T>>{});
}

// Elements [first, last) of a split block = T{}: each hot column's run, then the cold groups.
template <class T, class Space, class Hot, class Cold, std::size_t... L>
void fill_split_value_initialized(unsigned char* block, std::size_t stride, std::size_t first, std::size_t last,
                                  cudaStream_t on, std::index_sequence<L...> leaves) {
  using map = layout_map<T, layout::split<Hot, Cold>>;
  if (last <= first) return;
  const T value{};
  ((map::table.hot[L] ? fill_column<Space>(map::template leaf_pointer<L>(block, first, stride), last - first,
                                           struct_leaf<L>(value), on)
                      : void()),
   ...);
  fill_groups<T, Space, map, map::group>(block, stride, block + map::cold_start(stride), map::group_bytes, first, last,
                                         on, leaves);
}
template <class T, class Space, class Hot, class Cold>
void fill_layout_value_initialized(layout::split<Hot, Cold>, unsigned char* block, std::size_t stride,
                                   std::size_t first, std::size_t last, cudaStream_t on) {
  fill_split_value_initialized<T, Space, Hot, Cold>(block, stride, first, last, on,
                                                    std::make_index_sequence<leaf_count_v<T>>{});
}

}  // namespace coalesce::detail
