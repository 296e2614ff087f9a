// coalesce: COALESCE_FIELDS and COALESCE_TEMPLATE_FIELDS, which name the fields of an aggregate
// so that a soa_view's element reads view[i].x. Host-capable; included by <coalesce/soa.hpp>.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/soa_reference.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce::detail {

// What the macro defines besides the proxy: a function that ADL must find from coalesce::detail
// (fields_reachable checks it at the macro), whose body holds the macro's checks.
struct fields_declared {};

template <class T, class = void>
struct fields_reachable : std::false_type {};
template <class T>
struct fields_reachable<T, std::void_t<decltype(coalesce_detail_fields_declared(
                               static_cast<const T*>(nullptr), ::coalesce_detail_fields_tag{}))>> : std::true_type {};

// Whether the members name fields 0, 1, 2... of T in order (a COALESCE_FIELDS list).
template <class T, class... Members>
constexpr bool fields_in_order(int, Members... members) {
  std::size_t i = 0;
  bool in_order = true;
  ((in_order = in_order && field_index(members, std::make_index_sequence<field_count_v<T>>{}) == i++), ...);
  return in_order;
}

// COALESCE_FIELDS(Type, ...) reads Type through fields_target: a type is itself, and the name of
// a class template (COALESCE_FIELDS(Vec3, ...)) becomes class_template_given after one
// static_assert, so that the rest of the expansion compiles and that message is the only one.
struct class_template_given {};
template <class T>
constexpr type_identity<T> fields_target() {
  return {};
}
template <template <class...> class>
inline constexpr bool never_for_template = false;
template <template <class...> class Template>
constexpr auto fields_target() {  // auto: deducing it compiles the body, where the message is
  static_assert(never_for_template<Template>,
                "COALESCE_FIELDS(Type, ...): Type names a class template; name the fields of all its "
                "specializations with COALESCE_TEMPLATE_FIELDS((class T), Type<T>, fields...)");
  return type_identity<class_template_given>{};
}

// T, as a type that depends on Q: what the macro's proxies are written in terms of, so that
// nothing in them is compiled before a proxy is asked for.
template <class Q, class T>
struct dependent_on {
  using type = T;
};

// The order check, where it is possible: `check` takes a pointer to the type and checks the
// member pointers of its list. Never called for class_template_given, which has no members.
template <class T, class Check>
constexpr bool named_in_order(Check check) {
  if constexpr (std::is_same_v<T, class_template_given>) {
    return true;
  } else {
    return check(static_cast<T*>(nullptr));
  }
}

}  // namespace coalesce::detail

/// Names the fields of `Type`, in declaration order, so that view[i].x is a reference into the x
/// column of a soa_view<Type>:
///   `struct Particle { float x, y, z, vx, vy, vz; };`
///   `COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz)`
/// Write it in Type's namespace, or at global scope (there Type may be qualified: sim::Particle);
/// the trailing semicolon is optional. For a class template, give its parameters and the type:
///   `template <class T> struct Vec3 { T x, y, z; };`
///   `COALESCE_TEMPLATE_FIELDS((class T), Vec3<T>, x, y, z)`
/// (a type with a comma goes in parentheses: COALESCE_TEMPLATE_FIELDS((class A, class B), (Pair<A, B>), a, b)).
/// Mistakes stop at the macro with one static_assert: a field left out or out of order, more than
/// 64 names (detail::max_fields), or a namespace where coalesce cannot find the declaration.
#define COALESCE_FIELDS(Type, ...)                                                                          \
  COALESCE_DETAIL_FIELDS(                                                                                   \
      (), (template <class coalesce_qualified>),                                                            \
      (typename decltype(::coalesce::detail::fields_target<COALESCE_DETAIL_UNPAREN(Type)>())::type), #Type, \
      __VA_ARGS__)
/// COALESCE_FIELDS for a class template: `Parameters` is its template parameter list in
/// parentheses, `Type` the template-id (in parentheses too when it holds a comma), then the fields
/// in declaration order. The same checks run for each specialization, when its first element
/// proxy (view[i]) is made.
#define COALESCE_TEMPLATE_FIELDS(Parameters, Type, ...)                                                           \
  COALESCE_DETAIL_FIELDS((template <COALESCE_DETAIL_UNPAREN(Parameters)>),                                        \
                         (template <class coalesce_qualified, COALESCE_DETAIL_UNPAREN(Parameters)>), Type, #Type, \
                         __VA_ARGS__)

// Two function definitions: ending on a closing brace, the expansion takes a semicolon after it
// or none. The proxy is a class local to the function, so no name is pasted together from Type
// (which may be qualified or a template-id).
#define COALESCE_DETAIL_FIELDS(Head, ProxyHead, Type, TypeName, ...)                                                   \
  COALESCE_DETAIL_UNPAREN(Head)                                                                                        \
  [[maybe_unused]] inline ::coalesce::detail::fields_declared coalesce_detail_fields_declared(                         \
      const COALESCE_DETAIL_UNPAREN(Type)*, ::coalesce_detail_fields_tag) {                                            \
    /* The checks, here: for a plain type this body is compiled at the macro, once. */                                 \
    using coalesce_target = COALESCE_DETAIL_UNPAREN(Type);                                                             \
    constexpr bool coalesce_template = std::is_same_v<coalesce_target, ::coalesce::detail::class_template_given>;      \
    constexpr std::size_t coalesce_names = COALESCE_DETAIL_COUNT_ARGS(__VA_ARGS__);                                    \
    static_assert(coalesce_template || ::coalesce::detail::fields_reachable<coalesce_target>::value,                   \
                  "COALESCE_FIELDS(" TypeName ", ...): coalesce cannot find this declaration; write it in the "        \
                  "namespace of " TypeName ", or at global scope");                                                    \
    static_assert(coalesce_names <= ::coalesce::detail::max_fields,                                                    \
                  "COALESCE_FIELDS(" TypeName ", ...): more than " COALESCE_DETAIL_MAX_FIELDS_TEXT " names; "          \
                  "coalesce reflects at most " COALESCE_DETAIL_MAX_FIELDS_TEXT " fields, so group related "            \
                  "fields into structs of their own");                                                                 \
    static_assert(coalesce_template || coalesce_names > ::coalesce::detail::max_fields ||                              \
                      coalesce_names == ::coalesce::detail::field_count_v<coalesce_target>,                            \
                  "COALESCE_FIELDS(" TypeName ", ...): name every field of " TypeName ", in declaration order");       \
    static_assert(coalesce_names != ::coalesce::detail::field_count_v<coalesce_target> ||                              \
                      ::coalesce::detail::named_in_order<coalesce_target>([](auto* coalesce_probe) {                   \
                        using coalesce_type = std::remove_pointer_t<decltype(coalesce_probe)>;                         \
                        return ::coalesce::detail::fields_in_order<coalesce_type>(                                     \
                            0 COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_MEMBER_POINTER, _, __VA_ARGS__));               \
                      }),                                                                                              \
                  "COALESCE_FIELDS(" TypeName ", ...): name every field of " TypeName ", in declaration order");       \
    return {};                                                                                                         \
  }                                                                                                                    \
  COALESCE_DETAIL_UNPAREN(ProxyHead)                                                                                   \
  auto coalesce_detail_field_names(const COALESCE_DETAIL_UNPAREN(Type)*, coalesce_qualified*,                          \
                                   ::coalesce_detail_fields_tag) {                                                     \
    using coalesce_type =                                                                                              \
        typename ::coalesce::detail::dependent_on<coalesce_qualified, COALESCE_DETAIL_UNPAREN(Type)>::type;            \
    /* For a class template, the checks run when the first proxy is made. */                                           \
    (void)coalesce_detail_fields_declared(static_cast<const coalesce_type*>(nullptr), ::coalesce_detail_fields_tag{}); \
    /* Members of a local class are instantiated with the function: the read-only proxy must */                        \
    /* not even declare assignment, so it is a class of its own. */                                                    \
    if constexpr (std::is_const_v<coalesce_qualified>) {                                                               \
      struct reference : ::coalesce::detail::named_soa_reference<reference, coalesce_qualified> {                      \
        COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_NAMED_FIELD, _, __VA_ARGS__)                                          \
        COALESCE_DETAIL_NAMED_CONSTRUCTORS(__VA_ARGS__)                                                                \
      };                                                                                                               \
      return ::coalesce::detail::type_identity<reference>{};                                                           \
    } else {                                                                                                           \
      struct reference : ::coalesce::detail::named_soa_reference<reference, coalesce_qualified> {                      \
        COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_NAMED_FIELD, _, __VA_ARGS__)                                          \
        COALESCE_DETAIL_NAMED_CONSTRUCTORS(__VA_ARGS__)                                                                \
        COALESCE_HOST_DEVICE const reference& operator=(const coalesce_type& value) const {                            \
          this->assign(value);                                                                                         \
          return *this;                                                                                                \
        }                                                                                                              \
        COALESCE_HOST_DEVICE const reference& operator=(const reference& other) const {                                \
          this->assign(static_cast<coalesce_type>(other));                                                             \
          return *this;                                                                                                \
        }                                                                                                              \
      };                                                                                                               \
      return ::coalesce::detail::type_identity<reference>{};                                                           \
    }                                                                                                                  \
  }

// The proxy's constructors: from its members in field order (a local class has no member
// templates, so the members are made outside), and a copy (declared, since the proxy declares
// its assignment).
#define COALESCE_DETAIL_NAMED_CONSTRUCTORS(...)                                                                   \
  COALESCE_HOST_DEVICE explicit reference(                                                                        \
      ::coalesce::detail::members_tag COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_MEMBER_PARAMETER, _, __VA_ARGS__)) \
      : ::coalesce::detail::named_soa_reference<reference, coalesce_qualified> {}                                 \
  COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_MEMBER_INIT, _, __VA_ARGS__) {}                                        \
  reference(const reference&) = default;
#define COALESCE_DETAIL_MEMBER_PARAMETER(unused, name) \
  , ::coalesce::detail::member_reference_t<coalesce_qualified, decltype(coalesce_type::name)> coalesce_##name
#define COALESCE_DETAIL_MEMBER_INIT(unused, name) , name(coalesce_##name)
// A field's member of the proxy: a reference, or the proxy of a field that splits into leaves.
#define COALESCE_DETAIL_NAMED_FIELD(unused, name) \
  ::coalesce::detail::member_reference_t<coalesce_qualified, decltype(coalesce_type::name)> name;
#define COALESCE_DETAIL_MEMBER_POINTER(unused, name) , &coalesce_type::name
