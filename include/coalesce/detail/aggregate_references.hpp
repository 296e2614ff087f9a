// coalesce::detail: the proxies of fields that are CUDA vector types (view[i].pos.x), arrays
// (view[i].p[k]) and structs holding one array (std::array, cuda::std::array). Users never
// include this header; <coalesce/soa_reference.hpp> includes it, after the proxy bases it
// derives from. Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/cuda_vector_types.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/proxy_base.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce::detail {

// The proxy of a CUDA vector type (float3, int2, double4_16a...): view[i].pos.x with no
// COALESCE_FIELDS, since CUDA names their fields x, y, z, w.
template <class Q, class V, std::size_t N = count_fields<V>()>
struct vector_reference;
#define COALESCE_DETAIL_VECTOR_REFERENCE(N, Members, ...)                                         \
  template <class Q, class V>                                                                     \
  struct vector_reference<Q, V, N> : struct_reference_base<vector_reference<Q, V, N>, Q> {        \
    COALESCE_DETAIL_UNPAREN(Members)                                                              \
    template <class Source>                                                                       \
    COALESCE_HOST_DEVICE explicit vector_reference(const Source& at) : __VA_ARGS__ {}             \
    vector_reference(const vector_reference&) = default;                                          \
    COALESCE_HOST_DEVICE const vector_reference& operator=(const V& v) const {                    \
      this->assign(v);                                                                            \
      return *this;                                                                               \
    }                                                                                             \
    COALESCE_HOST_DEVICE const vector_reference& operator=(const vector_reference& other) const { \
      this->assign(static_cast<V>(other));                                                        \
      return *this;                                                                               \
    }                                                                                             \
  };
#define COALESCE_DETAIL_COMPONENT(name) leaf_reference_t<Q, decltype(V::name)> name;
#define COALESCE_DETAIL_FROM(name, index) name(at.template leaf<index>())
COALESCE_DETAIL_VECTOR_REFERENCE(1, (COALESCE_DETAIL_COMPONENT(x)), COALESCE_DETAIL_FROM(x, 0))
COALESCE_DETAIL_VECTOR_REFERENCE(2, (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1))
COALESCE_DETAIL_VECTOR_REFERENCE(3,
                                 (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y)
                                      COALESCE_DETAIL_COMPONENT(z)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1), COALESCE_DETAIL_FROM(z, 2))
COALESCE_DETAIL_VECTOR_REFERENCE(4,
                                 (COALESCE_DETAIL_COMPONENT(x) COALESCE_DETAIL_COMPONENT(y) COALESCE_DETAIL_COMPONENT(z)
                                      COALESCE_DETAIL_COMPONENT(w)),
                                 COALESCE_DETAIL_FROM(x, 0), COALESCE_DETAIL_FROM(y, 1), COALESCE_DETAIL_FROM(z, 2),
                                 COALESCE_DETAIL_FROM(w, 3))
#undef COALESCE_DETAIL_FROM
#undef COALESCE_DETAIL_COMPONENT
#undef COALESCE_DETAIL_VECTOR_REFERENCE

// The proxy of an array field E[N] (E a leaf, or an array of them): view[i].pos[k] is a
// reference into column k of pos, for a k known only at run time. The N columns are found from
// the first one and the distance between two: a soa_vector lays out the columns of one array
// field at equal distances, and registers (for_each's elements) hold them side by side.
template <class Q, class F>
class array_reference : public array_reference_tag {
  using element = std::remove_extent_t<F>;
  using leaf = std::remove_reference_t<leaf_reference_t<Q, std::remove_all_extents_t<F>>>;
  using byte = std::conditional_t<std::is_const_v<leaf>, const unsigned char, unsigned char>;
  static constexpr std::size_t element_leaves = leaf_count_of<element>();

 public:
  COALESCE_HOST_DEVICE array_reference(leaf* first, std::ptrdiff_t stride_bytes)
      : first_(first), stride_(stride_bytes) {}

  COALESCE_HOST_DEVICE static constexpr std::size_t size() noexcept { return std::extent_v<F>; }
  // Element k. Precondition: k < size() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE member_reference_t<Q, element> operator[](std::size_t k) const {
    COALESCE_ASSERT(k < size(), "coalesce: index of an array field out of range");
    if constexpr (std::is_array_v<element>) {
      return {address_of(leaf_at(k * element_leaves)), stride_};
    } else {
      return leaf_at(k);
    }
  }
  // Leaf l of the array (its elements' leaves, in order).
  COALESCE_HOST_DEVICE leaf& leaf_at(std::size_t l) const {
    return *reinterpret_cast<leaf*>(reinterpret_cast<byte*>(first_) + std::ptrdiff_t(l) * stride_);
  }

 private:
  leaf* first_;
  std::ptrdiff_t stride_;
};

// The proxy of a struct whose one field is an array, as std::array and cuda::std::array are:
// view[i].pos[k] as for a C array, and the struct's value as a whole.
template <class Q>
class array_struct_reference : public soa_reference_tag, public array_reference<Q, wrapped_array_t<element_of_t<Q>>> {
  using elements = array_reference<Q, wrapped_array_t<element_of_t<Q>>>;

 public:
  using value_type = element_of_t<Q>;
  using elements::elements;

  template <std::size_t I>
  COALESCE_HOST_DEVICE elements get() const {
    static_assert(I == 0, "coalesce::get<I>: this struct has one field, an array");
    return *this;
  }
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    gather_leaves(v, static_cast<const elements&>(*this), std::make_index_sequence<leaf_count_of_v<value_type>>{});
    return v;
  }
  COALESCE_HOST_DEVICE const array_struct_reference& operator=(const value_type& v) const {
    static_assert(!std::is_const_v<Q>, "coalesce::soa_view<const T>: its elements are read-only");
    scatter_leaves(static_cast<const elements&>(*this), v, std::make_index_sequence<leaf_count_of_v<value_type>>{});
    return *this;
  }
  COALESCE_HOST_DEVICE const array_struct_reference& operator=(const array_struct_reference& other) const {
    return *this = static_cast<value_type>(other);
  }
  array_struct_reference(const array_struct_reference&) = default;
};

}  // namespace coalesce::detail
