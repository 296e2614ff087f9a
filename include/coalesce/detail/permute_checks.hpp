// coalesce::detail: the checks on what gather, scatter and sort_by_key are handed, each failed
// one the only error the user reads. Users never include this header; <coalesce/reorder.hpp> does.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/reorder_plan.hpp>
#include <coalesce/detail/view_walks.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/soa.hpp>

#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The views gather and scatter permute: soa_views of device memory, the output writable and of
// the same element type.
template <class View>
inline constexpr bool is_element_view_v = is_soa_view_v<View>;
template <class T, class L, class Space>
inline constexpr bool is_element_view_v<layout_view<T, L, Space>> = true;

template <class In, class Out>
constexpr bool permute_views_ok() {
  constexpr bool soa = is_element_view_v<In> && is_element_view_v<Out>;
  static_assert(soa, "coalesce::gather / coalesce::scatter: the input and the output must be soa_views or "
                     "layout_views (a device coalesce::vector's view(), in any layouts); permute a single column as "
                     "a soa_view of a one-field struct");
  if constexpr (soa) {
    constexpr bool device = std::is_same_v<typename view_space<In>::type, device_space> &&
                            std::is_same_v<typename view_space<Out>::type, device_space>;
    static_assert(device,
                  "coalesce::gather / coalesce::scatter: a view is of host memory (a host_space soa_vector's); the "
                  "GPU cannot read it: copy it into a device container and pass that one's view()");
    constexpr bool writable = !std::is_const_v<typename Out::element_type>;
    static_assert(!device || writable,
                  "coalesce::gather / coalesce::scatter: the output view must be writable (soa_view<T>, not "
                  "soa_view<const T>)");
    constexpr bool same = std::is_same_v<std::remove_const_t<typename In::element_type>, typename Out::element_type>;
    static_assert(!device || !writable || same,
                  "coalesce::gather / coalesce::scatter: the input and the output must have the same element type");
    return device && writable && same;
  }
  return false;
}

// The index arrays gather and scatter take: unsigned 32- or 64-bit integers.
template <class Index>
constexpr bool permute_index_ok() {
  using index = std::remove_const_t<Index>;
  constexpr bool ok = std::is_integral_v<index> && std::is_unsigned_v<index> && !std::is_same_v<index, bool> &&
                      (sizeof(index) == 4 || sizeof(index) == 8);
  static_assert(ok,
                "coalesce::gather / coalesce::scatter: the indices must be a cuda::std::span of unsigned 32- or 64-bit "
                "integers (unsigned, std::uint32_t, std::size_t) in device memory");
  return ok;
}

// What key(element) returns, seen from the host, and the checks on it.
template <class T, class Key>
constexpr bool sort_key_ok() {
  constexpr bool visible = COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(Key);
  static_assert(visible,
                "coalesce::sort_by_key: the host cannot see what a __device__ lambda returns, and needs the key "
                "type to size the sort: give the lambda a trailing return type ([] __device__(auto p) -> "
                "std::uint32_t {...}), make it __host__ __device__, wrap it in cuda::proclaim_return_type<K>, or "
                "pass a function object");
  if constexpr (visible) {
    using key_type = std::decay_t<decltype(std::declval<Key&>()(std::declval<soa_reference_t<const T>>()))>;
    static_assert(is_sort_key_v<key_type>,
                  "coalesce::sort_by_key: key(element) must return an unsigned 32- or 64-bit integer (std::uint32_t, "
                  "std::uint64_t); map a signed or floating-point key to one that orders the same way");
    return is_sort_key_v<key_type>;
  }
  return false;
}

}  // namespace coalesce::detail
