// coalesce::detail: where leaf L of element i sits in a block of layout::split<Hot, Cold>: the
// hot leaves in columns `stride` elements long (stride a multiple of 256, so that every column
// starts 256-byte aligned whatever its leaf's size), then the cold leaves in groups (Cold's
// records, one element a group, or its tiles of Lanes elements). Users never include this header.
// Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/byte_copies.hpp>
#include <coalesce/detail/element_checks.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/layout.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

template <class M>
struct member_class;
template <class F, class C>
struct member_class<F C::*> {
  using type = C;
};

// Each leaf of T hot or cold, and its rank among the hot leaves or among the cold ones.
template <std::size_t Leaves>
struct split_table {
  bool hot[Leaves];
  std::size_t rank[Leaves];
  std::size_t hot_count;
};

// Whether every member of Hot is a field of T (a pointer to a data member of T that one of T's
// fields is); the one message a wrong name gets.
template <class T, auto... Members>
constexpr bool names_fields_of(layout::fields<Members...>) {
  constexpr bool of_t = (std::is_same_v<typename member_class<decltype(Members)>::type, T> && ...);
  static_assert(of_t, "coalesce::layout::split<layout::fields<...>>: a hot field is a member of another type than the "
                      "vector's element type T; name T's members (&T::x)");
  if constexpr (of_t) {
    constexpr bool fields = ((field_index_v<T, Members> < field_count_v<T>) && ...);
    static_assert(fields, "coalesce::layout::split<layout::fields<...>>: a hot field is not one of T's fields (a "
                          "member COALESCE_FIELDS does not list, or a member of a nested struct); name T's own fields");
    return fields;
  }
  return false;
}

template <class T, auto... Members>
constexpr split_table<leaf_count_v<T>> make_split_table(layout::fields<Members...>) {
  split_table<leaf_count_v<T>> table{};
  const std::size_t named[] = {field_index_v<T, Members>...};
  constexpr auto starts = leaf_starts_v<T>;
  for (std::size_t f : named)
    for (std::size_t l = starts.at[f]; l < starts.at[f + 1]; ++l) table.hot[l] = true;
  std::size_t hot = 0, cold = 0;
  for (std::size_t l = 0; l < leaf_count_v<T>; ++l) table.rank[l] = table.hot[l] ? hot++ : cold++;
  table.hot_count = hot;
  return table;
}

// The offsets of the cold leaves in a group of `Group` elements (a record: Group 1, each leaf at
// its own alignment, as the members of a struct of those leaves; a tile: runs of Group values,
// each 16-byte aligned as in layout::aosoa), and the group's size. at[k] is the k-th cold leaf's.
template <std::size_t Leaves>
struct group_offsets {
  std::size_t at[Leaves + 1];
  std::size_t bytes;
};
template <class T, std::size_t Group, std::size_t MinAlign, std::size_t Leaves, std::size_t... L>
constexpr group_offsets<Leaves> make_group_offsets(const split_table<leaf_count_v<T>>& table,
                                                   std::index_sequence<L...>) {
  constexpr std::size_t sizes[] = {sizeof(leaf_type_t<T, L>)...};
  constexpr std::size_t alignments[] = {
      (alignof(leaf_type_t<T, L>) > MinAlign ? alignof(leaf_type_t<T, L>) : MinAlign)...};
  group_offsets<Leaves> offsets{};
  std::size_t at = 0, widest = 1;
  for (std::size_t l = 0; l < sizeof...(L); ++l) {
    if (table.hot[l]) continue;
    at = round_up_to(at, alignments[l]);
    offsets.at[table.rank[l]] = at;
    at += Group * sizes[l];
    widest = alignments[l] > widest ? alignments[l] : widest;
  }
  offsets.bytes = at == 0 ? 0 : round_up_to(at, widest);
  return offsets;
}

template <class Cold>
struct cold_group;
template <>
struct cold_group<layout::aos> {
  static constexpr std::size_t elements = 1, min_alignment = 1;
};
template <std::size_t Lanes>
struct cold_group<layout::aosoa<Lanes>> {
  static constexpr std::size_t elements = Lanes, min_alignment = 16;
};

template <class T, class Hot, class Cold>
struct layout_map<T, layout::split<Hot, Cold>> {
  static constexpr std::size_t leaves = leaf_count_v<T>;
  static constexpr bool valid = names_fields_of<T>(Hot{});
  static constexpr split_table<leaves> table = valid ? make_split_table<T>(Hot{}) : split_table<leaves>{};
  static constexpr std::size_t hot_count = table.hot_count, cold_count = leaves - hot_count;
  // Elements a cold group holds, and its bytes.
  static constexpr std::size_t group = cold_group<Cold>::elements;
  static constexpr group_offsets<leaves> cold =
      make_group_offsets<T, group, cold_group<Cold>::min_alignment, leaves>(table, std::make_index_sequence<leaves>{});
  static constexpr std::size_t group_bytes = cold.bytes;
  static constexpr bool grouped(std::size_t l) { return !table.hot[l]; }  // the cold leaves are in the groups
  // Whether a cold group has bytes no leaf holds (a record's padding, runs padded to 16 bytes):
  // the container zeroes its block when it allocates, so that whole-group copies read no byte
  // never written.
  template <std::size_t... L>
  static constexpr bool gaps(std::index_sequence<L...>) {
    return group_bytes != ((table.hot[L] ? std::size_t(0) : group * sizeof(leaf_type_t<T, L>)) + ... + std::size_t(0));
  }
  static constexpr bool has_gaps = gaps(std::make_index_sequence<leaves>{});
  // Where the gapped part of a block for `count` elements starts: the cold groups (columns have none).
  static constexpr std::size_t gapped_from(std::size_t count) { return cold_start(stride_for(count)); }
  // Element i's cold record (Cold = layout::aos), for moves of the record whole.
  template <class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static Byte* cold_record(Byte* base, std::size_t i, std::size_t stride) {
    return base + cold_start(stride) + i * group_bytes;
  }
  // Cold leaf L's offset in its group (a constant device code can read, as the table is not).
  template <std::size_t L>
  static constexpr std::size_t cold_offset = cold.at[table.rank[L]];

  // The bytes of the hot leaves before leaf L's column, an element of each (the column starts
  // stride times that many bytes into the block).
  template <std::size_t L, std::size_t... J>
  static constexpr std::size_t hot_bytes_before(std::index_sequence<J...>) {
    return ((J < L && table.hot[J] ? sizeof(leaf_type_t<T, J>) : std::size_t(0)) + ... + std::size_t(0));
  }
  template <std::size_t L>
  static constexpr std::size_t column_at = hot_bytes_before<L>(std::make_index_sequence<leaves>{});
  static constexpr std::size_t hot_element_bytes = column_at<leaves>;

  // The column length of a block for `count` elements: a multiple of 256.
  static constexpr std::size_t stride_for(std::size_t count) { return round_up_to(count, 256); }
  // The hot columns' bytes, where the cold groups start.
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static constexpr std::size_t cold_start(std::size_t stride) {
    return stride * hot_element_bytes;
  }
  // Every leaf of count elements (allocated with stride_for(count)).
  static std::size_t bytes(std::size_t count) {
    constexpr std::size_t most = static_cast<std::size_t>(-1);
    const std::size_t groups = count / group + (count % group != 0);
    const bool fits = count <= most - 255 &&
                      (hot_element_bytes == 0 || stride_for(count) <= most / hot_element_bytes) &&
                      (group_bytes == 0 || groups <= most / group_bytes) &&
                      groups * group_bytes <= most - stride_for(count) * hot_element_bytes;
    if (!fits)
      throw std::length_error("coalesce::vector<T, layout::split<...>>: " + std::to_string(count) +
                              " elements overflow std::size_t bytes");
    return stride_for(count) * hot_element_bytes + groups * group_bytes;
  }
  template <std::size_t L, class Byte>
  COALESCE_HOST_DEVICE COALESCE_FORCEINLINE static auto* leaf_pointer(Byte* base, std::size_t i, std::size_t stride) {
    using leaf = std::conditional_t<std::is_const_v<Byte>, const leaf_type_t<T, L>, leaf_type_t<T, L>>;
    if constexpr (table.hot[L]) {
      return reinterpret_cast<leaf*>(base + stride * column_at<L>) + i;
    } else {
      return reinterpret_cast<leaf*>(base + cold_start(stride) + i / group * group_bytes + cold_offset<L>) + i % group;
    }
  }
};

}  // namespace coalesce::detail
