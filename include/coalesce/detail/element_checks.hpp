// coalesce::detail: the checks on what a soa_vector's element type may be (each stopping the next
// from piling on more errors), and which field a pointer to member names. Users never include
// this header; <coalesce/soa_reference.hpp> does. Host-capable.
#pragma once

#include <coalesce/bitwise_copyable.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/leaves.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The check that a column's values may be copied as bytes (columns move with cudaMemcpy), made
// only for the first leaf that fails it, so that the message comes once. A class template of the
// field's index and the leaf's type, so that the compiler names both with the message: g++ "In
// instantiation of 'struct coalesce::detail::bitwise_copyable_field<track, 1, Vector3d>'" and
// "'coalesce::is_bitwise_copyable_v<Vector3d>' evaluates to false", nvcc "[with T=track,
// FieldIndex=1UL, F=Vector3d]".
template <class T, std::size_t FieldIndex, class F>
struct bitwise_copyable_field {
  static_assert(is_bitwise_copyable_v<F>,
                "coalesce::soa_vector<T>: field FieldIndex of T is, or holds, an F, which is not trivially copyable "
                "(columns move with cudaMemcpy); if copying an F's bytes copies it (as for Eigen::Vector3d), "
                "specialize coalesce::is_bitwise_copyable<F> as std::true_type, else store indices or handles "
                "instead of objects that own memory");
  static constexpr bool value = true;
};
template <class T, std::size_t... L>
constexpr std::size_t first_leaf_not_bitwise_copyable(std::index_sequence<L...>) {
  std::size_t first = sizeof...(L);
  (void)((is_bitwise_copyable_v<leaf_type_t<T, L>> ? false : (first = L, true)) || ...);
  return first;
}
template <class T>
constexpr bool check_leaves() {
  constexpr std::size_t leaves = leaf_count_v<T>;
  constexpr std::size_t first = first_leaf_not_bitwise_copyable<T>(std::make_index_sequence<leaves>{});
  if constexpr (first < leaves) {
    return bitwise_copyable_field<T, field_of_leaf_v<T, first>, leaf_type_t<T, first>>::value;
  } else {
    return true;
  }
}

// The checks on an element type, in order, each stopping the next from piling on more errors.
template <class T>
constexpr bool check_soa_element() {
  static_assert(std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_union_v<T>,
                "coalesce::soa_vector<T>: T must be an aggregate struct (public fields, no user-declared "
                "constructors, no virtual functions); give the struct plain fields");
  if constexpr (std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_union_v<T>) {
    constexpr std::size_t n = count_fields<T>();
    static_assert(n <= max_fields,
                  "coalesce::soa_vector<T>: T has more than " COALESCE_DETAIL_MAX_FIELDS_TEXT " fields; group "
                  "related fields into structs of their own");
    static_assert(n > max_fields || std::is_copy_assignable_v<T>,
                  "coalesce::soa_vector<T>: T has a reference or const field; store values (or indices) instead");
    static_assert(n > max_fields || !std::is_copy_assignable_v<T> || n >= 1,
                  "coalesce::soa_vector<T>: T has no fields");
    if constexpr (n >= 1 && n <= max_fields && std::is_copy_assignable_v<T>) {
      constexpr bool plain_fields = fields_fill_struct<T>();
      static_assert(plain_fields,
                    "coalesce::soa_vector<T>: T's fields do not fill it as their types say: T has a bit-field "
                    "(or a member with its own alignas); give each field a whole type of its own");
      if constexpr (plain_fields) {
        static_assert(arrays_of_leaves<T>(),
                      "coalesce::soa_vector<T>: T has an array of structs as a field (float3 p[4]); make it a struct "
                      "of arrays (float px[4], py[4], pz[4]), or keep its element type whole (one column each) with "
                      "coalesce::keep_whole");
        return check_leaves<T>();
      }
    }
  }
  return true;
}

template <class T>
inline constexpr std::size_t field_count_v = count_fields<T>();

// Whether field I of T and the member `member` are the same field: compared by address in a
// probe object, in a constant expression: a T made there or, for a T that is not trivially
// copyable (it has a field bitwise copyable by specialization, whose default constructor is
// seldom constexpr), probe_object<T>. Host code only: nvcc warns of a host variable's address
// taken in a __host__ __device__ function, even one only ever evaluated at compile time.
template <class T, std::size_t I, class F>
constexpr bool same_address(F T::* member, T& probe) {
  return static_cast<const void*>(&(probe.*member)) == static_cast<const void*>(&get_leaf<I>(tie_fields(probe)));
}
COALESCE_DETAIL_PROBES_BEGIN
template <class T, std::size_t I, class F>
constexpr bool is_field(F T::* member) {
  if constexpr (!std::is_same_v<field_type_t<T, I>, std::remove_cv_t<F>>) {
    return false;
  } else if constexpr (std::is_trivially_copyable_v<T>) {
    T probe{};
    return same_address<T, I>(member, probe);
  } else {
    return same_address<T, I>(member, probe_object<T>);
  }
}
COALESCE_DETAIL_PROBES_END

template <class T, class F, std::size_t... I>
constexpr std::size_t field_index(F T::* member, std::index_sequence<I...>) {
  std::size_t index = sizeof...(I);
  (void)((is_field<T, I>(member) ? (index = I, true) : false) || ...);  // stops at the first match
  return index;
}

// The index of the field `Member` (a pointer to a data member of T).
template <class T, auto Member>
inline constexpr std::size_t field_index_v = field_index(Member, std::make_index_sequence<field_count_v<T>>{});

}  // namespace coalesce::detail
