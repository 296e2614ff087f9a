// coalesce: COALESCE_METHODS, which makes a struct's member functions callable on its elements in
// columns: view[i].energy() on a soa_view, p.kick(dt) on for_each's element, as on a T. A kernel
// ported from an array of structs keeps its calls. Host-capable; included by <coalesce/soa.hpp>.
//
//   struct Particle {
//     float x, y, z, vx, vy, vz;
//     COALESCE_HOST_DEVICE float energy() const { return 0.5f * (vx * vx + vy * vy + vz * vz); }
//     COALESCE_HOST_DEVICE void kick(float ax, float ay, float az, float dt) { vx += ax * dt; ... }
//   };
//   COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);
//   COALESCE_METHODS(Particle, energy, kick);
//
// How: the element is copied into a T in registers, the member function runs on the copy, and,
// where it may change it (a non-const member function), each leaf whose bits changed is written
// back. Everything is inlined: the compiler drops the loads of the fields the function does not
// read and the stores of those it leaves alone, so a call costs the memory instructions of the
// same code written with the fields by hand (tests/codegen/element_methods.cu holds that).
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/proxy_base.hpp>
#include <coalesce/detail/same_bits.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Each leaf of `after` whose bits differ from `before`'s into the element `p` refers to: a leaf
// the call left alone compares equal to itself, which the compiler sees, and is never written.
template <class P, class T, std::size_t... L>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE void write_changed_leaves(const P& p, const T& before, const T& after,
                                                                    std::index_sequence<L...>) {
  ((same_bits(struct_leaf<L>(before), struct_leaf<L>(after)) ? void()
                                                             : void(reference_leaf<L>(p) = struct_leaf<L>(after))),
   ...);
}

// What a member function returns through the element: a value (a reference into the copy would
// dangle once the call returns, so a reference comes back as a copy of what it refers to).
template <class R>
using method_result_t = std::conditional_t<std::is_reference_v<R>, std::remove_cv_t<std::remove_reference_t<R>>, R>;

// call(element) for the element proxy `p` refers to, `call` a lambda that calls one member function
// of T (COALESCE_METHODS writes it). A const member function runs on a copy; another on a copy
// whose changed leaves are then written back, which a read-only element refuses.
COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <class P, class Call>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE decltype(auto) call_on_element(const P& p, const Call& call) {
  using T = typename P::value_type;
  if constexpr (std::is_invocable_v<const Call&, const T&>) {
    using R = method_result_t<std::invoke_result_t<const Call&, const T&>>;
    const T element = static_cast<T>(p);
    if constexpr (std::is_void_v<R>) {
      call(element);
    } else {
      return R(call(element));
    }
  } else {
    constexpr bool callable = std::is_invocable_v<const Call&, T&>;
    static_assert(callable, "COALESCE_METHODS: this member function cannot be called with these arguments (or T has no "
                            "member function of this name): call it as on a T");
    constexpr bool writable = !P::read_only;
    static_assert(!callable || writable,
                  "COALESCE_METHODS: this member function is not const, so it may change the element, and this "
                  "element is read-only (a soa_view<const T>'s): make the member function const if it changes "
                  "nothing, or call it on a copy, coalesce::value(p)");
    if constexpr (callable && writable) {
      using R = method_result_t<std::invoke_result_t<const Call&, T&>>;
      T element = static_cast<T>(p);
      const T before = element;
      using leaves = std::make_index_sequence<leaf_count_v<T>>;
      if constexpr (std::is_void_v<R>) {
        call(element);
        write_changed_leaves(p, before, element, leaves{});
      } else {
        R result = R(call(element));
        write_changed_leaves(p, before, element, leaves{});
        return result;
      }
    }
  }
}

}  // namespace coalesce::detail

/// Makes the member functions `...` of `Type` callable on its elements in a soa_view, in a
/// soa_vector on the host and in for_each's element, as on a T: view[i].energy(), p.kick(dt).
/// Write it after COALESCE_FIELDS(Type, ...) (or without it, for the positional proxy), in Type's
/// namespace or at global scope, before the first use of an element; the member functions the
/// elements call on the device must be __host__ __device__ (COALESCE_HOST_DEVICE). Overloads and
/// member function templates whose arguments are deduced are called as on a T; explicit template
/// arguments (p.f<int>()) are not forwarded: call coalesce::value(p).f<int>().
///
/// A call copies the element into a T in registers and runs the member function there. A const
/// one changes nothing; after another, each leaf whose bits changed is written back into its
/// column (a read-only element refuses such a call, with one static_assert). Inlined, that costs
/// no more than the code written with the fields: only the fields it reads are loaded, and only
/// those it changes are stored (tests/codegen/element_methods.cu). A member function that returns
/// a reference returns, through the element, a copy of what it refers to: the reference would be
/// into the copy. For a class template, COALESCE_TEMPLATE_METHODS((class T), Vec3<T>, norm).
#define COALESCE_METHODS(Type, ...) \
  COALESCE_DETAIL_METHODS((), Type, COALESCE_DETAIL_CAT(coalesce_detail_methods_, __COUNTER__), __VA_ARGS__)
/// COALESCE_METHODS for a class template: its template parameter list in parentheses, the
/// template-id (in parentheses when it holds a comma), then the member functions.
#define COALESCE_TEMPLATE_METHODS(Parameters, Type, ...)                          \
  COALESCE_DETAIL_METHODS((template <COALESCE_DETAIL_UNPAREN(Parameters)>), Type, \
                          COALESCE_DETAIL_CAT(coalesce_detail_methods_, __COUNTER__), __VA_ARGS__)

// A class template of forwarding member functions, named by the counter (Type may be qualified or
// a template-id, so no name is pasted from it), and the function that lookup finds.
#define COALESCE_DETAIL_METHODS(Head, Type, Name, ...)                                  \
  template <class coalesce_proxy>                                                       \
  struct Name {                                                                         \
    COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_FORWARD_METHOD, _, __VA_ARGS__)            \
  };                                                                                    \
  COALESCE_DETAIL_UNPAREN(Head)                                                         \
  [[maybe_unused]] inline ::coalesce::detail::methods_of<Name> coalesce_detail_methods( \
      const COALESCE_DETAIL_UNPAREN(Type)*, ::coalesce_detail_fields_tag) {             \
    return {};                                                                          \
  }
#define COALESCE_DETAIL_FORWARD_METHOD(unused, name)                                         \
  COALESCE_DETAIL_EXEC_CHECK_DISABLE                                                         \
  template <class... coalesce_arguments>                                                     \
  COALESCE_HOST_DEVICE decltype(auto) name(coalesce_arguments&&... coalesce_a) const {       \
    return ::coalesce::detail::call_on_element(                                              \
        static_cast<const coalesce_proxy&>(*this),                                           \
        [&](auto& coalesce_element) -> decltype(coalesce_element.name(                       \
                                        static_cast<coalesce_arguments&&>(coalesce_a)...)) { \
          return coalesce_element.name(static_cast<coalesce_arguments&&>(coalesce_a)...);    \
        });                                                                                  \
  }
