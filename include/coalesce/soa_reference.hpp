// coalesce: what view[i] is. A soa_view's element is a proxy of references into the columns:
// positional (get<I>(view[i])) for any aggregate, named (view[i].x) once COALESCE_FIELDS has
// named the fields (<coalesce/soa_fields.hpp>). Also the checks on what an element type may be.
// Host-capable; included by <coalesce/soa.hpp>, which is what users include.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/cuda_vector_types.hpp>
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
struct has_named_fields<T, std::void_t<decltype(coalesce_detail_field_names(static_cast<const T*>(nullptr),
                                                                          static_cast<T*>(nullptr),
                                                                          ::coalesce_detail_fields_tag{}))>>
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

template <class Q, class Source>
COALESCE_HOST_DEVICE typename reference_for<Q>::type make_reference(const Source& at);
template <class P>
struct exposed_leaves;

// The base of a struct's proxy: gather, scatter and get<I>. Derived holds the members.
template <class Derived, class Q>
struct struct_reference_base : soa_reference_tag {
  using value_type = element_of_t<Q>;
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

// The proxy of a CUDA vector type (float3, int2, double4_16a...): view[i].pos.x with no
// COALESCE_FIELDS, since CUDA names their fields x, y, z, w.
template <class Q, class V, std::size_t N = count_fields<V>()>
struct vector_reference;
#define COALESCE_DETAIL_VECTOR_REFERENCE(N, Members, ...)                                                   \
  template <class Q, class V>                                                                               \
  struct vector_reference<Q, V, N> : struct_reference_base<vector_reference<Q, V, N>, Q> {                  \
    COALESCE_DETAIL_UNPAREN(Members)                                                                        \
    template <class Source>                                                                                 \
    COALESCE_HOST_DEVICE explicit vector_reference(const Source& at) : __VA_ARGS__ {}                       \
    vector_reference(const vector_reference&) = default;                                                    \
    COALESCE_HOST_DEVICE const vector_reference& operator=(const V& v) const {                              \
      this->assign(v);                                                                                      \
      return *this;                                                                                         \
    }                                                                                                       \
    COALESCE_HOST_DEVICE const vector_reference& operator=(const vector_reference& other) const {           \
      this->assign(static_cast<V>(other));                                                                  \
      return *this;                                                                                         \
    }                                                                                                       \
  };
#define COALESCE_DETAIL_COMPONENT(name) leaf_reference_t<Q, decltype(V::name)> name;
#define COALESCE_DETAIL_FROM(name, index) name(at.template leaf<index>())
COALESCE_DETAIL_VECTOR_REFERENCE(1, (COALESCE_DETAIL_COMPONENT(x)), COALESCE_DETAIL_FROM(x, 0))
COALESCE_DETAIL_VECTOR_REFERENCE(2, (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1))
COALESCE_DETAIL_VECTOR_REFERENCE(3, (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y) COALESCE_DETAIL_COMPONENT(z)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1), COALESCE_DETAIL_FROM(z, 2))
COALESCE_DETAIL_VECTOR_REFERENCE(4, (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y) COALESCE_DETAIL_COMPONENT(z)
                                         COALESCE_DETAIL_COMPONENT(w)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1), COALESCE_DETAIL_FROM(z, 2),
                                 COALESCE_DETAIL_FROM(w, 3))
#undef COALESCE_DETAIL_FROM
#undef COALESCE_DETAIL_COMPONENT
#undef COALESCE_DETAIL_VECTOR_REFERENCE

// The proxy of an array field E[N] (E a leaf, or an array of them): view[i].pos[k] is a
// reference into column k of pos, for a k known only at run time. The N columns are found from
// the first one and the distance between two: a soa_vector lays out the columns of one array
// field at equal distances, and registers (for_each's elements) hold them side by side.
template <class Q, class F>
class array_reference : public array_reference_tag {
  using element = std::remove_extent_t<F>;
  using leaf = std::remove_reference_t<leaf_reference_t<Q, std::remove_all_extents_t<F>>>;
  using byte = std::conditional_t<std::is_const_v<leaf>, const unsigned char, unsigned char>;
  static constexpr std::size_t element_leaves = leaf_count_of<element>();

 public:
  COALESCE_HOST_DEVICE array_reference(leaf* first, std::ptrdiff_t stride_bytes) : first_(first), stride_(stride_bytes) {}

  COALESCE_HOST_DEVICE static constexpr std::size_t size() noexcept { return std::extent_v<F>; }
  // Element k. Precondition: k < size() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE member_reference_t<Q, element> operator[](std::size_t k) const {
    COALESCE_ASSERT(k < size(), "coalesce: index of an array field out of range");
    if constexpr (std::is_array_v<element>) {
      return {address_of(leaf_at(k * element_leaves)), stride_};
    } else {
      return leaf_at(k);
    }
  }
  // Leaf l of the array (its elements' leaves, in order).
  COALESCE_HOST_DEVICE leaf& leaf_at(std::size_t l) const {
    return *reinterpret_cast<leaf*>(reinterpret_cast<byte*>(first_) + std::ptrdiff_t(l) * stride_);
  }

 private:
  leaf* first_;
  std::ptrdiff_t stride_;
};

// The proxy of a struct whose one field is an array, as std::array and cuda::std::array are:
// view[i].pos[k] as for a C array, and the struct's value as a whole.
template <class Q>
class array_struct_reference : public soa_reference_tag,
                               public array_reference<Q, wrapped_array_t<element_of_t<Q>>> {
  using elements = array_reference<Q, wrapped_array_t<element_of_t<Q>>>;

 public:
  using value_type = element_of_t<Q>;
  using elements::elements;

  template <std::size_t I>
  COALESCE_HOST_DEVICE elements get() const {
    static_assert(I == 0, "coalesce::get<I>: this struct has one field, an array");
    return *this;
  }
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    gather_leaves(v, static_cast<const elements&>(*this), std::make_index_sequence<leaf_count_of_v<value_type>>{});
    return v;
  }
  COALESCE_HOST_DEVICE const array_struct_reference& operator=(const value_type& v) const {
    static_assert(!std::is_const_v<Q>, "coalesce::soa_view<const T>: its elements are read-only");
    scatter_leaves(static_cast<const elements&>(*this), v, std::make_index_sequence<leaf_count_of_v<value_type>>{});
    return *this;
  }
  COALESCE_HOST_DEVICE const array_struct_reference& operator=(const array_struct_reference& other) const {
    return *this = static_cast<value_type>(other);
  }
  array_struct_reference(const array_struct_reference&) = default;
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
  using type = typename decltype(coalesce_detail_field_names(static_cast<const element_of_t<Q>*>(nullptr),
                                                             static_cast<Q*>(nullptr),
                                                             ::coalesce_detail_fields_tag{}))::type;
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

// The type of view[i] for a soa_view<T> (T or const T).
template <class T>
using soa_reference_t = typename detail::reference_for<T>::type;
// The type of the element coalesce::for_each hands f for a soa_view<T>: view[i]'s members, with
// each field of numbers a coalesce::tracked_field (so that the columns f only writes are not
// loaded). It converts to soa_reference_t<T>.
template <class T>
using for_each_reference_t = typename detail::reference_for<detail::tracked<T>>::type;

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

// The number of fields coalesce sees in T (its own, as declared).
template <class T>
inline constexpr std::size_t field_count_v = detail::field_count_v<T>;
// The number of columns a soa_vector<T> stores: T's leaves, once every field that is a struct,
// a CUDA vector type or an array is split into its own fields or elements, recursively (a field
// whose type is marked coalesce::keep_whole stays one).
template <class T>
inline constexpr std::size_t leaf_count_v = detail::leaf_count_v<T>;
// The leaf index of the first leaf of field I of T: field I's leaves are columns
// first_leaf_v<T, I>, first_leaf_v<T, I> + 1, ... of a soa_view<T> (leaf_column<L>()).
template <class T, std::size_t I>
inline constexpr std::size_t first_leaf_v = detail::leaf_starts_v<T>.at[I];
// The type of leaf L of T: what column L of a soa_vector<T> stores.
template <class T, std::size_t L>
using leaf_t = detail::leaf_type_t<T, L>;
// The type of field I of T.
template <class T, std::size_t I>
using field_t = detail::field_type_t<T, I>;

}  // namespace coalesce
