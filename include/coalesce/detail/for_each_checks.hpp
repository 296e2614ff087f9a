// coalesce::detail: the checks on for_each's f - that it can take the element it is handed, and
// does not take a copy whose changes would be lost - each a static_assert saying how to write f.
// Users never include this header; detail/chunk_walk.hpp does. Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/soa_reference.hpp>  // coalesce::value

#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The first parameter and the result of a callable with one call operator that is not a
// template (a lambda without auto, a functor); nothing for generic or overloaded ones.
template <class M>
struct call_operator {};
template <class C, class R, class A, class... Rest>
struct call_operator<R (C::*)(A, Rest...) const> {
  using first_parameter = A;
  using result = R;
};
template <class C, class R, class A, class... Rest>
struct call_operator<R (C::*)(A, Rest...)> : call_operator<R (C::*)(A, Rest...) const> {};
template <class C, class R, class A, class... Rest>
struct call_operator<R (C::*)(A, Rest...) const noexcept> : call_operator<R (C::*)(A, Rest...) const> {};
template <class C, class R, class A, class... Rest>
struct call_operator<R (C::*)(A, Rest...) noexcept> : call_operator<R (C::*)(A, Rest...) const> {};

template <class F, class = void>
struct takes_a_copy_of {
  template <class Value>
  static constexpr bool loses_changes_to = false;
};
template <class F>
struct takes_a_copy_of<F, std::void_t<typename call_operator<decltype(&F::operator())>::first_parameter>> {
  using op = call_operator<decltype(&F::operator())>;
  // Whether f's parameter is a Value by value, and f returns nothing: what it changes is lost.
  template <class Value>
  static constexpr bool loses_changes_to =
      std::is_void_v<typename op::result> && std::is_same_v<typename op::first_parameter, Value>;
};

// Whether for_each's f can take the element it is handed, and keep what it changes. If not,
// one static_assert says how to write f, and the callers compile no call (which would pile more
// errors on top). Checked in device code: on the host, nvcc hides a device lambda's call
// operator.
template <class F, class Element>
COALESCE_HOST_DEVICE constexpr bool takes_element() {
  constexpr bool ok = std::is_invocable_v<const F&, Element>;
  static_assert(ok, "coalesce::for_each: f cannot take the element it is handed. A soa_view's element is a proxy whose "
                    "fields are references into the columns: declare f's parameter auto or auto&& (or "
                    "coalesce::soa_reference_t<T>), not T&. A span's or pitched_view's element is a T&.");
  if constexpr (ok) {
    using value = decltype(coalesce::value(std::declval<Element>()));
    constexpr bool copy = takes_a_copy_of<F>::template loses_changes_to<value>;
    static_assert(!copy,
                  "coalesce::for_each: f takes the element by value (a copy of T) and returns nothing, so what it "
                  "changes is lost: declare f's parameter auto&& (or coalesce::soa_reference_t<T>; T& for a span or "
                  "pitched_view). To only read the elements, take const T&, or use coalesce::transform.");
    return !copy;
  }
  return ok;
}

}  // namespace coalesce::detail
