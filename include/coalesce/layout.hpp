// coalesce: the layouts a container stores its elements in, as types. One kernel template,
// written against the element proxy (p.x, p.energy()), runs on every layout; the layout decides
// which accesses a warp makes:
//   - layout::soa: one column per leaf (coalesce::soa_vector, soa_view). A warp reading one field
//     reads one contiguous run: the layout for streaming updates of a few fields.
//   - layout::aos: whole records, sizeof(T) apart (an array of structs). A thread reading one
//     element reads one contiguous record: the layout for random gathers, sorts and scattered
//     reads of whole elements.
//   - layout::aosoa<Lanes>: tiles of Lanes elements, each tile holding Lanes values of leaf 0,
//     then Lanes of leaf 1, and so on. With Lanes = 32 a warp reads one tile's run of every field
//     (as with SoA), and one element's fields are a tile apart, not a whole column apart.
// coalesce::vector<T, Layout> (<coalesce/layout_vector.hpp>) is the container of any of them.
// Host-capable.
#pragma once
/// @file

#include <cstddef>
#include <type_traits>

namespace coalesce {
namespace layout {

/// One column per leaf of T, each 256-byte aligned: coalesce::soa_vector's and soa_view's layout.
struct soa {};

/// Whole records of T, sizeof(T) apart from a 256-byte-aligned start: an array of structs, with T's
/// own padding and no more (a 24-byte particle takes 24 bytes; padding it to 32 would move 1.33x
/// the bytes on every streaming pass). The walks stage records through shared memory with 16-byte
/// accesses where a record is not one access wide.
struct aos {};

/// Tiles of `Lanes` elements (a power of two; 32 by default, a warp): in each tile, Lanes values of
/// leaf 0, then Lanes values of leaf 1, ..., each run 16-byte aligned, the tile a multiple of 16
/// bytes. Cabana's AoSoA and LLAMA's AoSoA<Lanes> mapping are this layout.
template <std::size_t Lanes = 32>
struct aosoa {
  static_assert(Lanes > 0 && (Lanes & (Lanes - 1)) == 0,
                "coalesce::layout::aosoa<Lanes>: Lanes must be a power of two (32, a warp, is the default)");
  static constexpr std::size_t lanes = Lanes;  ///< elements per tile
};

}  // namespace layout

namespace detail {
template <class L>
struct is_aosoa : std::false_type {};
template <std::size_t Lanes>
struct is_aosoa<layout::aosoa<Lanes>> : std::true_type {};
}  // namespace detail

/// Whether L is one of coalesce's layouts: layout::soa, layout::aos or a layout::aosoa<Lanes>.
template <class L>
inline constexpr bool is_layout_v =
    std::is_same_v<L, layout::soa> || std::is_same_v<L, layout::aos> || detail::is_aosoa<L>::value;

/// Whether elements of layout L are stored as records (layout::aos) rather than as runs of leaves.
template <class L>
inline constexpr bool is_record_layout_v = std::is_same_v<L, layout::aos>;

}  // namespace coalesce
