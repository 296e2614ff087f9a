// coalesce::detail: the grid elements deposit adds into, and how one is added atomically. Scalars
// (float, double, int, unsigned, unsigned long long) take one atomicAdd; CUDA's float2, float4
// and double2 take one per component, or on sm_90 and later one vector atomicAdd for float2 and
// float4 (global memory). The shared-memory stage keeps a vector element as its components.
// Users never include this header.
#pragma once

#include <coalesce/config.hpp>

#include <type_traits>

#if COALESCE_HAS_CUDA_RUNTIME
#  include <vector_types.h>
#endif

namespace coalesce::detail {

// A grid element's components: `component` each, `count` of them. known is false for any other.
template <class G, class = void>
struct grid_element {
  static constexpr bool known = false;
};

template <class G>
struct grid_element<G,
                    std::enable_if_t<std::is_same_v<G, float> || std::is_same_v<G, double> || std::is_same_v<G, int> ||
                                     std::is_same_v<G, unsigned> || std::is_same_v<G, unsigned long long>>> {
  static constexpr bool known = true;
  using component = G;
  static constexpr unsigned count = 1;
  COALESCE_HOST_DEVICE static component get(const G& v, unsigned) { return v; }
  COALESCE_HOST_DEVICE static G make(const component* c) { return c[0]; }
};

#if COALESCE_HAS_CUDA_RUNTIME
template <>
struct grid_element<float2> {
  static constexpr bool known = true;
  using component = float;
  static constexpr unsigned count = 2;
  COALESCE_HOST_DEVICE static component get(const float2& v, unsigned k) { return k == 0 ? v.x : v.y; }
  COALESCE_HOST_DEVICE static float2 make(const component* c) { return float2{c[0], c[1]}; }
};
template <>
struct grid_element<float4> {
  static constexpr bool known = true;
  using component = float;
  static constexpr unsigned count = 4;
  COALESCE_HOST_DEVICE static component get(const float4& v, unsigned k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
  COALESCE_HOST_DEVICE static float4 make(const component* c) { return float4{c[0], c[1], c[2], c[3]}; }
};
template <>
struct grid_element<double2> {
  static constexpr bool known = true;
  using component = double;
  static constexpr unsigned count = 2;
  COALESCE_HOST_DEVICE static component get(const double2& v, unsigned k) { return k == 0 ? v.x : v.y; }
  COALESCE_HOST_DEVICE static double2 make(const component* c) { return double2{c[0], c[1]}; }
};
#endif

// The grid element types deposit adds into.
template <class G>
inline constexpr bool has_atomic_add_v = grid_element<G>::known;

#if defined(__CUDACC__)
// *p += v, atomically (each component atomically, for a vector element before sm_90).
template <class G>
__device__ void atomic_add_value(G* p, const G& v) {
  using element = grid_element<G>;
  if constexpr (element::count == 1) {
    atomicAdd(p, v);
  } else {
#  if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (std::is_same_v<G, float2> || std::is_same_v<G, float4>) {
      atomicAdd(p, v);  // one vector atomic (sm_90, global memory)
      return;
    }
#  endif
    auto* components = reinterpret_cast<typename element::component*>(p);
    for (unsigned k = 0; k < element::count; ++k) atomicAdd(components + k, element::get(v, k));
  }
}

// *address += v in shared memory (`address` a shared-memory address, as __cvta_generic_to_shared
// gives), the sum unused: with the address in 32 bits, the compiler need not turn a generic
// pointer into a shared one at every add.
__device__ inline void shared_atomic_add(unsigned address, float v) {
  asm volatile("red.shared.add.f32 [%0], %1;" ::"r"(address), "f"(v) : "memory");
}
__device__ inline void shared_atomic_add(unsigned address, double v) {
  asm volatile("red.shared.add.f64 [%0], %1;" ::"r"(address), "d"(v) : "memory");
}
__device__ inline void shared_atomic_add(unsigned address, int v) {
  asm volatile("red.shared.add.s32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
__device__ inline void shared_atomic_add(unsigned address, unsigned v) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
__device__ inline void shared_atomic_add(unsigned address, unsigned long long v) {
  asm volatile("red.shared.add.u64 [%0], %1;" ::"r"(address), "l"(v) : "memory");
}
#endif

}  // namespace coalesce::detail
