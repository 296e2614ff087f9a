// coalesce: soa_vector, the owning structure-of-arrays container: one allocation, one
// 256-byte-aligned column per leaf (per field, with structs, vector types and arrays split into
// theirs), in host or device memory. Host-capable; included by
// <coalesce/soa.hpp>.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/container_capture.hpp>
#include <coalesce/detail/container_checks.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/nvtx.hpp>
#include <coalesce/detail/soa_columns.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa_reference.hpp>
#include <coalesce/soa_view.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

/// An owning structure-of-arrays vector of T in `Space`: one allocation, one 256-byte-aligned
/// column per leaf of T (leaf_count_v<T>). Copies between spaces and the growth of device vectors
/// are ordered on the resource's stream (stream()), and so are coalesce's algorithms handed the
/// vector; its view carries no stream. Which calls wait for that stream:
///   - to_vector, assign and construction into host_space from a device vector wait (host code
///     reads the elements next); so does a copy from pageable host memory, until it is staged;
///   - assign_async never waits, and neither does assign into a device vector from device or
///     pinned memory: these, and the algorithms, are what a CUDA graph capture may record.
/// While the stream of a device vector or of a pinned host vector is being captured, the calls a
/// graph cannot record throw std::logic_error naming the call, before they allocate, enqueue or
/// change anything: construction with elements, copies and copy assignment (they allocate or
/// release), growth beyond capacity() (reserve, resize, resize_for_overwrite, push_back), a device
/// resize that fills new elements and assign from pageable memory (they copy it), assign into a
/// host vector from a device one and to_vector (they wait). A plain host vector asks nothing. Nor
/// may a vector that holds memory be destroyed or move-assigned to then: the release is not recorded.
///
/// Resources: a copy takes the source's resource (or the one given), copy assignment keeps this
/// vector's, and a move takes the source's with its storage; the moved-from vector is left empty
/// (size() and capacity() 0, nothing allocated) with a copy of its resource, so its stream() is
/// what it was. swap exchanges the resources with the elements. Exceptions: reserve, resize,
/// resize_for_overwrite, push_back and copy assignment give the strong guarantee (on failure the
/// vector is as it was, and nothing leaks); assign the basic one (a copy that fails may leave the
/// elements partly assigned, the size unchanged); moves and swap throw nothing.
/// A device vector's memory is released on its stream (cudaFreeAsync for the stream-ordered
/// resources): work on another stream that still reads it must be ordered before the destructor.
template <class T, class Space = device_space, class Resource = default_resource_t<Space>>
class soa_vector {
  static_assert(detail::check_soa_element<T>());
  static_assert(is_memory_space_v<Space>,
                "coalesce::soa_vector<T, Space>: Space must be coalesce::host_space or coalesce::device_space");
  static_assert(std::is_same_v<typename Resource::memory_space, Space>,
                "coalesce::soa_vector<T, Space, Resource>: Resource allocates in a different memory space");
  static constexpr bool on_device = std::is_same_v<Space, device_space>;
  static constexpr bool moves_nothrow = std::is_nothrow_copy_constructible_v<Resource>;

 public:
  using value_type = T;                                 ///< the element type
  using memory_space = Space;                           ///< where the columns live
  using resource_type = Resource;                       ///< what allocates them
  using view_type = soa_view<T, Space>;                 ///< what view() returns
  using const_view_type = soa_view<const T, Space>;     ///< what const_view() returns
  using iterator = soa_iterator<T, Space>;              ///< an iterator over the view
  using const_iterator = soa_iterator<const T, Space>;  ///< a read-only one
  using reference = soa_reference_t<T>;                 ///< what (*this)[i] is: a proxy of references
  using const_reference = soa_reference_t<const T>;     ///< a read-only proxy
  static constexpr std::size_t field_count = detail::field_count_v<T>;  ///< T's own fields
  static constexpr std::size_t leaf_count = detail::leaf_count_v<T>;    ///< the columns (leaf_count_v<T>)

  soa_vector() = default;
  /// An empty vector that allocates from `resource`, on its stream; no allocation yet.
  explicit soa_vector(const Resource& resource) noexcept(moves_nothrow) : storage_(resource) {}
  /// `count` value-initialized elements (T{}: zero, or the fields' default member initializers).
  explicit soa_vector(std::size_t count, const Resource& resource = Resource()) : soa_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::soa_vector");
    refuse_capture_of_growth(count, true, "coalesce::soa_vector(count)", "construct it before the capture begins");
    resize_unchecked(count);
  }
  /// The elements of an array of structs on the host.
  explicit soa_vector(const std::vector<T>& aos, const Resource& resource = Resource()) : soa_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::soa_vector");
    if (!aos.empty())
      refuse_capture(detail::uncapturable::allocates, "coalesce::soa_vector(const std::vector<T>&)",
                     "construct it before the capture begins");
    assign_from_host(aos.data(), aos.size());
  }
  /// A deep copy of a vector in another (or the same) space.
  template <class S, class R>
  explicit soa_vector(const soa_vector<T, S, R>& other, const Resource& resource = Resource()) : soa_vector(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::soa_vector");
    refuse_capture_of_copy(other, "coalesce::soa_vector(const soa_vector<T, S, R>&)");
    copy_from(other);
  }
  /// A deep copy, with a copy of other's resource. Throws coalesce::cuda_error (or std::bad_alloc
  /// in host space) if allocation fails.
  soa_vector(const soa_vector& other) : soa_vector(other.resource()) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::soa_vector");
    refuse_capture_of_copy(other, "coalesce::soa_vector(const soa_vector&)");
    copy_from(other);
  }
  /// Takes other's storage and resource (see the class comment for what other keeps).
  soa_vector(soa_vector&& other) noexcept(moves_nothrow) : storage_(other.resource()) { swap(other); }
  /// Copies other's elements into new storage from this vector's resource, which replaces this
  /// vector's. Strong guarantee.
  soa_vector& operator=(const soa_vector& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::operator=");
    if (this != &other) {
      soa_vector copy(resource());
      copy.refuse_capture_of_copy(other, "coalesce::soa_vector::operator=");
      if (allocated_bytes() > 0)
        refuse_capture(detail::uncapturable::frees, "coalesce::soa_vector::operator=", copy_instead);
      copy.copy_from(other);
      copy.swap(*this);
    }
    return *this;
  }
  /// Takes other's storage and resource; this vector's are released.
  soa_vector& operator=(soa_vector&& other) noexcept(moves_nothrow) {
    soa_vector(std::move(other)).swap(*this);
    return *this;
  }
  ~soa_vector() = default;

  /// Exchanges the elements and the resources; nothing is copied or allocated.
  void swap(soa_vector& other) noexcept {
    storage_.swap(other.storage_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }
  friend void swap(soa_vector& a, soa_vector& b) noexcept { a.swap(b); }

  std::size_t size() const noexcept { return size_; }                            ///< the number of elements
  std::size_t capacity() const noexcept { return capacity_; }                    ///< elements room is allocated for
  bool empty() const noexcept { return size_ == 0; }                             ///< whether size() is 0
  const Resource& resource() const noexcept { return storage_.resource(); }      ///< what allocates the columns
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }  ///< the resource's stream
  /// Bytes taken from the resource.
  std::size_t allocated_bytes() const noexcept { return storage_.allocated_bytes(); }

  view_type view() noexcept { return view_type(columns<void*>(), size_); }  ///< the columns, for kernels
  const_view_type view() const noexcept { return const_view_type(columns<const void*>(), size_); }  ///< read-only
  const_view_type const_view() const noexcept { return view(); }  ///< the columns, read-only
  iterator begin() noexcept { return view().begin(); }              ///< the first element
  iterator end() noexcept { return view().end(); }                  ///< one past the last
  const_iterator begin() const noexcept { return view().begin(); }  ///< the first element, read-only
  const_iterator end() const noexcept { return view().end(); }      ///< one past the last

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
  /// A device vector is not indexed, neither on the host (its elements are across the bus) nor in
  /// a kernel (a kernel that takes the vector gets a copy of the owner, not the columns).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t) const {
    static_assert(std::is_same_v<S, host_space>,
                  "coalesce::soa_vector<T, device_space> has no operator[]: pass vec.view() to the kernel and index "
                  "the view there (or copy to a soa_vector<T, host_space> to read elements on the host)");
    return *static_cast<const reference*>(nullptr);  // never compiled into anything: the assertion fails first
  }
  /// Appends `value` (host space), growing the capacity geometrically. Strong guarantee.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  void push_back(const T& value) {
    if (size_ == capacity_) {
      const std::size_t grown = capacity_ == 0 ? 16 : 2 * capacity_;
      refuse_capture_of_growth(grown, false, "coalesce::soa_vector::push_back",
                               "reserve enough capacity before the capture begins");
      with_capacity(grown).swap(*this);
    }
    view_type(columns<void*>(), size_ + 1)[size_] = value;
    ++size_;
  }

  /// Makes room for `count` elements without changing size(). Strong guarantee.
  void reserve(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::reserve");
    if (count <= capacity_) return;
    refuse_capture_of_growth(count, false, "coalesce::soa_vector::reserve", "reserve before the capture begins");
    with_capacity(count).swap(*this);
  }
  /// Becomes `count` elements long, keeping the first min(count, size()); new elements are T{}.
  /// Strong guarantee: the new elements are filled before a larger allocation replaces this one.
  void resize(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::resize");
    refuse_capture_of_growth(count, true, "coalesce::soa_vector::resize", "resize before the capture begins");
    resize_unchecked(count);
  }
  /// Becomes `count` elements long without writing the new ones: for a destination that a kernel
  /// is about to overwrite entirely (reading them first is reading uninitialized memory). Strong
  /// guarantee.
  void resize_for_overwrite(std::size_t count) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::resize_for_overwrite");
    if (count > capacity_) {
      refuse_capture_of_growth(count, false, "coalesce::soa_vector::resize_for_overwrite",
                               "resize before the capture begins");
      with_capacity(count).swap(*this);
    }
    size_ = count;
  }
  void clear() noexcept { size_ = 0; }  ///< size() 0; the capacity and the allocation stay

  /// Copies every element of `other`, which must have the same size, ordered on the device side's
  /// stream (this vector's when both are on the device). Into a host vector it waits for the copy.
  /// Throws std::invalid_argument if the sizes differ. Basic guarantee (see the class comment).
  template <class S, class R>
  void assign(const soa_vector<T, S, R>& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::assign");
    detail::check_same_size(other.size(), size_, "assign");
    if constexpr (on_device && !detail::copies_asynchronously<S, R>) {
      if (size_ > 0)
        refuse_capture(detail::uncapturable::copies_pageable_memory, "coalesce::soa_vector::assign",
                       "assign from a device or pinned (pinned_resource) vector, or before the capture begins");
    } else if constexpr (!on_device && std::is_same_v<S, device_space>) {
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), "coalesce::soa_vector::assign",
                                      "assign_async into a pinned (pinned_resource) vector, and read it once the "
                                      "graph has run");
    }
    copy_columns_from<S>(other.const_view().columns(), size_,
                         detail::device_side_stream<Space, S>(stream(), other.stream()));
    if constexpr (!on_device) detail::wait_for<S>(other.stream());
  }

  /// Copies every element of `other`, which must have the same size, and returns without waiting:
  /// ordered on the device side's stream (this vector's when both are on the device), so it follows
  /// the work queued there and precedes what is queued after, and a CUDA graph capture of that
  /// stream records it. One side must be on the device, and a host side must be pinned
  /// (pinned_resource): pageable memory is copied synchronously through a staging buffer, which a
  /// capture cannot record. Until the stream reaches the copy, a host destination does not hold
  /// the elements yet and a host source must not change: synchronize the stream, or wait for an
  /// event recorded after the copy. Throws std::invalid_argument if the sizes differ.
  template <class S, class R>
  void assign_async(const soa_vector<T, S, R>& other) {
    assign_async(other, detail::device_side_stream<Space, S>(stream(), other.stream()));
  }
  /// The same, ordered on `stream`; the caller orders it after the work of the vectors' own
  /// streams that it depends on.
  template <class S, class R>
  void assign_async(const soa_vector<T, S, R>& other, cudaStream_t stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::assign_async");
    using copy = detail::async_copy_between<Space, Resource, S, R>;
    constexpr bool device_involved = copy::device_involved;
    static_assert(device_involved,
                  "coalesce::soa_vector::assign_async: both vectors are in host_space, and a copy between them is a "
                  "memcpy on the calling thread; use assign");
    constexpr bool host_side_pinned = copy::host_side_pinned;
    static_assert(!device_involved || host_side_pinned,
                  "coalesce::soa_vector::assign_async: the host_space vector is pageable, which CUDA copies "
                  "synchronously through a staging buffer and a CUDA graph cannot capture; allocate it with "
                  "coalesce::pinned_resource (soa_vector<T, host_space, pinned_resource>), or use assign");
    if constexpr (copy::possible) {
      detail::check_same_size(other.size(), size_, "assign_async");
      copy_columns_from<S>(other.const_view().columns(), size_, stream);
    }
  }

  /// The elements as an array of structs on the host; a device vector's waits for its stream (and
  /// refuses while the stream is being captured).
  std::vector<T> to_vector() const {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::soa_vector::to_vector");
    std::vector<T> aos(size_);
    if constexpr (!on_device) {
      const auto v = view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    } else {
      refuse_capture(detail::uncapturable::waits, "coalesce::soa_vector::to_vector",
                     "assign_async into a pinned (pinned_resource) vector, and read it once the graph has run");
      soa_vector<T, host_space> staging;
      staging.copy_from(*this);
      const auto v = staging.view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    }
    return aos;
  }

 private:
  template <class, class, class>
  friend class soa_vector;

  template <class Pointer>
  column_array<Pointer, leaf_count> columns() const noexcept {
    column_array<Pointer, leaf_count> result{};
    if (capacity_ == 0) return result;
    const auto offsets = detail::column_offsets<T>(capacity_, std::make_index_sequence<leaf_count>{});
    auto* base = static_cast<unsigned char*>(storage_.get());
    for (std::size_t i = 0; i < leaf_count; ++i) result[i] = base + offsets[i];
    return result;
  }

  // Throws std::logic_error naming `what` while this vector's stream is being captured.
  void refuse_capture(detail::uncapturable reason, const char* what, const char* instead) const {
    detail::refuse_capture_of<Space, Resource>(reason, stream(), what, instead);
  }
  // The same where becoming `count` long would allocate (beyond the capacity) or, when `fills`,
  // write new elements of a device vector (T{}, copied from the host).
  void refuse_capture_of_growth(std::size_t count, bool fills, const char* what, const char* instead) const {
    if (count > capacity_) refuse_capture(detail::uncapturable::allocates, what, instead);
    else if (on_device && fills && count > size_)
      refuse_capture(detail::uncapturable::copies_pageable_memory, what, instead);
  }
  // The same for copying `other` into this vector's storage: it allocates, and into the host
  // from the device it waits for other's stream.
  template <class S, class R>
  void refuse_capture_of_copy(const soa_vector<T, S, R>& other, const char* what) const {
    if (other.size() > 0) refuse_capture(detail::uncapturable::allocates, what, copy_instead);
    if constexpr (!on_device && std::is_same_v<S, device_space>)
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, copy_instead);
  }
  static constexpr const char* copy_instead =
      "copy before the capture begins (assign into a device vector made before it is recorded)";

  // Takes storage for `count` elements (on an empty vector).
  void allocate(std::size_t count) {
    const auto offsets = detail::column_offsets<T>(count, std::make_index_sequence<leaf_count>{});
    detail::owned_bytes<Resource>(resource(), offsets[leaf_count], allocation_alignment).swap(storage_);
    capacity_ = count;
  }

  // A vector from this one's resource with room for `count` (> capacity()) elements, holding
  // this one's: what growth swaps in once it is complete, for the strong guarantee.
  soa_vector with_capacity(std::size_t count) const {
    soa_vector next(resource());
    next.allocate(count);
    next.copy_columns_from<Space>(columns<const void*>(), size_, stream());
    next.size_ = size_;
    return next;
  }

  void resize_unchecked(std::size_t count) {
    if (count > capacity_) {
      soa_vector next = with_capacity(count);
      next.fill_value_initialized(size_, count);
      next.size_ = count;
      next.swap(*this);
      return;
    }
    if (count > size_) fill_value_initialized(size_, count);
    size_ = count;
  }

  // Copies `count` elements of every column, ordered on `on`.
  template <class FromSpace, class Pointers>
  void copy_columns_from(const Pointers& from, std::size_t count, cudaStream_t on) {
    detail::copy_leaf_columns<T, Space, FromSpace>(columns<void*>(), from, count, on,
                                                   std::make_index_sequence<leaf_count>{});
  }

  // Makes this empty vector a copy of `other` (the caller has refused a capture).
  template <class S, class R>
  void copy_from(const soa_vector<T, S, R>& other) {
    allocate(other.size());
    const cudaStream_t on = detail::device_side_stream<Space, S>(stream(), other.stream());
    copy_columns_from<S>(other.const_view().columns(), other.size(), on);
    // Host elements are read by host code right away: wait for a copy out of the device.
    if constexpr (!on_device) detail::wait_for<S>(on);
    size_ = other.size();
  }

  // Scatters an array of structs from the host into the columns of this empty vector (staged in
  // host memory first for a device vector: one copy per column).
  void assign_from_host(const T* aos, std::size_t count) {
    if constexpr (!on_device) {
      allocate(count);
      const view_type v(columns<void*>(), count);
      for (std::size_t i = 0; i < count; ++i) v[i] = aos[i];
      size_ = count;
    } else {
      soa_vector<T, host_space> staging;
      staging.assign_from_host(aos, count);
      copy_from(staging);
    }
  }

  // Elements [first, last) = T{}, column by column (no kernel).
  void fill_value_initialized(std::size_t first, std::size_t last) {
    detail::fill_leaf_columns_value_initialized<T, Space>(columns<void*>(), first, last, stream(),
                                                          std::make_index_sequence<leaf_count>{});
  }

  detail::owned_bytes<Resource> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace coalesce
