// coalesce::detail: which types are CUDA's vector types (float3, int2, double4_16a...), whose
// proxies in a soa_view read view[i].pos.x with no COALESCE_FIELDS: their fields are x, y, z, w
// by CUDA's definition. A user's struct of the same shape still needs the macro, as every
// struct of the user's does. Users never include this header.
#pragma once

#include <coalesce/config.hpp>

#include <type_traits>

#if COALESCE_HAS_CUDA_RUNTIME
#  include <vector_types.h>
#endif

namespace coalesce::detail {

template <class V>
struct is_cuda_vector_type : std::false_type {};

#if COALESCE_HAS_CUDA_RUNTIME
#  define COALESCE_DETAIL_CUDA_VECTOR_TYPE(V) \
    template <>                               \
    struct is_cuda_vector_type<V> : std::true_type {};
#  define COALESCE_DETAIL_CUDA_VECTOR_TYPES(base) \
    COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##1)     \
    COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##2)     \
    COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##3)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(char)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(uchar)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(short)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(ushort)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(int)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(uint)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(long)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(ulong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(longlong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(ulonglong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(float)
COALESCE_DETAIL_CUDA_VECTOR_TYPES(double)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(char4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(uchar4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(short4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(ushort4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(int4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(uint4)
COALESCE_DETAIL_CUDA_VECTOR_TYPE(float4)
// CUDA 13 deprecates the 4-component vectors of 8-byte types for ones that say their alignment
// (double4_16a, double4_32a); naming the old ones here must not warn, so the header's own
// silencing is used where it has one (it defines the new types too).
#  if defined(__NV_SILENCE_HOST_DEPRECATION_BEGIN)
__NV_SILENCE_HOST_DEPRECATION_BEGIN
#    define COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(base) \
      COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##4)       \
      COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##4_16a)   \
      COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##4_32a)
#  else
#    define COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(base) COALESCE_DETAIL_CUDA_VECTOR_TYPE(base##4)
#  endif
COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(long)
COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(ulong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(longlong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(ulonglong)
COALESCE_DETAIL_CUDA_VECTOR_TYPES_4(double)
#  if defined(__NV_SILENCE_HOST_DEPRECATION_BEGIN)
__NV_SILENCE_HOST_DEPRECATION_END
#  endif
#  undef COALESCE_DETAIL_CUDA_VECTOR_TYPES_4
#  undef COALESCE_DETAIL_CUDA_VECTOR_TYPES
#  undef COALESCE_DETAIL_CUDA_VECTOR_TYPE
#endif

template <class V>
inline constexpr bool is_cuda_vector_type_v = is_cuda_vector_type<std::remove_const_t<V>>::value;

}  // namespace coalesce::detail
