// coalesce::detail: elements as bytes, for the walks - whether two values hold the same bits
// (detail/same_bits.hpp), keeping a load alive, and updating a padded struct on its loaded bytes so
// that its padding is neither compared nor changed. Users never include this header;
// detail/chunk_walk.hpp does. Needs a CUDA compiler (device code).
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/same_bits.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Keeps the load that produced `v` even when nothing else uses it: an empty volatile asm reads
// each of its words. (A walk reads whole lines, padding included, but stores only elements.)
template <class V>
COALESCE_DEVICE COALESCE_FORCEINLINE void keep_loaded(const V& v) {
  using word = std::conditional_t<sizeof(V) % 4 == 0, unsigned,
                                  std::conditional_t<sizeof(V) % 2 == 0, unsigned short, unsigned char>>;
  constexpr std::size_t words = sizeof(V) / sizeof(word);
  word w[words];
  std::memcpy(w, &v, sizeof(V));
#pragma unroll
  for (std::size_t k = 0; k < words; ++k) {
    if constexpr (sizeof(word) == 4) {
      asm volatile("" : : "r"(w[k]));
    } else {
      asm volatile("" : : "h"(static_cast<unsigned short>(w[k])));
    }
  }
}

// --- padding ------------------------------------------------------------------------------------
//
// for_each decides whether to store an element by comparing its bytes before and after f, and a
// struct's padding bytes hold no value: a copy of the struct need not keep them, and f's copy may
// come back with anything there (nvcc 13.0 stored zeros, or another element's bytes). So a
// padded struct's update runs on the loaded bytes themselves (a word_image): f gets a copy, and
// only its leaves, the value bytes, are written back into the image. Padding is never compared,
// and goes back to memory as it was read.

template <class T, std::size_t... L>
constexpr std::size_t leaf_bytes(std::index_sequence<L...>) {
  return (sizeof(leaf_type_t<T, L>) + ... + std::size_t(0));
}
// Whether T is a struct coalesce can reflect whose leaves do not fill it. (A type it cannot
// reflect - a class with private members - is compared whole.)
template <class T>
constexpr bool find_padding() {
  if constexpr (std::is_class_v<T> && std::is_aggregate_v<T> && !std::is_union_v<T>) {
    if constexpr (count_fields<T>() >= 1 && count_fields<T>() <= max_fields)
      return leaf_bytes<T>(std::make_index_sequence<leaf_count_v<T>>{}) < sizeof(T);
    else return false;
  } else {
    return false;
  }
}
template <class T>
inline constexpr bool has_padding_v = find_padding<T>();

template <class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void put_leaves(unsigned char* to, const T& value, std::index_sequence<L...>) {
  const auto* base = reinterpret_cast<const unsigned char*>(&value);
  ((std::memcpy(to + (reinterpret_cast<const unsigned char*>(&struct_leaf<L>(value)) - base), &struct_leaf<L>(value),
                sizeof(leaf_type_t<T, L>))),
   ...);
}

// Writes values[0..N) into `image`, where they lie one after another from its first byte: the
// value bytes only, so the image's padding bytes stay as they are.
template <unsigned N, class T, class Image>
COALESCE_DEVICE COALESCE_FORCEINLINE void put_values(Image& image, const T (&values)[N]) {
  static_assert(sizeof(Image) == sizeof(values), "coalesce: an image holds exactly the values it is written with");
  if constexpr (has_padding_v<T>) {
#pragma unroll
    for (unsigned k = 0; k < N; ++k)
      put_leaves(reinterpret_cast<unsigned char*>(&image) + k * sizeof(T), values[k],
                 std::make_index_sequence<leaf_count_v<T>>{});
  } else {
    std::memcpy(&image, values, sizeof(values));
  }
}

// f on a copy of each of the N values `image` holds (those `live` says are elements); the image
// then holds what f made of them, its padding as it was. Returns whether any byte changed.
template <class T, unsigned N, class Image, class Apply>
COALESCE_DEVICE COALESCE_FORCEINLINE bool update_image(Image& image, Apply&& apply) {
  T values[N];
  std::memcpy(values, &image, sizeof(values));
  const Image before = image;
#pragma unroll
  for (unsigned k = 0; k < N; ++k) apply(k, values[k]);
  put_values(image, values);
  return !same_bits(before, image);
}

}  // namespace coalesce::detail
