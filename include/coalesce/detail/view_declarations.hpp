// coalesce::detail: the views (and the pitched_matrix) the algorithms walk, declared without
// their definitions. The walk code names pitched_view and cuda::std::span only in templates,
// which a caller instantiates with a complete view; declaring them here keeps <cuda/std/mdspan>
// and <cuda/std/span> (each about 1.2 s of an nvcc compile, CUDA 13.0) out of a unit that only
// walks soa_views.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/memory_space.hpp>

#include <type_traits>

// libcu++ declares span in a header of its own; where it does not, the whole of <cuda/std/span>.
#if defined(__has_include)
#  if __has_include(<cuda/std/__fwd/span.h>)
#    include <cuda/std/__fwd/span.h>
#    define COALESCE_DETAIL_SPAN_DECLARED 1
#  endif
#endif
#ifndef COALESCE_DETAIL_SPAN_DECLARED
#  include <cuda/std/span>
#endif
#undef COALESCE_DETAIL_SPAN_DECLARED

namespace coalesce {

// Defined in detail/pitched_view.hpp, which <coalesce/pitched_matrix.hpp> includes.
template <class T, class Space = device_space>
class pitched_view;
// Defined, with its default arguments, in <coalesce/pitched_matrix.hpp>: the algorithms take a
// matrix by reference and only a caller that has one instantiates them.
template <class T, class Space, class PitchPolicy, class Resource>
class pitched_matrix;
// Defined in detail/pitched_volume_view.hpp, which <coalesce/pitched_volume.hpp> includes.
template <class T, class Space>
class pitched_volume_view;
template <class T, class Space, class PitchPolicy, class Resource>
class pitched_volume;
// Defined in <coalesce/inputs.hpp>: what coalesce::inputs(a, b, ...) makes.
template <class... Views>
struct input_list;

namespace detail {
// Whether C is one of coalesce's containers (soa_vector, layout_vector, pitched_matrix,
// pitched_volume; each specializes this in detail/algorithm_containers.hpp): an algorithm's output
// passed as a container must bind by reference, never be copied.
template <class C>
struct is_container : std::false_type {};
template <class C>
using not_a_container = std::enable_if_t<!is_container<std::remove_cv_t<C>>::value, int>;
}  // namespace detail

}  // namespace coalesce
