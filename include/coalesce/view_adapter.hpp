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
// std::invalid_argument. That adapter is part of the mdspan interop in <coalesce/pitched_matrix.hpp>,
// so <coalesce/algorithm.hpp> alone, which walks soa_views without libcu++'s mdspan, does not
// adapt an mdspan: include this header or pitched_matrix.hpp. For your own type, specialize in
// namespace coalesce:
//   template <> struct coalesce::view_adapter<my_grid> {
//     static coalesce::pitched_view<float> adapt(const my_grid& g) {
//       return {g.data, g.ny, g.nx, g.row_bytes};
//     }
//   };
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/view_adapter_base.hpp>  // view_adapter, and how the algorithms detect it
#include <coalesce/pitched_matrix.hpp>            // pitched_view, and the mdspan adapter

#include <cuda/std/mdspan>
#include <cuda/std/span>
