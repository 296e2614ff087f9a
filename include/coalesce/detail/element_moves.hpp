// coalesce::detail: one element of a soa_view (or a layout_view) moved between its columns (its
// records or tiles) and registers, a leaf at a time: what compaction and permutation do to every
// element they keep or move. Users never include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Element i of `from` into `to`, every leaf. A leaf the caller never uses after the load is a dead
// load that nvcc drops: a predicate on x reads only the x column.
template <class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_element(const soa_view<const T>& from, std::size_t i, T& to,
                                                       std::index_sequence<L...>) {
  ((struct_leaf<L>(to) = from.template leaf_column<L>()[i]), ...);
}
template <class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_element(const soa_view<const T>& from, std::size_t i, T& to) {
  load_element(from, i, to, std::make_index_sequence<leaf_count_v<T>>{});
}

// `from` into element i of `to`, every leaf.
template <class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_element(const soa_view<T>& to, std::size_t i, const T& from,
                                                        std::index_sequence<L...>) {
  ((to.template leaf_column<L>()[i] = struct_leaf<L>(from)), ...);
}
template <class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_element(const soa_view<T>& to, std::size_t i, const T& from) {
  store_element(to, i, from, std::make_index_sequence<leaf_count_v<T>>{});
}

// The same for a layout_view of records or tiles: a leaf at a time, each at its leaf_pointer.
template <class T, class Layout, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_element(const layout_view<const T, Layout>& from, std::size_t i, T& to,
                                                       std::index_sequence<L...>) {
  ((struct_leaf<L>(to) = *from.template leaf_pointer<L>(i)), ...);
}
template <class T, class Layout>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_element(const layout_view<const T, Layout>& from, std::size_t i, T& to) {
  load_element(from, i, to, std::make_index_sequence<leaf_count_v<T>>{});
}
template <class T, class Layout, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_element(const layout_view<T, Layout>& to, std::size_t i, const T& from,
                                                        std::index_sequence<L...>) {
  ((*to.template leaf_pointer<L>(i) = struct_leaf<L>(from)), ...);
}
template <class T, class Layout>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_element(const layout_view<T, Layout>& to, std::size_t i,
                                                        const T& from) {
  store_element(to, i, from, std::make_index_sequence<leaf_count_v<T>>{});
}

// What a predicate or key function receives for an element in registers: the const named-field
// proxy that for_each hands f for a read-only element (p.x < 0 is the whole user code).
template <class T>
COALESCE_DEVICE COALESCE_FORCEINLINE soa_reference_t<const T> element_proxy(const T& v) {
  return make_reference<const T>(value_leaves<const T>{v});
}

}  // namespace coalesce::detail
