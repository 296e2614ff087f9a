// coalesce: what view[i] is. A soa_view's element is a proxy of references into the columns:
// positional (get<I>(view[i])) for any aggregate, named (view[i].x) once COALESCE_FIELDS has
// named the fields (<coalesce/soa_fields.hpp>). Also the checks on what an element type may be.
// Host-capable; included by <coalesce/soa.hpp>, which is what users include.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

// A global-namespace type that coalesce passes to the functions COALESCE_FIELDS defines, so that
// argument-dependent lookup also searches the global namespace (see detail::has_named_fields).
struct coalesce_detail_fields_tag {};

namespace coalesce {
namespace detail {

template <class Q, class F>
using qualify_like_t = std::conditional_t<std::is_const_v<Q>, const F, F>;

template <class T, std::size_t... I>
constexpr bool check_fields(std::index_sequence<I...>) {
  static_assert((std::is_trivially_copyable_v<field_type_t<T, I>> && ...),
                "coalesce::soa_vector<T>: every field of T must be trivially copyable (columns move with "
                "cudaMemcpy); store indices or handles instead of objects that own memory");
  return true;
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
                  "coalesce::soa_vector<T>: T has more than 24 fields; group related fields into structs of "
                  "their own");
    static_assert(n > max_fields || std::is_copy_assignable_v<T>,
                  "coalesce::soa_vector<T>: T has a reference or const field; store values (or indices) instead");
    static_assert(n > max_fields || !std::is_copy_assignable_v<T> || n >= 1, "coalesce::soa_vector<T>: T has no fields");
    if constexpr (n >= 1 && n <= max_fields && std::is_copy_assignable_v<T>) {
      constexpr bool plain_fields = fields_fill_struct<T>();
      static_assert(plain_fields,
                    "coalesce::soa_vector<T>: T's fields do not fill it as their types say: T has a bit-field "
                    "(or a member with its own alignas); give each field a whole type of its own");
      if constexpr (plain_fields) return check_fields<T>(std::make_index_sequence<n>{});
    }
  }
  return true;
}

template <class T>
inline constexpr std::size_t field_count_v = count_fields<T>();

// Whether fields I of T and the member `member` are the same field: compared by address in a
// constant-evaluated probe object.
template <class T, std::size_t I, class F>
COALESCE_HOST_DEVICE constexpr bool is_field(F T::*member) {
  if constexpr (std::is_same_v<field_type_t<T, I>, std::remove_cv_t<F>>) {
    T probe{};
    return static_cast<const void*>(&(probe.*member)) == static_cast<const void*>(&get_leaf<I>(tie_fields(probe)));
  } else {
    return false;
  }
}

template <class T, class F, std::size_t... I>
COALESCE_HOST_DEVICE constexpr std::size_t field_index(F T::*member, std::index_sequence<I...>) {
  std::size_t index = sizeof...(I);
  ((is_field<T, I>(member) ? (index = I, true) : false) || ...);
  return index;
}

// The index of the field `Member` (a pointer to a data member of T).
template <class T, auto Member>
inline constexpr std::size_t field_index_v = field_index(Member, std::make_index_sequence<field_count_v<T>>{});

// --- element proxies ----------------------------------------------------------------------

// Marks the proxies that view[i] returns, for coalesce::get and the iterators.
struct soa_reference_tag {};

// view[i] when T has no COALESCE_FIELDS: positional access only, through get<I>. The name is
// the hint a compiler prints when code writes view[i].x without the macro: "class
// coalesce::detail::no_COALESCE_FIELDS_for<Particle> has no member x".
template <class T>
class no_COALESCE_FIELDS_for : public soa_reference_tag {
  using references = decltype(tie_fields(std::declval<T&>()));

 public:
  using value_type = std::remove_const_t<T>;
  COALESCE_HOST_DEVICE explicit no_COALESCE_FIELDS_for(const references& refs) : refs_(refs) {}

  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& get() const {
    return get_leaf<I>(refs_);
  }
  // Gather: the element as a T.
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    tie_fields(v).assign_from(refs_);
    return v;
  }
  // Scatter: every field of `v` into its column.
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const value_type& v) const {
    refs_.assign_from(tie_fields(v));
    return *this;
  }
  // Assigning one element to another copies the values, as for T.
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const no_COALESCE_FIELDS_for& other) const {
    refs_.assign_from(other.refs_);
    return *this;
  }
  no_COALESCE_FIELDS_for(const no_COALESCE_FIELDS_for&) = default;
  // Exchanges the elements two proxies refer to (what std::iter_swap and std::sort call).
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  COALESCE_HOST_DEVICE friend void swap(const no_COALESCE_FIELDS_for& a, const no_COALESCE_FIELDS_for& b) {
    const value_type held = a;
    a = b;
    b = held;
  }

 private:
  references refs_;
};

// The base of the named proxies COALESCE_FIELDS generates: gather, scatter and get<I>.
template <class Derived, class Q>
struct named_soa_reference : soa_reference_tag {
  using value_type = std::remove_const_t<Q>;
  static constexpr std::size_t fields = field_count_v<value_type>;

  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& get() const {
    return get_leaf<I>(tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}));
  }
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    tie_fields(v).assign_from(tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}));
    return v;
  }
  COALESCE_HOST_DEVICE void assign(const value_type& v) const {
    tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}).assign_from(tie_fields(v));
  }
  // Exchanges the elements two proxies refer to (what std::iter_swap and std::sort call; found by
  // argument-dependent lookup through the proxy's base).
  template <class D = Derived, std::enable_if_t<!std::is_const_v<Q> && std::is_same_v<D, Derived>, int> = 0>
  COALESCE_HOST_DEVICE friend void swap(const D& a, const D& b) {
    const value_type held = a;
    a.assign(b);
    b.assign(held);
  }
};

// What a COALESCE_FIELDS declaration defines, found by argument-dependent lookup from here:
//   coalesce_detail_fields_declared(const T*, tag)        defined first, so that the macro can
//                                                          check that lookup finds it;
//   coalesce_detail_field_names(const T*, Q*, tag)        returns type_identity<the proxy for Q>,
// where Q is T or const T. The tag is a global-namespace type, so the lookup searches the global
// namespace as well as T's: the macro works in T's namespace and at global scope.
template <class R>
struct type_identity {
  using type = R;
};

template <class T, class = void>
struct has_named_fields : std::false_type {};
template <class T>
struct has_named_fields<T, std::void_t<decltype(coalesce_detail_field_names(static_cast<const T*>(nullptr),
                                                                          static_cast<T*>(nullptr),
                                                                          ::coalesce_detail_fields_tag{}))>>
    : std::true_type {};

template <class Q, bool Named = has_named_fields<std::remove_const_t<Q>>::value>
struct reference_for {
  using type = no_COALESCE_FIELDS_for<Q>;
};
template <class Q>
struct reference_for<Q, true> {
  using type = typename decltype(coalesce_detail_field_names(static_cast<const std::remove_const_t<Q>*>(nullptr),
                                                             static_cast<Q*>(nullptr),
                                                             ::coalesce_detail_fields_tag{}))::type;
};

}  // namespace detail

// The type of view[i] for a soa_view<T> (T or const T).
template <class T>
using soa_reference_t = typename detail::reference_for<T>::type;

// Field I of an element: of a soa_view element (view[i]) or of a plain struct (p[i]), so kernels
// written with get<I> work on both layouts.
template <std::size_t I, class Ref>
COALESCE_HOST_DEVICE constexpr decltype(auto) get(Ref&& element) {
  if constexpr (std::is_base_of_v<detail::soa_reference_tag, std::remove_cv_t<std::remove_reference_t<Ref>>>) {
    return element.template get<I>();
  } else {
    return detail::get_leaf<I>(detail::tie_fields(element));
  }
}

// The element a proxy refers to, as a value of its own: `auto t = view[i]` is another proxy (a
// reference, as with std::vector<bool> or C++23's std::views::zip), and writing through it writes
// the columns; `auto t = coalesce::value(view[i])` is a T. For anything else, a copy.
template <class Ref>
COALESCE_HOST_DEVICE constexpr auto value(const Ref& element) {
  if constexpr (std::is_base_of_v<detail::soa_reference_tag, Ref>) {
    return static_cast<typename Ref::value_type>(element);
  } else {
    return element;
  }
}

// The number of fields coalesce sees in T.
template <class T>
inline constexpr std::size_t field_count_v = detail::field_count_v<T>;
// The type of field I of T.
template <class T, std::size_t I>
using field_t = detail::field_type_t<T, I>;

}  // namespace coalesce
