// coalesce: layout_view, a non-owning view of elements stored as records (layout::aos), in tiles
// (layout::aosoa<Lanes>) or split between hot columns and cold records (layout::split): what kernels take from a coalesce::vector of those layouts, as
// they take a soa_view from a soa_vector. view[i] is the same named-field proxy in every layout
// (view[i].x, view[i].energy() after COALESCE_METHODS), so one kernel template runs on all of
// them; leaf_pointer<L>(i) is leaf L of element i's address. Host-capable; kernels that only take
// views include this header alone.
//
//   template <class View>
//   __global__ void drift(View particles, float dt) {        // soa_view, or a layout_view of any layout
//     const std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < particles.size()) particles[i].x += particles[i].vx * dt;
//   }
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/indexed_iterator.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/detail/make_reference.hpp>
#include <coalesce/detail/split_map.hpp>
#include <coalesce/layout.hpp>
#include <coalesce/memory_space.hpp>
#include <coalesce/soa_fields.hpp>
#include <coalesce/soa_reference.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce {

/// A non-owning view of `size()` elements of T in Layout (layout::aos or layout::aosoa<Lanes>;
/// layout::soa's view is soa_view), in Space. Trivially copyable: kernels take it by value.
/// layout_view<const T, Layout> is read-only. It holds the start of the block of records or tiles,
/// and the index there of its element 0 (nonzero for a subview), so a subview of tiles may start
/// mid-tile.
template <class T, class Layout, class Space = device_space>
class layout_view {
  static_assert(std::is_same_v<Layout, layout::aos> || detail::is_aosoa<Layout>::value ||
                    detail::is_split<Layout>::value,
                "coalesce::layout_view<T, Layout>: Layout must be coalesce::layout::aos, layout::aosoa<Lanes> or "
                "layout::split<Hot, Cold> (the view of layout::soa is coalesce::soa_view<T>)");
  // Completes Layout, so that layout::aosoa<Lanes> checks its Lanes (is_empty_v holds for every layout).
  static_assert(std::is_empty_v<Layout> || !std::is_empty_v<Layout>);
  static_assert(
      is_memory_space_v<Space>,
      "coalesce::layout_view<T, Layout, Space>: Space must be coalesce::host_space or coalesce::device_space");
  static_assert(detail::check_soa_element<std::remove_const_t<T>>());

  using map = detail::layout_map<std::remove_const_t<T>, Layout>;
  template <std::size_t L>
  using leaf_type = detail::qualify_like_t<T, detail::leaf_type_t<std::remove_const_t<T>, L>>;

 public:
  using element_type = T;  ///< the element type, const if read-only
  using value_type = std::remove_const_t<T>;  ///< the element type without const
  using layout_type = Layout;  ///< how the elements are laid out
  using memory_space = Space;  ///< where they live
  using reference = soa_reference_t<T>;  ///< what view[i] is: the proxy
  using iterator = detail::indexed_iterator<layout_view>;  ///< what begin() and end() return
  using byte_type = detail::qualify_like_t<T, unsigned char>;  ///< the block's bytes
  static constexpr std::size_t field_count = detail::field_count_v<value_type>;  ///< T's own fields
  static constexpr std::size_t leaf_count = detail::leaf_count_v<value_type>;  ///< T's leaves

  layout_view() = default;
  /// The `size` elements from index `first` on of the records or tiles starting at `block` (for
  /// layout::aosoa, the start of a tile, 16-byte aligned; for layout::aos, of a record; for
  /// layout::split, of the first hot column, whose columns are `stride` elements long, a multiple
  /// of 256: `stride` is unused by the other layouts).
  COALESCE_HOST_DEVICE layout_view(byte_type* block, std::size_t size, std::size_t first = 0, std::size_t stride = 0)
      : block_(block), first_(first), size_(size), stride_(stride) {}
  /// A read-only view of a writable one.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  COALESCE_HOST_DEVICE layout_view(const layout_view<U, Layout, Space>& other)
      : block_(other.block()), first_(other.first()), size_(other.size()), stride_(other.stride()) {}

  COALESCE_HOST_DEVICE std::size_t size() const noexcept { return size_; }  ///< the number of elements
  COALESCE_HOST_DEVICE bool empty() const noexcept { return size_ == 0; }  ///< whether size() is 0
  COALESCE_HOST_DEVICE byte_type* block() const noexcept { return block_; }  ///< the records' or tiles' start
  COALESCE_HOST_DEVICE std::size_t first() const noexcept { return first_; }  ///< element 0's index in block()
  /// layout::split: the length of each hot column, in elements (0 for the other layouts).
  COALESCE_HOST_DEVICE std::size_t stride() const noexcept { return stride_; }

  /// Leaf L of element i (coalesce::leaf_t<T, L>), as a raw pointer: in layout::aos, into record
  /// i; in layout::aosoa<Lanes>, value i % Lanes of leaf L's run in tile i / Lanes; in
  /// layout::split, in its hot column or its cold record or tile.
  template <std::size_t L>
  COALESCE_HOST_DEVICE leaf_type<L>* leaf_pointer(std::size_t i) const noexcept {
    static_assert(L < leaf_count, "coalesce::layout_view::leaf_pointer<L>: L is not a leaf index of T");
    return map::template leaf_pointer<L>(block_, first_ + i, stride_);
  }
  /// layout::aos only: the records, as a T* (element 0's).
  template <class L = Layout, std::enable_if_t<std::is_same_v<L, layout::aos>, int> = 0>
  COALESCE_HOST_DEVICE T* data() const noexcept {
    return reinterpret_cast<T*>(block_) + first_;
  }

  /// Element i: the named-field proxy, references into its record or tile. Precondition:
  /// i < size() (checked under COALESCE_DEBUG). Host and device code for a view of device memory,
  /// host code only for one of host memory.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t i) const {
    return element(i);
  }
  /// Element i of a view of host memory, in host code only.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  reference operator[](std::size_t i) const {
    return element(i);
  }

  COALESCE_HOST_DEVICE iterator begin() const { return iterator(*this, 0); }  ///< at element 0
  COALESCE_HOST_DEVICE iterator end() const { return iterator(*this, size_); }  ///< one past the last

  /// Elements [first, first + count) as a view of their own. Precondition: first + count <= size()
  /// (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE layout_view subview(std::size_t first, std::size_t count) const {
    COALESCE_ASSERT(first <= size_ && count <= size_ - first, "coalesce::layout_view::subview: range out of bounds");
    return layout_view(block_, count, first_ + first, stride_);
  }
  /// Elements [first, size()).
  COALESCE_HOST_DEVICE layout_view subview(std::size_t first) const {
    COALESCE_ASSERT(first <= size_, "coalesce::layout_view::subview: first beyond the end");
    return subview(first, size_ - first);
  }

 private:
  struct leaves_at {
    const layout_view& view;
    std::size_t i;
    template <std::size_t L>
    COALESCE_HOST_DEVICE leaf_type<L>& leaf() const {
      return *view.template leaf_pointer<L>(i);
    }
  };
  COALESCE_HOST_DEVICE reference element(std::size_t i) const {
    COALESCE_ASSERT(i < size_, "coalesce::layout_view: index out of range");
    return detail::make_reference<T>(leaves_at{*this, i});
  }

  byte_type* block_ = nullptr;
  std::size_t first_ = 0;
  std::size_t size_ = 0;
  std::size_t stride_ = 0;
};

/// The view type of elements of T in Layout: soa_view<T, Space> for layout::soa, else layout_view.
template <class T, class Layout, class Space = device_space>
using view_of_layout_t =
    std::conditional_t<std::is_same_v<Layout, layout::soa>, soa_view<T, Space>, layout_view<T, Layout, Space>>;

}  // namespace coalesce
