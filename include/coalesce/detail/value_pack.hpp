// coalesce::detail: value_pack<V...>, values of several types side by side - a tuple that is an
// aggregate (trivially copyable when its values are, so walks can copy it as bytes) and costs
// the compiler nothing to include, unlike <cuda/std/tuple> (about 3 s of an nvcc compile, CUDA
// 13.0). Users never include this header. Host-capable.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <utility>

namespace coalesce::detail {

template <std::size_t I, class V>
struct pack_slot {
  V value;
};
template <class Indices, class... V>
struct value_pack_of;
template <std::size_t... I, class... V>
struct value_pack_of<std::index_sequence<I...>, V...> : pack_slot<I, V>... {
  static constexpr std::size_t size() noexcept { return sizeof...(V); }
};
template <class... V>
using value_pack = value_pack_of<std::index_sequence_for<V...>, V...>;

// Value I of a pack (found through its slot's base class).
template <std::size_t I, class V>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE V& slot(pack_slot<I, V>& p) {
  return p.value;
}
template <std::size_t I, class V>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE const V& slot(const pack_slot<I, V>& p) {
  return p.value;
}

template <class... V, std::size_t... I>
COALESCE_HOST_DEVICE value_pack<V...> make_pack(std::index_sequence<I...>, const V&... values) {
  return value_pack<V...>{pack_slot<I, V>{values}...};
}
// A pack of copies of `values`.
template <class... V>
COALESCE_HOST_DEVICE value_pack<V...> make_pack(const V&... values) {
  return make_pack(std::index_sequence_for<V...>{}, values...);
}

}  // namespace coalesce::detail
