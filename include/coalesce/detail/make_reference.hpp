// coalesce::detail: making an element's proxy from a source of leaves - the columns at an
// index (view[i]), a T in registers, or the tracked fields of for_each's element. Users never
// include this header; soa_view.hpp and the walks do. Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/soa_reference.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// --- making proxies from a source of leaves ------------------------------------------------
// A source of leaves has `template <std::size_t L> auto& leaf() const`: a reference to leaf L of
// the element (into column L at the element's index, or into a T in registers).

// The leaves of a T in registers.
template <class Q>
struct value_leaves {
  Q& value;
  template <std::size_t L>
  COALESCE_HOST_DEVICE auto& leaf() const {
    return struct_leaf<L>(value);
  }
};

// for_each's element in registers: every leaf of a T, those of numbers as tracked_fields, from
// the values loaded. The element f is handed refers to it (make_reference<tracked<T>>); once f
// returns, give() puts the values back in a T and says which leaves f overwrote, which the walk
// stores without comparing to (or loading) what the column held.
template <class F>
using tracked_slot_t = std::conditional_t<tracks_v<F>, tracked_field<F>, F>;
template <std::size_t L, class F>
struct tracked_slot {
  COALESCE_HOST_DEVICE explicit tracked_slot(const F& value) : slot(value) {}
  tracked_slot_t<F> slot;
};
template <class T, class Leaves = std::make_index_sequence<leaf_count_v<T>>>
struct tracked_leaves;
template <class T, std::size_t... L>
struct tracked_leaves<T, std::index_sequence<L...>> : tracked_slot<L, leaf_type_t<T, L>>... {
  COALESCE_HOST_DEVICE explicit tracked_leaves(const T& loaded)
      : tracked_slot<L, leaf_type_t<T, L>>(struct_leaf<L>(loaded))... {}

  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& leaf() {
    return static_cast<tracked_slot<I, leaf_type_t<T, I>>&>(*this).slot;
  }
  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& leaf() const {
    return static_cast<const tracked_slot<I, leaf_type_t<T, I>>&>(*this).slot;
  }
  COALESCE_HOST_DEVICE void give(T& to, bool (&overwritten)[sizeof...(L)]) const {
    ((struct_leaf<L>(to) = held(leaf<L>()), overwritten[L] = was_overwritten(leaf<L>())), ...);
  }

 private:
  template <class F>
  COALESCE_HOST_DEVICE static const F& held(const tracked_field<F>& f) {
    return f.held();
  }
  template <class F>
  COALESCE_HOST_DEVICE static const F& held(const F& f) {
    return f;
  }
  template <class F>
  COALESCE_HOST_DEVICE static bool was_overwritten(const tracked_field<F>& f) {
    return f.overwritten();
  }
  template <class F>
  COALESCE_HOST_DEVICE static bool was_overwritten(const F&) {
    return false;
  }
};
template <class T>
struct tracked_source {
  tracked_leaves<T>& leaves;
  template <std::size_t L>
  COALESCE_HOST_DEVICE auto& leaf() const {
    return leaves.template leaf<L>();
  }
};

// The leaves of a proxy of for_each's element as plain references (detail::tracked): each
// tracked_field is counted as read and written, as any value handed out by reference is.
template <class F>
COALESCE_HOST_DEVICE F& expose(tracked_field<F>& field) {
  return field;
}
template <class F>
COALESCE_HOST_DEVICE F& expose(F& leaf) {
  return leaf;
}
template <class P>
struct exposed_leaves {
  const P& proxy;
  template <std::size_t L>
  COALESCE_HOST_DEVICE auto& leaf() const {
    return expose(reference_leaf<L>(proxy));
  }
};

// The leaves of a field, which start at leaf Offset of its element.
template <std::size_t Offset, class Leaves>
struct shifted_leaves {
  const Leaves& leaves;
  template <std::size_t L>
  COALESCE_HOST_DEVICE auto& leaf() const {
    return leaves.template leaf<Offset + L>();
  }
};
template <std::size_t Offset, class Leaves>
COALESCE_HOST_DEVICE shifted_leaves<Offset, Leaves> shift(const Leaves& leaves) {
  return {leaves};
}
template <std::size_t Offset, std::size_t Earlier, class Leaves>
COALESCE_HOST_DEVICE shifted_leaves<Earlier + Offset, Leaves> shift(const shifted_leaves<Earlier, Leaves>& leaves) {
  return {leaves.leaves};
}

// Under COALESCE_DEBUG: whether an array field's columns are equally far apart.
template <class Source, class Byte, std::size_t... L>
COALESCE_HOST_DEVICE void check_array_stride(const Source& at, Byte* first, std::ptrdiff_t stride,
                                             std::index_sequence<L...>) {
  (void)at, (void)first, (void)stride;
  COALESCE_ASSERT(((reinterpret_cast<Byte*>(address_of(at.template leaf<L>())) == first + std::ptrdiff_t(L) * stride) &&
                   ...),
                  "coalesce::soa_view: the columns of an array field must be equally far apart, as soa_vector lays "
                  "them out");
}

// An array field's proxy: its first leaf, and the distance in bytes between two.
template <class R, std::size_t Leaves, class Source>
COALESCE_HOST_DEVICE R make_array(const Source& at) {
  auto* first = address_of(at.template leaf<0>());
  if constexpr (Leaves == 1) {
    return R(first, 0);
  } else {
    using byte = std::conditional_t<std::is_const_v<std::remove_reference_t<decltype(*first)>>, const unsigned char,
                                    unsigned char>;
    const std::ptrdiff_t stride =
        reinterpret_cast<byte*>(address_of(at.template leaf<1>())) - reinterpret_cast<byte*>(first);
    check_array_stride(at, reinterpret_cast<byte*>(first), stride, std::make_index_sequence<Leaves>{});
    return R(first, stride);
  }
}

// The member of a proxy for a field of type F, whose leaves `at` finds.
template <class Q, class F, class Source>
COALESCE_HOST_DEVICE member_reference_t<Q, F> make_member(const Source& at) {
  if constexpr (!splits_v<F>) {
    return at.template leaf<0>();
  } else if constexpr (std::is_array_v<F>) {
    return make_array<member_reference_t<Q, F>, leaf_count_of_v<F>>(at);
  } else {
    return make_reference<qualify_like_t<Q, F>>(at);
  }
}

template <class Q, class Source, std::size_t... I>
COALESCE_HOST_DEVICE typename reference_for<Q>::type make_reference(const Source& at, std::index_sequence<I...>) {
  using T = element_of_t<Q>;
  using R = typename reference_for<Q>::type;
  if constexpr (std::is_base_of_v<array_reference_tag, R>) {
    return make_array<R, leaf_count_of_v<T>>(at);
  } else if constexpr (std::is_same_v<R, no_COALESCE_FIELDS_for<Q>>) {
    if constexpr (flat_v<T>) {
      return R(typename R::members(at.template leaf<I>()...));
    } else {
      return R(typename R::members(make_member<Q, field_type_t<T, I>>(shift<leaf_starts_v<T>.at[I]>(at))...));
    }
  } else if constexpr (has_named_fields<T>::value) {
    if constexpr (flat_v<T>) {
      return R(members_tag{}, at.template leaf<I>()...);
    } else {
      return R(members_tag{}, make_member<Q, field_type_t<T, I>>(shift<leaf_starts_v<T>.at[I]>(at))...);
    }
  } else {
    return R(at);  // a vector type's: its components are its leaves
  }
}

// The proxy of the element whose leaves `at` finds, for Q = T or const T.
template <class Q, class Source>
COALESCE_HOST_DEVICE typename reference_for<Q>::type make_reference(const Source& at) {
  return make_reference<Q>(at, std::make_index_sequence<field_count_v<element_of_t<Q>>>{});
}

}  // namespace coalesce::detail
