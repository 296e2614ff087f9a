// coalesce: what view[i] is. A soa_view's element is a proxy of references into the columns:
// positional (get<I>(view[i])) for any aggregate, named (view[i].x) once COALESCE_FIELDS has
// named the fields (<coalesce/soa_fields.hpp>). Also the checks on what an element type may be.
// Host-capable; included by <coalesce/soa.hpp>, which is what users include.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/aggregate_references.hpp>
#include <coalesce/detail/cuda_vector_types.hpp>
#include <coalesce/detail/element_checks.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/proxy_base.hpp>
#include <coalesce/tracked_field.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce {
namespace detail {

// view[i] when T has no COALESCE_FIELDS: positional access only, through get<I>. The name is
// the hint a compiler prints when code writes view[i].x without the macro: "class
// coalesce::detail::no_COALESCE_FIELDS_for<Particle> has no member x".
template <class Q, class T, std::size_t... I>
ref_tuple<member_reference_t<Q, field_type_t<T, I>>...> member_tuple(std::index_sequence<I...>);  // decltype only

template <class T>
class no_COALESCE_FIELDS_for : public struct_reference_base<no_COALESCE_FIELDS_for<T>, T> {
 public:
  using value_type = element_of_t<T>;
  using members = decltype(member_tuple<T, value_type>(std::make_index_sequence<field_count_v<value_type>>{}));
  COALESCE_HOST_DEVICE explicit no_COALESCE_FIELDS_for(const members& m) : members_(m) {}

  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const value_type& v) const {
    this->assign(v);
    return *this;
  }
  // Assigning one element to another copies the values, as for T.
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const no_COALESCE_FIELDS_for& other) const {
    this->assign(static_cast<value_type>(other));
    return *this;
  }
  no_COALESCE_FIELDS_for(const no_COALESCE_FIELDS_for&) = default;

 private:
  members members_;

  COALESCE_HOST_DEVICE friend const members& members_of(const no_COALESCE_FIELDS_for& p) { return p.members_; }
};

// The proxy of struct Q: the one COALESCE_FIELDS named, else a vector type's, else an array
// wrapper's, else the positional one.
enum class reference_kind { positional, named, vector, array };
template <class T>
constexpr reference_kind reference_kind_of() {
  if constexpr (has_named_fields<T>::value) {
    return reference_kind::named;
  } else if constexpr (is_cuda_vector_type_v<T>) {
    return reference_kind::vector;
  } else if constexpr (wraps_array_v<T> && !keep_whole<T>::value) {
    return reference_kind::array;
  } else {
    return reference_kind::positional;
  }
}
template <class Q, reference_kind Kind>
struct reference_of_kind {
  using type = no_COALESCE_FIELDS_for<Q>;
};
template <class Q>
struct reference_of_kind<Q, reference_kind::named> {
  using type = typename decltype(coalesce_detail_field_names(
      static_cast<const element_of_t<Q>*>(nullptr), static_cast<Q*>(nullptr), ::coalesce_detail_fields_tag{}))::type;
};
template <class Q>
struct reference_of_kind<Q, reference_kind::vector> {
  using type = vector_reference<Q, element_of_t<Q>>;
};
template <class Q>
struct reference_of_kind<Q, reference_kind::array> {
  using type = array_struct_reference<Q>;
};
template <class Q, class>
struct reference_for : reference_of_kind<Q, reference_kind_of<element_of_t<Q>>()> {};

}  // namespace detail

/// The type of view[i] for a soa_view<T> (T or const T).
template <class T>
using soa_reference_t = typename detail::reference_for<T>::type;
/// The type of the element coalesce::for_each hands f for a soa_view<T>: view[i]'s members, with
/// each field of numbers a coalesce::tracked_field (so that the columns f only writes are not
/// loaded). It converts to soa_reference_t<T>.
template <class T>
using for_each_reference_t = typename detail::reference_for<detail::tracked<T>>::type;

/// Field I of an element: of a soa_view element (view[i]) or of a plain struct (p[i]), so kernels
/// written with `get<I>` work on both layouts.
template <std::size_t I, class Ref>
COALESCE_HOST_DEVICE constexpr decltype(auto) get(Ref&& element) {
  if constexpr (std::is_base_of_v<detail::soa_reference_tag, std::remove_cv_t<std::remove_reference_t<Ref>>>) {
    return element.template get<I>();
  } else {
    return detail::get_leaf<I>(detail::tie_fields(element));
  }
}

/// The element a proxy refers to, as a value of its own: `auto t = view[i]` is another proxy (a
/// reference, as with std::vector<bool> or C++23's std::views::zip), and writing through it writes
/// the columns; `auto t = coalesce::value(view[i])` is a T. For anything else, a copy.
template <class Ref>
COALESCE_HOST_DEVICE constexpr auto value(const Ref& element) {
  if constexpr (std::is_base_of_v<detail::soa_reference_tag, Ref>) {
    return static_cast<typename Ref::value_type>(element);
  } else {
    return element;
  }
}

/// The number of fields coalesce sees in T (its own, as declared).
template <class T>
inline constexpr std::size_t field_count_v = detail::field_count_v<T>;
/// The number of columns a soa_vector<T> stores: T's leaves, once every field that is a struct,
/// a CUDA vector type or an array is split into its own fields or elements, recursively (a field
/// whose type is marked coalesce::keep_whole stays one).
template <class T>
inline constexpr std::size_t leaf_count_v = detail::leaf_count_v<T>;
/// The leaf index of the first leaf of field I of T: field I's leaves are columns
/// first_leaf_v<T, I>, first_leaf_v<T, I> + 1, ... of a soa_view<T> (leaf_column<L>()).
template <class T, std::size_t I>
inline constexpr std::size_t first_leaf_v = detail::leaf_starts_v<T>.at[I];
/// The type of leaf L of T: what column L of a soa_vector<T> stores.
template <class T, std::size_t L>
using leaf_t = detail::leaf_type_t<T, L>;
/// The type of field I of T.
template <class T, std::size_t I>
using field_t = detail::field_type_t<T, I>;

}  // namespace coalesce
