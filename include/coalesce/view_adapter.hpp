// coalesce: what the algorithms (for_each, transform, for_each_index) walk, and how to hand them
// a view type of your own. Host-capable.
//
// The walkable views are three, each of device memory:
//   soa_view<T>              columns, one per field of T
//   pitched_view<T>          rows of elements, `pitch_bytes()` apart
//   cuda::std::span<T>       one contiguous run
// A walk needs no more than one of them tells: the extents, the address of every column (or row)
// and so its alignment, and whether the elements are writable (const T or not).
//
// Any other type is walkable through view_adapter<V>: a static adapt(const V&) that returns one
// of the three. coalesce adapts cuda::std::mdspan itself:
//   rank 1, layout_right or layout_left                                            -> span
//   rank 1, layout_stride                                                           -> pitched_view
//                       (one row when the stride is 1, else n rows of one element, stride apart)
//   rank 2, unit stride along the last index (layout_right, layout_stride)          -> pitched_view
// with a data handle that is a T* (default_accessor, aligned_accessor). A rank-2 mdspan whose last
// index is not the contiguous one (layout_left) has no coalesced row walk: adapt throws
// std::invalid_argument. For your own type, specialize in namespace coalesce:
//   template <> struct coalesce::view_adapter<my_grid> {
//     static coalesce::pitched_view<float> adapt(const my_grid& g) {
//       return {g.data, g.ny, g.nx, g.row_bytes};
//     }
//   };
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace coalesce {

// Specialize with `static <a walkable view> adapt(const V&)` to make V walkable. The primary
// template has no adapt: V is then walkable only if it is one of the three views above.
template <class V, class = void>
struct view_adapter {};

template <class T, class Extents, class Layout, class Accessor>
struct view_adapter<cuda::std::mdspan<T, Extents, Layout, Accessor>> {
  using mdspan_type = cuda::std::mdspan<T, Extents, Layout, Accessor>;
  static_assert(Extents::rank() == 1 || Extents::rank() == 2,
                "coalesce: an mdspan walked by coalesce's algorithms must be of rank 1 or 2");
  static_assert(std::is_same_v<typename Accessor::data_handle_type, T*>,
                "coalesce: an mdspan walked by coalesce's algorithms must hold a T* (default_accessor or "
                "aligned_accessor)");

  static auto adapt(const mdspan_type& m) {
    if constexpr (Extents::rank() == 1 && (std::is_same_v<Layout, cuda::std::layout_right> ||
                                           std::is_same_v<Layout, cuda::std::layout_left>)) {
      return cuda::std::span<T>(m.data_handle(), m.extent(0));
    } else if constexpr (Extents::rank() == 1) {
      // A stride known only at run time: one row when the elements are adjacent, else rows of
      // one element (a column of a matrix).
      if (m.extent(0) <= 1 || m.stride(0) == 1) return pitched_view<T>(m.data_handle(), 1, m.extent(0), m.extent(0) * sizeof(T));
      return pitched_view<T>(m.data_handle(), m.extent(0), 1, std::size_t(m.stride(0)) * sizeof(T));
    } else {
      if (m.extent(0) > 1 && m.extent(1) > 1 && m.stride(1) != 1)
        throw std::invalid_argument(
            "coalesce: a rank-2 mdspan must be contiguous along its last index (layout_right, or layout_stride "
            "with stride(1) == 1) to be walked a row at a time");
      return pitched_view<T>(m.data_handle(), m.extent(0), m.extent(1), std::size_t(m.stride(0)) * sizeof(T));
    }
  }

};

namespace detail {

template <class V, class = void>
struct has_view_adapter : std::false_type {};
template <class V>
struct has_view_adapter<V, std::void_t<decltype(view_adapter<V>::adapt(std::declval<const V&>()))>>
    : std::true_type {};

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
