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

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace coalesce::detail {

// Elements [0, count) of a block of records: one copy of their bytes.
template <class T, class ToSpace, class FromSpace>
void copy_layout_prefix(layout::aos, unsigned char* to, const unsigned char* from, std::size_t count, cudaStream_t on) {
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
void copy_layout_prefix(layout::aosoa<Lanes>, unsigned char* to, const unsigned char* from, std::size_t count,
                        cudaStream_t on) {
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
void fill_layout_value_initialized(layout::aos, unsigned char* block, std::size_t first, std::size_t last,
                                   cudaStream_t on) {
  if (last > first) fill_column<Space>(reinterpret_cast<T*>(block) + first, last - first, T{}, on);
}

// Elements [first, last) of a block of tiles = T{}: the rest of first's tile leaf by leaf, then
// whole tiles from one tile image made on the host, doubling (every lane of the last tile is
// written: lanes past `last` are within the allocation, and hold T{} rather than nothing).
template <class T, class Space, std::size_t Lanes, std::size_t... L>
void fill_tile_lanes(unsigned char* block, std::size_t first, std::size_t count, cudaStream_t on,
                     std::index_sequence<L...>) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  const T value{};
  (fill_column<Space>(map::template leaf_pointer<L>(block, first), count, struct_leaf<L>(value), on), ...);
}
template <class T, std::size_t Lanes, std::size_t... L>
std::vector<unsigned char> value_initialized_tile(std::index_sequence<L...>) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  std::vector<unsigned char> tile(map::tile_bytes);
  const T value{};
  for (std::size_t lane = 0; lane < Lanes; ++lane)
    (std::memcpy(map::template leaf_pointer<L>(tile.data(), lane), &struct_leaf<L>(value), sizeof(leaf_type_t<T, L>)),
     ...);
  return tile;
}
template <class T, class Space, std::size_t Lanes>
void fill_layout_value_initialized(layout::aosoa<Lanes>, unsigned char* block, std::size_t first, std::size_t last,
                                   cudaStream_t on) {
  using map = layout_map<T, layout::aosoa<Lanes>>;
  using leaves = std::make_index_sequence<leaf_count_v<T>>;
  if (last <= first) return;
  const std::size_t head_end = (first + Lanes - 1) / Lanes * Lanes;
  if (first % Lanes != 0) {
    fill_tile_lanes<T, Space, Lanes>(block, first, (last < head_end ? last : head_end) - first, on, leaves{});
    if (last <= head_end) return;
  }
  const std::size_t tiles = (last - head_end + Lanes - 1) / Lanes;
  unsigned char* start = block + head_end / Lanes * map::tile_bytes;
  const std::vector<unsigned char> tile = value_initialized_tile<T, Lanes>(leaves{});
  copy_rows<Space, host_space>(start, 0, tile.data(), 0, map::tile_bytes, 1, on);
  for (std::size_t done = 1; done < tiles; done *= 2) {
    const std::size_t n = done < tiles - done ? done : tiles - done;
    copy_rows<Space, Space>(start + done * map::tile_bytes, 0, start, 0, n * map::tile_bytes, 1, on);
  }
}

}  // namespace coalesce::detail
