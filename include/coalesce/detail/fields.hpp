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
inline constexpr std::size_t max_fields = 24;

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

// The declared types of T's fields, as declared_field_types returns them.
template <class... F>
struct type_list {};

}  // namespace coalesce::detail

// tie_fields, declared_field_types and takes_braces for every field count, and the macro helpers
// that count and walk COALESCE_FIELDS's names: one of each per count, so generated.
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
template <class T, std::size_t N = max_fields + 1>
COALESCE_HOST_DEVICE constexpr std::size_t count_fields() {
  if constexpr (N == 0) {
    return 0;
  } else if constexpr (decltype(takes_braces<T>(field_count_constant<N>{}))::value) {
    return N;
  } else {
    return count_fields<T, N - 1>();
  }
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
  using types = decltype(declared_field_types(std::declval<T&>(), field_count_constant<count_fields<T>()>{}));
  return declared_layout_bytes(types{}, alignof(T)) == sizeof(T);
}

// A ref_tuple of references to every field of `t` (const references for a const T).
template <class T>
COALESCE_HOST_DEVICE constexpr auto tie_fields(T& t) {
  return tie_fields(t, field_count_constant<count_fields<std::remove_const_t<T>>()>{});
}

template <class T, std::size_t I>
using field_type_t = std::remove_cv_t<std::remove_reference_t<decltype(get_leaf<I>(tie_fields(std::declval<T&>())))>>;

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
// macro(data, x) for every argument x, up to 24 of them; nothing beyond (COALESCE_FIELDS says why).
#define COALESCE_DETAIL_FOR_EACH(macro, data, ...) \
  COALESCE_DETAIL_CAT(COALESCE_DETAIL_FOR_EACH_, COALESCE_DETAIL_CAPPED_COUNT(__VA_ARGS__))(macro, data, __VA_ARGS__)
