// coalesce::detail: the fields of an aggregate, without macros. The field count is the largest N
// for which T{{}, ..., {}} compiles with N empty braces; the fields themselves come from a
// structured binding of that size. Users never include this header.
//
// No libcu++ here: including any <cuda/std/...> header adds about 2 s to an nvcc compile (measured
// with CUDA 13.0), which alone would double the cost of a small kernel unit; soa.hpp promises at
// most 2x. So the tuple of references below is coalesce's own, and minimal.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The most fields coalesce reflects; larger aggregates are rejected with a static_assert.
inline constexpr std::size_t max_fields = 64;

template <std::size_t N>
using field_count_constant = std::integral_constant<std::size_t, N>;

// --- a tuple of references ------------------------------------------------------------------
template <std::size_t I, class R>
struct ref_leaf {
  R ref;
};

template <class Indices, class... R>
struct ref_tuple_base;
template <std::size_t... I, class... R>
struct ref_tuple_base<std::index_sequence<I...>, R...> : ref_leaf<I, R>... {
  COALESCE_HOST_DEVICE constexpr explicit ref_tuple_base(R... refs) : ref_leaf<I, R>{refs}... {}

  // Assigns every referred-to object from the matching one of `other`.
  template <class Other>
  COALESCE_HOST_DEVICE constexpr void assign_from(const Other& other) const {
    ((static_cast<const ref_leaf<I, R>&>(*this).ref = static_cast<const typename Other::template leaf<I>&>(other).ref),
     ...);
  }
};

// The one base of a ref_tuple with index I, found by deduction (declared only): the I-th type of
// a pack without std::tuple, whose header a unit that includes soa.hpp would pay for.
template <std::size_t I, class R>
ref_leaf<I, R> leaf_type_of(const ref_leaf<I, R>&);

// References R... (each an lvalue reference type), with get_leaf<I> and element-wise assignment.
template <class... R>
struct ref_tuple : ref_tuple_base<std::index_sequence_for<R...>, R...> {
  template <std::size_t I>
  using leaf = decltype(leaf_type_of<I>(std::declval<const ref_tuple&>()));
  using ref_tuple_base<std::index_sequence_for<R...>, R...>::ref_tuple_base;
};

template <std::size_t I, class R>
COALESCE_HOST_DEVICE constexpr R get_leaf(const ref_leaf<I, R>& leaf) {
  return leaf.ref;
}

template <class... F>
COALESCE_HOST_DEVICE constexpr ref_tuple<F&...> make_ref_tuple(F&... fields) {
  return ref_tuple<F&...>(fields...);
}

// The declared types of T's fields, as fields_of<N>::declared_types returns them.
template <class... F>
struct type_list {};

// What reflecting an aggregate of exactly N fields takes (tie, declared_types), and the probe
// of whether T{{}, ..., {}} takes N braces (taken): one explicit specialization per N, generated.
// A class per count, not an overload per count: naming fields_of<N> finds its one class, where a
// call would weigh all max_fields overloads (and substitute T into each one's return type).
template <std::size_t N>
struct fields_of;
template <std::size_t N>
struct braces;

}  // namespace coalesce::detail

// fields_of<N> and braces<N> for every field count, and the macro helpers that count and walk
// COALESCE_FIELDS's names: one of each per count, so generated.
#include <coalesce/detail/generated_fields.hpp>

namespace coalesce::detail {

static_assert(generated_max_fields == max_fields,
              "detail/generated_fields.hpp is out of date: run cmake/CoalesceGenerateFields.cmake");

// The number of fields of aggregate T, or max_fields + 1 when it has more than coalesce supports:
// the largest N for which T{{}, ..., {}} with N empty braces compiles. Each brace initializes one
// field, whatever its type: an expression in its place would be split by brace elision over the
// elements of an array field (float p[3] would count as three fields, and the structured binding
// of that many would not compile). Initializing every field from {} is what T{} does, which
// soa_vector needs anyway for its new elements.
// Counted up from 1: if N braces compile, so do fewer (a field left out is initialized from {}
// too, or by its default member initializer), so the first N that fails is one past the count.
// A struct of 6 fields costs 7 probes, where counting down from max_fields + 1 would cost 60.
template <class T, std::size_t N = 1>
COALESCE_HOST_DEVICE constexpr std::size_t count_fields() {
  if constexpr (N > max_fields + 1) {
    return max_fields + 1;
  } else if constexpr (decltype(braces<N>::template taken<T>(0))::value) {
    return count_fields<T, N + 1>();
  } else {
    return N - 1;
  }
}

// A ref_tuple of the N fields of `t` (const references for a const T).
template <class T, std::size_t N>
COALESCE_HOST_DEVICE constexpr auto tie_fields(T& t, field_count_constant<N>) {
  return fields_of<N>::tie(t);
}

// Where the fields' declared types would put them, laid out in order with their alignments and
// rounded up to T's alignment. Equal to sizeof(T) for any struct of ordinary fields; smaller
// when bit-fields share storage (or a member has an alignas of its own).
template <class... F>
constexpr std::size_t declared_layout_bytes(type_list<F...>, std::size_t struct_alignment) {
  std::size_t at = 0;
  ((at = (at + alignof(F) - 1) / alignof(F) * alignof(F) + sizeof(F)), ...);
  return (at + struct_alignment - 1) / struct_alignment * struct_alignment;
}

template <class T>
constexpr bool fields_fill_struct() {
  using types = decltype(fields_of<count_fields<T>()>::declared_types(std::declval<T&>()));
  return declared_layout_bytes(types{}, alignof(T)) == sizeof(T);
}

// A ref_tuple of references to every field of `t` (const references for a const T).
template <class T>
COALESCE_HOST_DEVICE constexpr auto tie_fields(T& t) {
  return tie_fields(t, field_count_constant<count_fields<std::remove_const_t<T>>()>{});
}

template <class T, std::size_t I>
using field_type_t = std::remove_cv_t<std::remove_reference_t<decltype(get_leaf<I>(tie_fields(std::declval<T&>())))>>;

// A T that is declared and never defined: what the check of which member is which field takes
// the addresses of, in constant expressions only, for a T that it cannot make there: T probe{}
// needs a constexpr default constructor for every field, which a class bitwise copyable by
// specialization seldom has (Eigen::Vector3d's is not: "expression must have a constant value").
// Only for such a T, because clang rejects an undefined variable of a type without linkage (a
// struct in an unnamed namespace), where g++ and nvcc accept it.
template <class T>
extern T probe_object;

}  // namespace coalesce::detail

// --- macro helpers for COALESCE_FIELDS (the counted ones are in generated_fields.hpp) ----------
#define COALESCE_DETAIL_CAT(a, b) COALESCE_DETAIL_CAT_(a, b)
#define COALESCE_DETAIL_CAT_(a, b) a##b
// (x) -> x, and x -> x: a type with commas in it (Pair<A, B>) is passed in parentheses.
#define COALESCE_DETAIL_UNPAREN(x) COALESCE_DETAIL_UNPAREN_EVAL(COALESCE_DETAIL_UNPAREN_STRIP x)
#define COALESCE_DETAIL_UNPAREN_STRIP(...) COALESCE_DETAIL_UNPAREN_STRIP __VA_ARGS__
#define COALESCE_DETAIL_UNPAREN_EVAL(...) COALESCE_DETAIL_UNPAREN_EVAL_(__VA_ARGS__)
#define COALESCE_DETAIL_UNPAREN_EVAL_(...) COALESCE_DETAIL_UNPAREN_DONE_##__VA_ARGS__
#define COALESCE_DETAIL_UNPAREN_DONE_COALESCE_DETAIL_UNPAREN_STRIP
// macro(data, x) for every argument x, up to max_fields of them; nothing beyond (COALESCE_FIELDS
// says why).
#define COALESCE_DETAIL_FOR_EACH(macro, data, ...) \
  COALESCE_DETAIL_CAT(COALESCE_DETAIL_FOR_EACH_, COALESCE_DETAIL_CAPPED_COUNT(__VA_ARGS__))(macro, data, __VA_ARGS__)
