// coalesce::detail: what coalesce::fill and coalesce::zero launch - a walk that stores one value
// into every element and loads nothing - and the checks on the view they are given. Users never
// include this header; <coalesce/algorithm.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/view_walks.hpp>
#include <coalesce/memory_space.hpp>

#include <cstring>
#include <type_traits>

namespace coalesce::detail {

// fill's walk: every element of the walk gets `value`; nothing is loaded.
template <class Out>
struct store_value {
  Out out;
  typename Out::value_type value;
  template <unsigned N>
  static constexpr bool warp_cooperative = Out::template warp_staged<N>;

  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void run(grid_position at, unsigned lanes) const {
    typename Out::value_type y[N];
#pragma unroll
    for (unsigned k = 0; k < N; ++k) y[k] = value;
    out.template store<N>(at, y, lanes);
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void one(grid_position p) const { out.store_one(p, value); }
};

template <class View>
constexpr bool fill_view_ok() {
  constexpr bool known = view_space<View>::known;
  static_assert(known, "coalesce::fill: the view must be a soa_view, a pitched_view, a pitched_volume_view or a "
                       "cuda::std::span of device memory, or a device soa_vector, pitched_matrix or pitched_volume");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device,
                  "coalesce::fill: the view is of host memory, which the GPU cannot write; fill a device container");
    constexpr bool writable = !std::is_const_v<typename View::element_type>;
    static_assert(!device || writable, "coalesce::fill: the view is read-only (a view of const T)");
    return device && writable;
  }
  return false;
}

// An element whose every byte is zero, padding included (a T{} need not clear its padding).
template <class T>
T zero_bytes() {
  T value{};
  std::memset(static_cast<void*>(&value), 0, sizeof value);
  return value;
}

}  // namespace coalesce::detail
