// coalesce::detail: the foundations of an element's proxy - what it is for (T, const T, or
// for_each's tracked element), what its members refer to, and the base that gathers, scatters and
// indexes it. Users never include this header; <coalesce/soa_reference.hpp> does. Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_checks.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/tracked_field.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

// A global-namespace type that coalesce passes to the functions COALESCE_FIELDS defines, so that
// argument-dependent lookup also searches the global namespace (see detail::has_named_fields).
struct coalesce_detail_fields_tag {};

namespace coalesce {
namespace detail {

// What a proxy is for: Q is T (view[i] of a soa_view<T>), const T (read-only), or tracked<T>:
// for_each's element, a T in registers whose fields of numbers are tracked_fields, so that the
// walk learns which columns f wrote without reading them (coalesce/tracked_field.hpp).
template <class T>
struct tracked;
template <class Q>
struct element_of {
  using type = std::remove_const_t<Q>;
};
template <class T>
struct element_of<tracked<T>> {
  using type = T;
};
template <class Q>
using element_of_t = typename element_of<Q>::type;
template <class Q>
inline constexpr bool is_tracked_v = false;
template <class T>
inline constexpr bool is_tracked_v<tracked<T>> = true;

// A field F of a Q: const F, F, or tracked<F>.
template <class Q, class F>
struct qualify_like {
  using type = std::conditional_t<std::is_const_v<Q>, const F, F>;
};
template <class T, class F>
struct qualify_like<tracked<T>, F> {
  using type = tracked<F>;
};
template <class Q, class F>
using qualify_like_t = typename qualify_like<Q, F>::type;

// What a proxy's member for a leaf of type F refers to: the leaf, or, in for_each's element, a
// tracked_field holding it where F is a number (a leaf of another type, a struct kept whole or a
// pointer, is referred to plainly, and always stored where its bits changed).
template <class F>
inline constexpr bool tracks_v = std::is_arithmetic_v<F> || std::is_enum_v<F>;
template <class Q, class F>
struct leaf_reference {
  using type = qualify_like_t<Q, F>&;
};
template <class T, class F>
struct leaf_reference<tracked<T>, F> {
  using type = std::conditional_t<tracks_v<F>, tracked_field<F>, F>&;
};
template <class Q, class F>
using leaf_reference_t = typename leaf_reference<Q, F>::type;

// The address of an object, whatever its operator& does (a tracked_field's gives its value's).
template <class X>
COALESCE_HOST_DEVICE constexpr X* address_of(X& x) noexcept {
  return __builtin_addressof(x);
}

// --- element proxies ----------------------------------------------------------------------
//
// A proxy holds references into the leaf columns (detail/leaves.hpp). Its members mirror T's
// fields: a field that is one leaf is a reference; a field that splits is a proxy of its own,
// so view[i].pos.x is a reference into the pos.x column; an array field is an array_reference,
// so view[i].pos[k] is one too. A proxy is made from a source of leaves (the columns at index
// i, or a T in registers), which a maker walks field by field.

// Marks every proxy whose leaves reference_leaf reaches.
struct leaf_references_tag {};
// Marks the proxies of a struct (what view[i] returns), for coalesce::get, coalesce::value and
// the iterators.
struct soa_reference_tag : leaf_references_tag {};
// Marks the proxies of an array field.
struct array_reference_tag : leaf_references_tag {};

template <class R>
struct type_identity {
  using type = R;
};

// What a COALESCE_FIELDS declaration defines, found by argument-dependent lookup from here:
//   coalesce_detail_fields_declared(const T*, tag)        defined first, so that the macro can
//                                                          check that lookup finds it;
//   coalesce_detail_field_names(const T*, Q*, tag)        returns type_identity<the proxy for Q>,
// where Q is T or const T. The tag is a global-namespace type, so the lookup searches the global
// namespace as well as T's: the macro works in T's namespace and at global scope.
template <class T, class = void>
struct has_named_fields : std::false_type {};
template <class T>
struct has_named_fields<T,
                        std::void_t<decltype(coalesce_detail_field_names(
                            static_cast<const T*>(nullptr), static_cast<T*>(nullptr), ::coalesce_detail_fields_tag{}))>>
    : std::true_type {};

// The proxy for a struct Q (T or const T), chosen in reference_for below.
template <class Q, class = void>
struct reference_for;

// What a proxy holds for a field of type F, for Q (const or not): a reference to a field that is
// one leaf, an array_reference for an array, the struct's own proxy for a struct that splits.
template <class Q, class F>
class array_reference;
template <class Q, class F, bool Splits = splits_v<F>, bool Array = std::is_array_v<F>>
struct member_reference {
  using type = leaf_reference_t<Q, F>;
};
template <class Q, class F>
struct member_reference<Q, F, true, true> {
  using type = array_reference<Q, F>;
};
template <class Q, class F>
struct member_reference<Q, F, true, false> {
  using type = typename reference_for<qualify_like_t<Q, F>>::type;
};
template <class Q, class F>
using member_reference_t = typename member_reference<Q, F>::type;

// The members of a struct proxy as a ref_tuple: a proxy generated by COALESCE_FIELDS (or a
// vector type's) is bound like a struct; the positional one holds its tuple (overload below).
template <class P>
COALESCE_HOST_DEVICE auto members_of(const P& p) {
  return tie_fields(p, field_count_constant<field_count_v<typename P::value_type>>{});
}

template <std::size_t L, class P>
COALESCE_HOST_DEVICE decltype(auto) reference_leaf(const P& p);

// Leaf L of a proxy's member: the member itself when it is a reference to a leaf.
template <std::size_t L, class M>
COALESCE_HOST_DEVICE decltype(auto) member_leaf(M&& member) {
  if constexpr (std::is_base_of_v<leaf_references_tag, std::remove_cv_t<std::remove_reference_t<M>>>) {
    return reference_leaf<L>(member);
  } else {
    return static_cast<M&&>(member);
  }
}

// Leaf L of the element a proxy refers to: a reference into that leaf's column.
template <std::size_t L, class P>
COALESCE_HOST_DEVICE decltype(auto) reference_leaf(const P& p) {
  if constexpr (std::is_base_of_v<array_reference_tag, P>) {
    return p.leaf_at(L);
  } else {
    using T = typename P::value_type;
    constexpr std::size_t field = field_of_leaf_v<T, L>;
    return member_leaf<L - leaf_starts_v<T>.at[field]>(get_leaf<field>(members_of(p)));
  }
}

// Gather (every leaf of `to` from the proxy) and scatter (every leaf of `from` into the columns).
template <class T, class P, std::size_t... L>
COALESCE_HOST_DEVICE void gather_leaves(T& to, const P& p, std::index_sequence<L...>) {
  ((field_leaf<L>(to) = reference_leaf<L>(p)), ...);
}
template <class P, class T, std::size_t... L>
COALESCE_HOST_DEVICE void scatter_leaves(const P& p, const T& from, std::index_sequence<L...>) {
  ((reference_leaf<L>(p) = field_leaf<L>(from)), ...);
}

// What COALESCE_METHODS (<coalesce/element_methods.hpp>) declares, found by argument-dependent
// lookup as the fields are: coalesce_detail_methods(const T*, tag) returns methods_of<M>, and
// M<Proxy> is a base of T's proxies that forwards T's member functions to the element. A type
// without it gets an empty base.
template <template <class> class M>
struct methods_of {};
template <class Proxy, template <class> class M>
type_identity<M<Proxy>> methods_for(methods_of<M>);  // decltype only
template <class T, class Proxy, class = void>
struct element_methods {
  struct none {};
  using type = none;
};
template <class T, class Proxy>
struct element_methods<
    T, Proxy,
    std::void_t<decltype(coalesce_detail_methods(static_cast<const T*>(nullptr), ::coalesce_detail_fields_tag{}))>> {
  using type = typename decltype(methods_for<Proxy>(
      coalesce_detail_methods(static_cast<const T*>(nullptr), ::coalesce_detail_fields_tag{})))::type;
};

template <class Q, class Source>
COALESCE_HOST_DEVICE typename reference_for<Q>::type make_reference(const Source& at);
template <class P>
struct exposed_leaves;

// The base of a struct's proxy: gather, scatter and get<I>, and T's member functions where
// COALESCE_METHODS names them. Derived holds the members.
template <class Derived, class Q>
struct struct_reference_base : soa_reference_tag, element_methods<element_of_t<Q>, Derived>::type {
  using value_type = element_of_t<Q>;
  static constexpr bool read_only = std::is_const_v<Q>;  // a soa_view<const T>'s element
  using leaf_indices = std::make_index_sequence<leaf_count_v<value_type>>;

  template <std::size_t I>
  COALESCE_HOST_DEVICE member_reference_t<Q, field_type_t<value_type, I>> get() const {
    return get_leaf<I>(members_of(derived()));
  }
  // Gather: the element as a value_type.
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    if constexpr (flat_v<value_type>) {
      tie_fields(v).assign_from(members_of(derived()));
    } else {
      gather_leaves(v, derived(), leaf_indices{});
    }
    return v;
  }
  // Scatter: every leaf of `v` into its column.
  COALESCE_HOST_DEVICE void assign(const value_type& v) const {
    static_assert(!std::is_const_v<Q>, "coalesce::soa_view<const T>: its elements are read-only");
    if constexpr (flat_v<value_type>) {
      members_of(derived()).assign_from(tie_fields(v));
    } else {
      scatter_leaves(derived(), v, leaf_indices{});
    }
  }
  // for_each's element converts to view[i]'s type, so that f declared to take a
  // coalesce::soa_reference_t<T> takes it too. That proxy refers to the values in registers,
  // and every field counts as read and written: what f changes is stored where its bits
  // changed, and every column is loaded (take auto&& for the columns f only writes not to be).
  template <class Tracked = Q, std::enable_if_t<is_tracked_v<Tracked>, int> = 0>
  COALESCE_HOST_DEVICE operator typename reference_for<element_of_t<Tracked>>::type() const {
    return make_reference<value_type>(exposed_leaves<Derived>{derived()});
  }
  // Exchanges the elements two proxies refer to (what std::iter_swap and std::sort call; found by
  // argument-dependent lookup through the proxy's base).
  template <class D = Derived, std::enable_if_t<!std::is_const_v<Q> && std::is_same_v<D, Derived>, int> = 0>
  COALESCE_HOST_DEVICE friend void swap(const D& a, const D& b) {
    const value_type held = a;
    a.assign(b);
    b.assign(held);
  }

 private:
  COALESCE_HOST_DEVICE const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

// Selects the constructor of a COALESCE_FIELDS proxy that takes its members, in field order.
struct members_tag {};

// The base of the named proxies COALESCE_FIELDS generates.
template <class Derived, class Q>
struct named_soa_reference : struct_reference_base<Derived, Q> {};

}  // namespace detail
}  // namespace coalesce
