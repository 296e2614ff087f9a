// coalesce: coalesce::vector<T, Layout>, the owning container of elements of T in any layout, and
// layout_vector, its class for the record layouts (layout::aos, layout::aosoa<Lanes>):
//   coalesce::vector<Particle>                           soa_vector<Particle>: one column per leaf
//   coalesce::vector<Particle, layout::aos>              records, sizeof(Particle) apart
//   coalesce::vector<Particle, layout::aosoa<32>>        tiles of 32 elements, a run per leaf
// Every one has the same calls (size, view, assign, resize, to_vector...), and its view's
// elements the same named-field proxy, so code written against one compiles against the others;
// coalesce::convert (<coalesce/convert.hpp>) copies between layouts on the device. Host-capable.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/container_capture.hpp>
#include <coalesce/detail/container_checks.hpp>
#include <coalesce/detail/layout_copies.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/detail/nvtx.hpp>
#include <coalesce/error.hpp>
#include <coalesce/layout.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa_vector.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

/// An owning vector of T in `Layout` (layout::aos or layout::aosoa<Lanes>) in `Space`: one
/// 256-byte-aligned allocation of records or whole tiles. Its calls, their streams, what they
/// refuse during a CUDA graph capture and their exception guarantees are soa_vector's (see there):
/// growth, copy assignment, reserve and resize give the strong guarantee; moves and swap throw
/// nothing; copies between spaces are one copy of the bytes (a layout::aosoa copy adds one per
/// leaf for a last tile that is not full).
template <class T, class Layout, class Space = device_space, class Resource = default_resource_t<Space>>
class layout_vector {
  static_assert(detail::check_soa_element<T>());
  static constexpr bool record_layout =
      std::is_same_v<Layout, layout::aos> || detail::is_aosoa<Layout>::value || detail::is_split<Layout>::value;
  static_assert(record_layout,
                "coalesce::layout_vector<T, Layout>: Layout must be coalesce::layout::aos, layout::aosoa<Lanes> or "
                "layout::split<Hot, Cold> (coalesce::vector<T, layout::soa> is soa_vector<T>)");
  // Completes Layout, so that layout::aosoa<Lanes> checks its Lanes (is_empty_v holds for every layout).
  static_assert(std::is_empty_v<Layout> || !std::is_empty_v<Layout>);
  // After that assertion, records: no second error from the types below.
  using checked_layout = std::conditional_t<record_layout, Layout, layout::aos>;
  static_assert(is_memory_space_v<Space>,
                "coalesce::layout_vector<T, Layout, Space>: Space must be coalesce::host_space or device_space");
  static_assert(std::is_same_v<typename Resource::memory_space, Space>,
                "coalesce::layout_vector<T, Layout, Space, Resource>: Resource allocates in a different memory space");
  static constexpr bool on_device = std::is_same_v<Space, device_space>;
  static constexpr bool moves_nothrow = std::is_nothrow_copy_constructible_v<Resource>;
  using map = detail::layout_map<T, checked_layout>;

 public:
  using value_type = T;                                          ///< the element type
  using layout_type = Layout;                                    ///< how the elements are laid out
  using memory_space = Space;                                    ///< where they live
  using resource_type = Resource;                                ///< what allocates them
  using view_type = layout_view<T, checked_layout, Space>;        ///< what view() returns
  using const_view_type = layout_view<const T, checked_layout, Space>;  ///< what const_view() returns
  using iterator = typename view_type::iterator;                 ///< an iterator over the view
  using const_iterator = typename const_view_type::iterator;     ///< a read-only one
  using reference = soa_reference_t<T>;                          ///< what (*this)[i] is: the proxy
  using const_reference = soa_reference_t<const T>;              ///< a read-only proxy
  static constexpr std::size_t field_count = detail::field_count_v<T>;  ///< T's own fields
  static constexpr std::size_t leaf_count = detail::leaf_count_v<T>;    ///< T's leaves

  layout_vector() = default;
  /// An empty vector that allocates from `resource`, on its stream.
  explicit layout_vector(const Resource& resource) noexcept(moves_nothrow) : storage_(resource) {}
  /// `count` value-initialized elements (T{}).
  explicit layout_vector(std::size_t count, const Resource& resource = Resource()) : layout_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::layout_vector");
    refuse_capture_of_growth(count, true, "coalesce::layout_vector(count)", "construct it before the capture begins");
    resize_unchecked(count);
  }
  /// The elements of an array of structs on the host.
  explicit layout_vector(const std::vector<T>& aos, const Resource& resource = Resource()) : layout_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::layout_vector");
    if (!aos.empty())
      refuse_capture(detail::uncapturable::allocates, "coalesce::layout_vector(const std::vector<T>&)",
                     "construct it before the capture begins");
    assign_from_host(aos.data(), aos.size());
  }
  /// A deep copy of a vector of the same layout in another (or the same) space.
  template <class S, class R>
  explicit layout_vector(const layout_vector<T, Layout, S, R>& other, const Resource& resource = Resource())
      : layout_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::layout_vector");
    refuse_capture_of_copy(other, "coalesce::layout_vector(const layout_vector<T, Layout, S, R>&)");
    copy_from(other);
  }
  /// A deep copy, with a copy of other's resource.
  layout_vector(const layout_vector& other) : layout_vector(other.resource()) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::layout_vector");
    refuse_capture_of_copy(other, "coalesce::layout_vector(const layout_vector&)");
    copy_from(other);
  }
  /// Takes other's storage and resource; other is left empty, with a copy of its resource.
  layout_vector(layout_vector&& other) noexcept(moves_nothrow) : storage_(other.resource()) { swap(other); }
  /// Copies other's elements into new storage from this vector's resource. Strong guarantee.
  layout_vector& operator=(const layout_vector& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::operator=");
    if (this != &other) {
      layout_vector copy(resource());
      copy.refuse_capture_of_copy(other, "coalesce::layout_vector::operator=");
      if (allocated_bytes() > 0)
        refuse_capture(detail::uncapturable::frees, "coalesce::layout_vector::operator=", copy_instead);
      copy.copy_from(other);
      copy.swap(*this);
    }
    return *this;
  }
  /// Takes other's storage and resource; this vector's are released.
  layout_vector& operator=(layout_vector&& other) noexcept(moves_nothrow) {
    layout_vector(std::move(other)).swap(*this);
    return *this;
  }
  ~layout_vector() = default;

  /// Exchanges the elements and the resources; nothing is copied or allocated.
  void swap(layout_vector& other) noexcept {
    storage_.swap(other.storage_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }
  friend void swap(layout_vector& a, layout_vector& b) noexcept { a.swap(b); }

  std::size_t size() const noexcept { return size_; }                            ///< the number of elements
  std::size_t capacity() const noexcept { return capacity_; }                    ///< elements room is allocated for
  bool empty() const noexcept { return size_ == 0; }                             ///< whether size() is 0
  const Resource& resource() const noexcept { return storage_.resource(); }      ///< what allocates
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }  ///< the resource's stream
  std::size_t allocated_bytes() const noexcept { return storage_.allocated_bytes(); }  ///< bytes taken

  view_type view() noexcept { return view_type(block(), size_, 0, stride()); }  ///< the elements, for kernels
  const_view_type view() const noexcept { return const_view_type(block(), size_, 0, stride()); }  ///< read-only
  const_view_type const_view() const noexcept { return view(); }                      ///< read-only
  iterator begin() noexcept { return view().begin(); }                                ///< the first element
  iterator end() noexcept { return view().end(); }                                    ///< one past the last
  const_iterator begin() const noexcept { return view().begin(); }                    ///< read-only
  const_iterator end() const noexcept { return view().end(); }                        ///< read-only

  /// Element access in host space. Precondition: i < size() (checked under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  reference operator[](std::size_t i) {
    return view()[i];
  }
  /// The same, read-only.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  const_reference operator[](std::size_t i) const {
    return view()[i];
  }
  /// A device vector is not indexed: pass view() to the kernel and index the view there.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t) const {
    static_assert(std::is_same_v<S, host_space>,
                  "coalesce::layout_vector<T, Layout, device_space> has no operator[]: pass vec.view() to the kernel "
                  "and index the view there (or copy to a host_space vector to read elements on the host)");
    return *static_cast<const reference*>(nullptr);  // never compiled into anything: the assertion fails first
  }
  /// Appends `value` (host space), growing the capacity geometrically. Strong guarantee.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  void push_back(const T& value) {
    if (size_ == capacity_) {
      const std::size_t grown = capacity_ == 0 ? 16 : 2 * capacity_;
      refuse_capture_of_growth(grown, false, "coalesce::layout_vector::push_back",
                               "reserve enough capacity before the capture begins");
      with_capacity(grown).swap(*this);
    }
    view_type(block(), size_ + 1, 0, stride())[size_] = value;
    ++size_;
  }

  /// Makes room for `count` elements without changing size(). Strong guarantee.
  void reserve(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::reserve");
    if (count <= capacity_) return;
    refuse_capture_of_growth(count, false, "coalesce::layout_vector::reserve", "reserve before the capture begins");
    with_capacity(count).swap(*this);
  }
  /// Becomes `count` elements long, keeping the first min(count, size()); new elements are T{}.
  /// Strong guarantee.
  void resize(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::resize");
    refuse_capture_of_growth(count, true, "coalesce::layout_vector::resize", "resize before the capture begins");
    resize_unchecked(count);
  }
  /// Becomes `count` elements long without writing the new ones, for a destination a kernel is
  /// about to overwrite entirely. Strong guarantee.
  void resize_for_overwrite(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::resize_for_overwrite");
    if (count > capacity_) {
      refuse_capture_of_growth(count, false, "coalesce::layout_vector::resize_for_overwrite",
                               "resize before the capture begins");
      with_capacity(count).swap(*this);
    }
    size_ = count;
  }
  void clear() noexcept { size_ = 0; }  ///< size() 0; the capacity and the allocation stay

  /// Copies every element of `other` (same layout, same size), ordered on the device side's stream;
  /// into a host vector it waits. Throws std::invalid_argument if the sizes differ. Basic guarantee.
  template <class S, class R>
  void assign(const layout_vector<T, Layout, S, R>& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::assign");
    detail::check_same_size(other.size(), size_, "assign");
    if constexpr (on_device && !detail::copies_asynchronously<S, R>) {
      if (size_ > 0)
        refuse_capture(detail::uncapturable::copies_pageable_memory, "coalesce::layout_vector::assign",
                       "assign from a device or pinned (pinned_resource) vector, or before the capture begins");
    } else if constexpr (!on_device && std::is_same_v<S, device_space>) {
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), "coalesce::layout_vector::assign",
                                      "assign_async into a pinned (pinned_resource) vector");
    }
    copy_prefix_from<S>(other.const_view(), size_, detail::device_side_stream<Space, S>(stream(), other.stream()));
    if constexpr (!on_device) detail::wait_for<S>(other.stream());
  }
  /// Copies every element of `other` without waiting, ordered on the device side's stream (or on
  /// `stream`); one side on the device, a host side pinned: as soa_vector::assign_async.
  template <class S, class R>
  void assign_async(const layout_vector<T, Layout, S, R>& other) {
    assign_async(other, detail::device_side_stream<Space, S>(stream(), other.stream()));
  }
  /// The same, ordered on `stream`.
  template <class S, class R>
  void assign_async(const layout_vector<T, Layout, S, R>& other, cudaStream_t stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::assign_async");
    using copy = detail::async_copy_between<Space, Resource, S, R>;
    static_assert(copy::device_involved,
                  "coalesce::layout_vector::assign_async: both vectors are in host_space; use assign");
    static_assert(!copy::device_involved || copy::host_side_pinned,
                  "coalesce::layout_vector::assign_async: the host_space vector is pageable, which CUDA copies "
                  "synchronously; allocate it with coalesce::pinned_resource, or use assign");
    if constexpr (copy::possible) {
      detail::check_same_size(other.size(), size_, "assign_async");
      copy_prefix_from<S>(other.const_view(), size_, stream);
    }
  }

  /// The elements as an array of structs on the host; a device vector's waits for its stream.
  std::vector<T> to_vector() const {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::layout_vector::to_vector");
    std::vector<T> aos(size_);
    if constexpr (!on_device) {
      const auto v = view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    } else {
      refuse_capture(detail::uncapturable::waits, "coalesce::layout_vector::to_vector",
                     "assign_async into a pinned (pinned_resource) vector, and read it once the graph has run");
      layout_vector<T, Layout, host_space> staging;
      staging.copy_from(*this);
      const auto v = staging.view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    }
    return aos;
  }

 private:
  template <class, class, class, class>
  friend class layout_vector;

  unsigned char* block() const noexcept { return static_cast<unsigned char*>(storage_.get()); }
  // layout::split: the length of the hot columns of the allocation (0 for the other layouts).
  std::size_t stride() const noexcept {
    if constexpr (detail::is_split<checked_layout>::value) return map::stride_for(capacity_);
    else return 0;
  }

  void refuse_capture(detail::uncapturable reason, const char* what, const char* instead) const {
    detail::refuse_capture_of<Space, Resource>(reason, stream(), what, instead);
  }
  void refuse_capture_of_growth(std::size_t count, bool fills, const char* what, const char* instead) const {
    if (count > capacity_) refuse_capture(detail::uncapturable::allocates, what, instead);
    else if (on_device && fills && count > size_)
      refuse_capture(detail::uncapturable::copies_pageable_memory, what, instead);
  }
  template <class S, class R>
  void refuse_capture_of_copy(const layout_vector<T, Layout, S, R>& other, const char* what) const {
    if (other.size() > 0) refuse_capture(detail::uncapturable::allocates, what, copy_instead);
    if constexpr (!on_device && std::is_same_v<S, device_space>)
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, copy_instead);
  }
  static constexpr const char* copy_instead =
      "copy before the capture begins (assign into a device vector made before it is recorded)";

  // Takes storage for `count` elements (on an empty vector): whole tiles for layout::aosoa.
  void allocate(std::size_t count) {
    detail::owned_bytes<Resource>(resource(), map::bytes(count), allocation_alignment).swap(storage_);
    capacity_ = count;
    // Padding between runs or in cold records is never written by the walks; zeroed once here,
    // whole-tile and whole-record copies of it read defined bytes.
    if constexpr (map::has_gaps) {
      const std::size_t from = map::gapped_from(count), bytes = map::bytes(count) - from;
      detail::zero_rows<Space>(block() + from, bytes, bytes, 1, stream());
    }
  }
  // A vector from this one's resource with room for `count` elements, holding this one's: what
  // growth swaps in once it is complete (the strong guarantee).
  layout_vector with_capacity(std::size_t count) const {
    layout_vector next(resource());
    next.allocate(count);
    next.template copy_prefix_from<Space>(const_view(), size_, stream());
    next.size_ = size_;
    return next;
  }
  void resize_unchecked(std::size_t count) {
    if (count > capacity_) {
      layout_vector next = with_capacity(count);
      next.fill_value_initialized(size_, count);
      next.size_ = count;
      next.swap(*this);
      return;
    }
    if (count > size_) fill_value_initialized(size_, count);
    size_ = count;
  }
  template <class FromSpace>
  void copy_prefix_from(const layout_view<const T, checked_layout, FromSpace>& from, std::size_t count,
                        cudaStream_t on) {
    detail::copy_layout_prefix<T, Space, FromSpace>(checked_layout{}, block(), stride(), from.block(), from.stride(),
                                                    count, on);
  }
  template <class S, class R>
  void copy_from(const layout_vector<T, Layout, S, R>& other) {
    allocate(other.size());
    const cudaStream_t on = detail::device_side_stream<Space, S>(stream(), other.stream());
    copy_prefix_from<S>(other.const_view(), other.size(), on);
    if constexpr (!on_device) detail::wait_for<S>(on);
    size_ = other.size();
  }
  // The records of an array of structs are this layout's bytes already; tiles are made on the
  // host first (a host vector's elements, then one copy).
  void assign_from_host(const T* aos, std::size_t count) {
    if constexpr (std::is_same_v<checked_layout, layout::aos>) {
      allocate(count);
      detail::copy_rows<Space, host_space>(block(), 0, aos, 0, count * sizeof(T), 1, stream());
      size_ = count;
    } else if constexpr (!on_device) {
      allocate(count);
      const view_type v(block(), count, 0, stride());
      for (std::size_t i = 0; i < count; ++i) v[i] = aos[i];
      size_ = count;
    } else {
      layout_vector<T, Layout, host_space> staging;
      staging.assign_from_host(aos, count);
      copy_from(staging);
    }
  }
  void fill_value_initialized(std::size_t first, std::size_t last) {
    detail::fill_layout_value_initialized<T, Space>(checked_layout{}, block(), stride(), first, last, stream());
  }

  detail::owned_bytes<Resource> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

namespace detail {
template <class T, class Layout, class Space, class Resource>
struct vector_of_layout {
  static_assert(is_layout_v<Layout>,
                "coalesce::vector<T, Layout, Space>: the second argument is the layout (coalesce::layout::soa, aos "
                "or aosoa<Lanes>) and the memory space comes third: coalesce::vector<T, coalesce::layout::soa, "
                "coalesce::host_space>");
  // After the assertion, a vector of records: no second error where the declaration is used.
  using type = layout_vector<T, std::conditional_t<is_layout_v<Layout>, Layout, layout::aos>, Space, Resource>;
};
template <class T, class Space, class Resource>
struct vector_of_layout<T, layout::soa, Space, Resource> {
  using type = soa_vector<T, Space, Resource>;
};
}  // namespace detail

/// The container of elements of T in Layout: soa_vector<T, Space, Resource> for layout::soa (the
/// default), layout_vector<T, Layout, Space, Resource> for layout::aos and layout::aosoa<Lanes>.
template <class T, class Layout = layout::soa, class Space = device_space, class Resource = default_resource_t<Space>>
using vector = typename detail::vector_of_layout<T, Layout, Space, Resource>::type;

}  // namespace coalesce
