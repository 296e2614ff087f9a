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
//   - layout::split<layout::fields<&T::x, ...>, Cold>: the named (hot) fields in columns, as in
//     SoA, and the rest in Cold (records by default): streaming the hot fields moves no cold
//     byte, and a scattered read of the cold fields reads one record.
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

/// Fields of T named by pointers to their members (`layout::fields<&Particle::x, &Particle::vx>`):
/// layout::split's hot fields. A field that is a struct, a vector type or an array names all its
/// leaves.
template <auto... Members>
struct fields {
  static_assert(sizeof...(Members) > 0, "coalesce::layout::fields<...>: name at least one field, as &T::member");
  static_assert((std::is_member_object_pointer_v<decltype(Members)> && ...),
                "coalesce::layout::fields<...>: each field is named by a pointer to a data member, as &T::member");
};

}  // namespace layout

namespace detail {
template <class L>
struct is_fields : std::false_type {};
template <auto... Members>
struct is_fields<layout::fields<Members...>> : std::true_type {};
template <class L>
struct is_aosoa : std::false_type {};
template <std::size_t Lanes>
struct is_aosoa<layout::aosoa<Lanes>> : std::true_type {};
}  // namespace detail

namespace layout {

/// The fields named by Hot (a layout::fields<&T::member, ...>) in columns, one per leaf, as in
/// layout::soa; the other fields in Cold (layout::aos, the default: records of those fields only;
/// or layout::aosoa<Lanes>: tiles of them). For elements of which a few fields are updated on
/// every step and the rest are read rarely, or only together: streaming the hot fields moves no
/// cold byte (as with SoA), and a scattered read of the cold fields reads one record of them (as
/// with AoS). One block: the hot columns, each 256-byte aligned, then the cold records or tiles.
template <class Hot, class Cold = aos>
struct split {
  static_assert(detail::is_fields<Hot>::value,
                "coalesce::layout::split<Hot, Cold>: Hot names the hot fields as coalesce::layout::fields<&T::x, "
                "&T::y, ...>");
  static_assert(std::is_same_v<Cold, aos> || detail::is_aosoa<Cold>::value,
                "coalesce::layout::split<Hot, Cold>: Cold, the other fields' layout, must be coalesce::layout::aos or "
                "layout::aosoa<Lanes>");
  using hot = Hot;    ///< the hot fields
  using cold = Cold;  ///< the other fields' layout
};

}  // namespace layout

namespace detail {
template <class L>
struct is_split : std::false_type {};
template <class Hot, class Cold>
struct is_split<layout::split<Hot, Cold>> : std::true_type {};
}  // namespace detail

/// Whether L is one of coalesce's layouts: layout::soa, layout::aos, a layout::aosoa<Lanes> or a
/// layout::split<Hot, Cold>.
template <class L>
inline constexpr bool is_layout_v = std::is_same_v<L, layout::soa> || std::is_same_v<L, layout::aos> ||
                                    detail::is_aosoa<L>::value || detail::is_split<L>::value;

/// Whether elements of layout L are stored as records (layout::aos) rather than as runs of leaves.
template <class L>
inline constexpr bool is_record_layout_v = std::is_same_v<L, layout::aos>;

}  // namespace coalesce
