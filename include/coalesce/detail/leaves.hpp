// coalesce::detail: the leaf columns of an aggregate. A field that is itself an aggregate (a
// float3, a struct of the user's) or a C array is split, recursively, into its leaves, and each
// leaf is one column: Body { float3 pos, vel; float mass; } is 7 float columns, so b[i].pos.x
// reads 4 bytes of every 4, not 4 of every 12 (a 12-byte stride touches 3x the sectors). Users
// never include this header.
#pragma once

#include <coalesce/bitwise_copyable.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>  // std::tuple_size, std::tuple_element

namespace coalesce {

// Specialize as std::true_type to store a field type F whole, as one column of F, instead of
// one column per leaf: for a type whose values are always read and written whole
//   template <> struct coalesce::keep_whole<float4> : std::true_type {};
// Split is the default because it is never more bytes: a float4 column read whole moves 16
// bytes a lane, four float columns move the same 16 bytes in four coalesced accesses; but
// reading .x of a whole float4 column moves 4 times the bytes it uses.
template <class F>
struct keep_whole : std::false_type {};

}  // namespace coalesce

namespace coalesce::detail {

// Whether F declares itself tuple-like (std::tuple_size<F>), as std::array and cuda::std::array
// do: a structured binding then calls get<I> instead of naming F's members.
template <class F, class = void>
struct is_tuple_like : std::false_type {};
template <class F>
struct is_tuple_like<F, std::void_t<decltype(std::tuple_size<F>::value)>> : std::true_type {};

// Whether F is an array in a struct, as std::array<E, N> and cuda::std::array<E, N> are: an
// aggregate whose one member is E[N]. Such a struct is pointer-interconvertible with that member
// (standard layout, first member), so its leaves are those of the array.
template <class F>
constexpr bool wraps_array() {
  if constexpr (std::is_class_v<F> && std::is_aggregate_v<F> && std::is_standard_layout_v<F> &&
                is_tuple_like<F>::value) {
    if constexpr (std::tuple_size<F>::value > 0 && count_fields<F>() == 1) {
      using element = typename std::tuple_element<0, F>::type;
      return sizeof(F) == std::tuple_size<F>::value * sizeof(element);
    } else {
      return false;
    }
  } else {
    return false;
  }
}
template <class F>
inline constexpr bool wraps_array_v = wraps_array<F>();
template <class F>
using wrapped_array_t = typename std::tuple_element<0, F>::type[std::tuple_size<F>::value];

// The array a wrapper (wraps_array) holds, qualified like it.
template <class X>
COALESCE_HOST_DEVICE constexpr auto& wrapped_array(X& x) {
  using array = std::conditional_t<std::is_const_v<X>, const wrapped_array_t<std::remove_const_t<X>>,
                                   wrapped_array_t<std::remove_const_t<X>>>;
  return reinterpret_cast<array&>(x);
}

// Whether a struct field of type F splits into its fields: an aggregate of 1 to max_fields
// ordinary fields that coalesce can reflect. Anything else (a class with constructors, a union,
// bit-fields) stays one column, as every field did before fields were split.
template <class F>
constexpr bool struct_splits() {
  if constexpr (std::is_class_v<F> && std::is_aggregate_v<F> && !std::is_union_v<F> && !std::is_empty_v<F> &&
                std::is_copy_assignable_v<F> && !is_tuple_like<F>::value) {
    constexpr std::size_t n = count_fields<F>();
    if constexpr (n >= 1 && n <= max_fields) {
      return fields_fill_struct<F>();
    } else {
      return false;
    }
  } else {
    return false;
  }
}

// Whether F is bitwise copyable only because the user says so (is_bitwise_copyable): such a
// type is copied by its own copy constructor wherever its bytes are not, so it is never taken
// apart into its members; it is one leaf, as keep_whole makes one.
template <class F>
inline constexpr bool bitwise_by_trait_v = is_bitwise_copyable<F>::value && !std::is_trivially_copyable_v<F>;

// Whether a field of type F is split into leaf columns: C arrays, arrays in a struct, and the
// structs above.
template <class F>
constexpr bool field_splits() {
  if constexpr (keep_whole<F>::value || bitwise_by_trait_v<F>) {
    return false;
  } else if constexpr (std::is_array_v<F>) {
    return std::extent_v<F> > 0;
  } else if constexpr (wraps_array<F>()) {
    return true;
  } else {
    return struct_splits<F>();
  }
}
template <class F>
inline constexpr bool splits_v = field_splits<F>();

template <class F>
constexpr std::size_t leaf_count_of();

// Where each field's leaves start among the leaves of its struct: at[I] is the first leaf of
// field I, at[fields] the number of leaves.
template <std::size_t Fields>
struct leaf_starts {
  std::size_t at[Fields + 1];
};
template <class S, std::size_t... I>
constexpr leaf_starts<sizeof...(I)> make_leaf_starts(std::index_sequence<I...>) {
  leaf_starts<sizeof...(I)> starts{};
  const std::size_t counts[] = {leaf_count_of<field_type_t<S, I>>()...};
  for (std::size_t i = 0; i < sizeof...(I); ++i) starts.at[i + 1] = starts.at[i] + counts[i];
  return starts;
}
template <class S>
inline constexpr auto leaf_starts_v = make_leaf_starts<S>(std::make_index_sequence<count_fields<S>()>{});

// The number of leaves of a field of type F: 1 for a field that does not split.
template <class F>
constexpr std::size_t leaf_count_of() {
  if constexpr (!splits_v<F>) {
    return 1;
  } else if constexpr (std::is_array_v<F>) {
    return std::extent_v<F> * leaf_count_of<std::remove_extent_t<F>>();
  } else if constexpr (wraps_array<F>()) {
    return leaf_count_of<wrapped_array_t<F>>();
  } else {
    return leaf_starts_v<F>.at[count_fields<F>()];
  }
}

template <class F>
inline constexpr std::size_t leaf_count_of_v = leaf_count_of<F>();

// The leaves of struct S (its own fields are always split: S is an element type). 1 for a type
// that cannot be one, so that check_soa_element's message is the only one.
template <class S>
constexpr std::size_t count_leaves() {
  if constexpr (struct_splits<S>()) {
    return leaf_starts_v<S>.at[count_fields<S>()];
  } else {
    return 1;
  }
}
template <class S>
inline constexpr std::size_t leaf_count_v = count_leaves<S>();

// The field of struct S that holds leaf L. (A variable, not a function: device code may use it
// without nvcc's --expt-relaxed-constexpr, and each is computed once.)
template <class S>
constexpr std::size_t find_field_of_leaf(std::size_t leaf) {
  std::size_t field = 0;
  while (leaf_starts_v<S>.at[field + 1] <= leaf) ++field;
  return field;
}
template <class S, std::size_t L>
inline constexpr std::size_t field_of_leaf_v = find_field_of_leaf<S>(L);

// Whether S is flat: every field one leaf, as Particle { float x, y, z, vx, vy, vz; } is. Its
// proxies take the short paths of before fields were split, which cost less to compile.
template <class S>
inline constexpr bool flat_v = leaf_count_v<S> == count_fields<S>();

template <std::size_t L, class S>
COALESCE_HOST_DEVICE constexpr auto& struct_leaf(S& s);

// Leaf L of a field x (of type F or const F).
template <std::size_t L, class X>
COALESCE_HOST_DEVICE constexpr auto& field_leaf(X& x) {
  using F = std::remove_const_t<X>;
  if constexpr (!splits_v<F>) {
    return x;
  } else if constexpr (std::is_array_v<F>) {
    constexpr std::size_t per_element = leaf_count_of_v<std::remove_extent_t<F>>;
    return field_leaf<L % per_element>(x[L / per_element]);
  } else if constexpr (wraps_array_v<F>) {
    return field_leaf<L>(wrapped_array(x));
  } else {
    return struct_leaf<L>(x);
  }
}

// Leaf L of a struct s (of type S or const S): a reference to the scalar (or whole field) that
// column L of a soa_vector<S> stores.
template <std::size_t L, class S>
COALESCE_HOST_DEVICE constexpr auto& struct_leaf(S& s) {
  using F = std::remove_const_t<S>;
  constexpr std::size_t field = field_of_leaf_v<F, L>;
  if constexpr (flat_v<F>) {
    return get_leaf<L>(tie_fields(s));
  } else {
    return field_leaf<L - leaf_starts_v<F>.at[field]>(get_leaf<field>(tie_fields(s)));
  }
}

// The type of leaf L of struct S.
template <class S, std::size_t L>
using leaf_type_t = std::remove_cv_t<std::remove_reference_t<decltype(struct_leaf<L>(std::declval<S&>()))>>;

// Whether every array inside a field of type F has elements that are leaves, or arrays of them:
// what the proxy of an array field indexes (view[i].pos[k]), one leaf column per element.
template <class S, std::size_t... I>
constexpr bool fields_hold_arrays_of_leaves(std::index_sequence<I...>);
template <class F>
constexpr bool arrays_of_leaves() {
  if constexpr (!splits_v<F>) {
    return true;
  } else if constexpr (std::is_array_v<F>) {
    using element = std::remove_extent_t<F>;
    return !splits_v<element> || (std::is_array_v<element> && arrays_of_leaves<element>());
  } else if constexpr (wraps_array<F>()) {
    return arrays_of_leaves<wrapped_array_t<F>>();
  } else {
    return fields_hold_arrays_of_leaves<F>(std::make_index_sequence<count_fields<F>()>{});
  }
}
template <class S, std::size_t... I>
constexpr bool fields_hold_arrays_of_leaves(std::index_sequence<I...>) {
  return (arrays_of_leaves<field_type_t<S, I>>() && ...);
}

}  // namespace coalesce::detail
