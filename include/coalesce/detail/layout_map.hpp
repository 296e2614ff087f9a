// coalesce::detail: where leaf L of element i sits in a block of memory of each record layout
// (layout::aos, layout::aosoa<Lanes>), and how many bytes `count` elements take. What
// layout_view addresses with and layout_vector allocates by. Users never include this header.
// Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/byte_copies.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/layout.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

template <class T, class Layout>
struct layout_map;

// Whole records: leaf L of element i is that leaf of record i.
template <class T>
struct layout_map<T, layout::aos> {
  // Elements of a group whose bytes are whole: one, a record being whole.
  static constexpr std::size_t group = 1;
  static std::size_t bytes(std::size_t count) {
    return checked_multiply(count, sizeof(T), "coalesce::vector<T, layout::aos>: the records of");
  }
  template <std::size_t L, class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static auto* leaf_pointer(Byte* base, std::size_t i) {
    using record = std::conditional_t<std::is_const_v<Byte>, const T, T>;
    return &struct_leaf<L>(reinterpret_cast<record*>(base)[i]);
  }
  static constexpr bool has_gaps = false;  // a record's padding is T's, copied with T's values
  // The same, for callers that address every layout alike (a split's columns are `stride` long).
  template <std::size_t L, class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static auto* leaf_pointer(Byte* base, std::size_t i, std::size_t) {
    return leaf_pointer<L>(base, i);
  }
};

// The offsets of each leaf's run in a tile of Lanes elements, and the tile's size: runs in leaf
// order, each 16-byte aligned (or to its leaf's alignment, if larger), so that a chunk of 16 bytes
// of any run is one aligned vector access; the tile a multiple of the largest of those alignments.
template <std::size_t Leaves>
struct tile_offsets {
  std::size_t at[Leaves + 1];  // at[Leaves] is the tile's size
};
COALESCE_HOST_DEVICE constexpr std::size_t round_up_to(std::size_t value, std::size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
template <class T, std::size_t Lanes, std::size_t... L>
constexpr tile_offsets<sizeof...(L)> make_tile_offsets(std::index_sequence<L...>) {
  constexpr std::size_t sizes[] = {sizeof(leaf_type_t<T, L>)...};
  constexpr std::size_t alignments[] = {(alignof(leaf_type_t<T, L>) > 16 ? alignof(leaf_type_t<T, L>) : 16)...};
  tile_offsets<sizeof...(L)> offsets{};
  std::size_t at = 0, widest = 16;
  for (std::size_t k = 0; k < sizeof...(L); ++k) {
    at = round_up_to(at, alignments[k]);
    offsets.at[k] = at;
    at += Lanes * sizes[k];
    widest = alignments[k] > widest ? alignments[k] : widest;
  }
  offsets.at[sizeof...(L)] = round_up_to(at, widest);
  return offsets;
}

// Tiles of Lanes elements: leaf L of element i is value i % Lanes of leaf L's run in tile i / Lanes.
template <class T, std::size_t Lanes>
struct layout_map<T, layout::aosoa<Lanes>> {
  static constexpr std::size_t leaves = leaf_count_v<T>;
  static constexpr tile_offsets<leaves> offsets = make_tile_offsets<T, Lanes>(std::make_index_sequence<leaves>{});
  static constexpr std::size_t tile_bytes = offsets.at[leaves];
  static constexpr std::size_t group = Lanes;
  static constexpr bool grouped(std::size_t) { return true; }  // every leaf is in the tiles
  // Whether a tile has bytes no leaf holds (runs padded to 16 bytes): the container zeroes its
  // block when it allocates, so that whole-tile copies read no byte never written.
  template <std::size_t... L>
  static constexpr bool gaps(std::index_sequence<L...>) {
    return tile_bytes != ((Lanes * sizeof(leaf_type_t<T, L>)) + ... + std::size_t(0));
  }
  static constexpr bool has_gaps = gaps(std::make_index_sequence<leaves>{});
  // Where the gapped part of a block for `count` elements starts: every tile may have gaps.
  static constexpr std::size_t gapped_from(std::size_t) { return 0; }
  // Whole tiles: the last one's unused lanes are allocated, so a chunk never leaves the block.
  static std::size_t bytes(std::size_t count) {
    return checked_multiply(count / Lanes + (count % Lanes != 0), tile_bytes,
                            "coalesce::vector<T, layout::aosoa<Lanes>>: the tiles of");
  }
  template <std::size_t L, class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static auto* leaf_pointer(Byte* base, std::size_t i) {
    using leaf = std::conditional_t<std::is_const_v<Byte>, const leaf_type_t<T, L>, leaf_type_t<T, L>>;
    return reinterpret_cast<leaf*>(base + i / Lanes * tile_bytes + offsets.at[L]) + i % Lanes;
  }
  template <std::size_t L, class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static auto* leaf_pointer(Byte* base, std::size_t i, std::size_t) {
    return leaf_pointer<L>(base, i);
  }
};

}  // namespace coalesce::detail
