// coalesce: a soa_view column as a cuda::std::span. Apart from <coalesce/soa.hpp> because any
// libcu++ header adds about 2 s to an nvcc compile (CUDA 13.0), more than soa.hpp itself costs.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/soa.hpp>

#include <cuda/std/span>

#include <type_traits>

namespace coalesce {

/// The column of field `Key` (an index or a pointer to member, as for soa_view::column) as a
/// span of view.size() elements; const elements for a soa_view<const T>. (A span carries no
/// memory space: one of host memory handed to an algorithm is caught only under COALESCE_DEBUG.)
template <auto Key, class T, class Space>
COALESCE_HOST_DEVICE auto column_span(const soa_view<T, Space>& view) noexcept {
  auto* first = view.template column<Key>();
  return cuda::std::span<std::remove_pointer_t<decltype(first)>>(first, view.size());
}

}  // namespace coalesce
