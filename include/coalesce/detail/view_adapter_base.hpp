// coalesce::detail: the view_adapter customization point and its detection, without the
// adapters. The algorithms need only these; the mdspan adapter lives with the mdspan interop in
// <coalesce/pitched_matrix.hpp>, and <coalesce/view_adapter.hpp> documents the whole concept.
#pragma once

#include <coalesce/config.hpp>

#include <type_traits>
#include <utility>

namespace coalesce {

// Specialize with `static <a walkable view> adapt(const V&)` to make V walkable. The primary
// template has no adapt: V is then walkable only if it is a soa_view, a pitched_view or a
// cuda::std::span (see <coalesce/view_adapter.hpp>).
template <class V, class = void>
struct view_adapter {};

namespace detail {

template <class V, class = void>
struct has_view_adapter : std::false_type {};
template <class V>
struct has_view_adapter<V, std::void_t<decltype(view_adapter<V>::adapt(std::declval<const V&>()))>> : std::true_type {};

// The view an algorithm walks for `v`: v itself, or what its adapter makes of it.
template <class V>
auto as_walkable(const V& v) {
  if constexpr (has_view_adapter<V>::value) {
    return view_adapter<V>::adapt(v);
  } else {
    return v;
  }
}

}  // namespace detail
}  // namespace coalesce
