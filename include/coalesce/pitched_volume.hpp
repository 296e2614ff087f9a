// coalesce: a 3D array of depth x height x width elements whose rows (the x runs) start on
// 128-byte boundaries, and the view kernels use. It is what cudaMalloc3D gives (there a 512-byte
// pitch), stream-ordered and indexed for you: element (z, y, x) is at
//   data + z * slice_pitch_bytes + y * pitch_bytes + x * sizeof(T),
// and an owning volume's slices follow each other (slice pitch = height x pitch), so its
// depth * height rows are one pitched matrix. That is how the algorithms walk it: for_each and
// transform over the rows at copy speed, for_each_index with f(z, y, x).
// Host-capable.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/container_capture.hpp>
#include <coalesce/detail/nvtx.hpp>
#include <coalesce/detail/pitched_volume_view.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

/// An owning depth x height x width array of T in the memory of `Space`, each row padded to the
/// pitch policy's alignment (128 bytes by default) and the slices following each other. It is a
/// pitched_matrix of depth * height rows that knows its slices: allocation, zeroing, fills and
/// copies are the matrix's, ordered on the resource's stream; reading device results on the host
/// (to_vector) waits for that stream. So are its resources, guarantees and refusals under a CUDA
/// graph capture (see pitched_matrix), which name the volume's calls: a moved-from volume is left
/// 0 x 0 x 0 (nothing allocated) with a copy of its resource, so its stream() is what it was.
template <class T, class Space = device_space, class PitchPolicy = line_aligned_rows,
          class Resource = default_resource_t<Space>>
class pitched_volume {
 public:
  using value_type = T;                                         ///< the element type
  using memory_space = Space;                                   ///< where the rows live
  using pitch_policy = PitchPolicy;                             ///< what sets the pitch (aligned_rows)
  using resource_type = Resource;                               ///< what allocates the rows
  using view_type = pitched_volume_view<T, Space>;              ///< what view() returns
  using const_view_type = pitched_volume_view<const T, Space>;  ///< what const_view() returns
  using rows_type = pitched_matrix<T, Space, PitchPolicy, Resource>;  ///< what as_matrix() returns

  /// An empty volume (0 x 0 x 0); no allocation.
  pitched_volume() = default;
  /// An empty volume (0 x 0 x 0) that allocates from `resource`, on its stream; no allocation yet.
  explicit pitched_volume(const Resource& resource) : rows_(resource) {}

  /// depth x height x width zero elements (padding zeroed too). Throws std::length_error if the
  /// bytes overflow std::size_t, coalesce::cuda_error (std::bad_alloc in host space) if allocation fails.
  pitched_volume(std::size_t depth, std::size_t height, std::size_t width, const Resource& resource = Resource())
      : rows_(new_rows(depth, height, width, resource, "coalesce::pitched_volume(depth, height, width)"), width,
              resource),
        depth_(depth), height_(height) {}
  /// depth x height x width copies of `value`.
  pitched_volume(std::size_t depth, std::size_t height, std::size_t width, const T& value,
                 const Resource& resource = Resource())
      : rows_(new_rows(depth, height, width, resource, "coalesce::pitched_volume(depth, height, width, value)"), width,
              value, resource),
        depth_(depth), height_(height) {}
  /// From `dense`: element (z, y, x) at dense[(z * height + y) * width + x].
  /// Throws std::invalid_argument if dense.size() != depth * height * width.
  pitched_volume(const std::vector<T>& dense, std::size_t depth, std::size_t height, std::size_t width,
                 const Resource& resource = Resource())
      : rows_(dense,
              new_rows(depth, height, width, resource,
                       "coalesce::pitched_volume(const std::vector<T>&, depth, height, width)"),
              width, resource),
        depth_(depth), height_(height) {}
  /// A deep copy of a volume in any space with any pitch policy.
  template <class S, class P, class R>
  explicit pitched_volume(const pitched_volume<T, S, P, R>& other, const Resource& resource = Resource())
      : rows_(rows_to_copy(other, resource.stream(), "coalesce::pitched_volume(const pitched_volume<T, S, P, R>&)"),
              resource),
        depth_(other.depth()), height_(other.height()) {}

  /// The rows do the work: the matrix's copy is deep and its assignment has the strong guarantee
  /// (only its copy can throw, and it comes first).
  pitched_volume(const pitched_volume& other)
      : rows_(rows_to_copy(other, other.stream(), "coalesce::pitched_volume(const pitched_volume&)")),
        depth_(other.depth_), height_(other.height_) {}
  /// Copies other's elements into new storage from this volume's resource, which replaces this
  /// volume's. Strong guarantee.
  pitched_volume& operator=(const pitched_volume& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_volume::operator=");
    if (this != &other) {
      const char* what = "coalesce::pitched_volume::operator=";
      if (!other.empty()) refuse_capture(detail::uncapturable::allocates, stream(), what, copy_instead);
      if (allocated_bytes() > 0) refuse_capture(detail::uncapturable::frees, stream(), what, copy_instead);
      rows_ = other.rows_;
      depth_ = other.depth_;
      height_ = other.height_;
    }
    return *this;
  }
  /// Takes other's storage and resource (see the class comment for what other keeps).
  pitched_volume(pitched_volume&& other) noexcept(std::is_nothrow_move_constructible_v<rows_type>)
      : rows_(std::move(other.rows_)), depth_(std::exchange(other.depth_, 0)),
        height_(std::exchange(other.height_, 0)) {}
  /// Takes other's storage and resource; this volume's are released.
  pitched_volume& operator=(pitched_volume&& other) noexcept(std::is_nothrow_move_assignable_v<rows_type>) {
    rows_ = std::move(other.rows_);
    depth_ = std::exchange(other.depth_, 0);
    height_ = std::exchange(other.height_, 0);
    return *this;
  }
  ~pitched_volume() = default;

  /// Exchanges the elements, the shapes and the resources; nothing is copied or allocated.
  void swap(pitched_volume& other) noexcept {
    rows_.swap(other.rows_);
    std::swap(depth_, other.depth_);
    std::swap(height_, other.height_);
  }
  friend void swap(pitched_volume& a, pitched_volume& b) noexcept { a.swap(b); }

  std::size_t depth() const noexcept { return depth_; }                     ///< the number of planes (z)
  std::size_t height() const noexcept { return height_; }                   ///< rows per plane (y)
  std::size_t width() const noexcept { return rows_.cols(); }               ///< elements per row (x)
  std::size_t size() const noexcept { return rows_.size(); }                ///< depth() * height() * width()
  bool empty() const noexcept { return rows_.empty(); }                     ///< whether size() is 0
  std::size_t pitch_bytes() const noexcept { return rows_.pitch_bytes(); }  ///< bytes from one row's start to the next
  std::size_t slice_pitch_bytes() const noexcept {
    return height_ * rows_.pitch_bytes();
  }  ///< bytes from one plane to the next
  std::size_t allocated_bytes() const noexcept { return rows_.allocated_bytes(); }  ///< bytes taken from the resource
  T* data() noexcept { return rows_.data(); }  ///< the first element
  const T* data() const noexcept { return rows_.data(); }  ///< the same, read-only
  const Resource& resource() const noexcept { return rows_.resource(); }  ///< what allocates the volume
  cudaStream_t stream() const noexcept { return rows_.stream(); }  ///< the resource's stream

  /// The whole volume; the view owns the rows' padding.
  view_type view() noexcept { return from_rows(rows_.view()); }
  const_view_type view() const noexcept { return from_rows(rows_.view()); }  ///< the whole volume, read-only
  const_view_type const_view() const noexcept { return view(); }  ///< the whole volume, read-only
  /// The depth * height rows as the pitched_matrix they are (row z * height + y).
  rows_type& as_matrix() noexcept { return rows_; }
  const rows_type& as_matrix() const noexcept { return rows_; }  ///< the same, read-only

  /// Element access in host space. Precondition: in range (checked under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  T& operator()(std::size_t z, std::size_t y, std::size_t x) {
    return view()(z, y, x);
  }
  /// The same, read-only.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  const T& operator()(std::size_t z, std::size_t y, std::size_t x) const {
    return view()(z, y, x);
  }
  /// A device volume is not indexed, neither on the host nor in device code (see pitched_matrix).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE T& operator()(std::size_t, std::size_t, std::size_t) const {
    static_assert(std::is_same_v<S, host_space>,
                  "coalesce::pitched_volume<T, device_space> has no operator(): capture v.view() in the device lambda "
                  "(or pass it to the kernel) and index the view there, view(z, y, x); to read elements on the host, "
                  "copy to a pitched_volume<T, host_space> or call to_vector()");
    return *static_cast<T*>(nullptr);  // never compiled into anything: the assertion fails first
  }

  /// Sets every element to `value`.
  void fill(const T& value) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_volume::fill");
    if (on_device && !empty())
      refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), "coalesce::pitched_volume::fill",
                     "fill before the capture begins, or copy_from a device or pinned volume");
    rows_.fill(value);
  }
  /// Copies every element of `other`, which must have the same extents (pitches may differ); the
  /// copy is ordered on the device-side volume's stream, and waited for when this volume is on the
  /// host. Throws std::invalid_argument on an extent mismatch.
  template <class S, class P, class R>
  void copy_from(const pitched_volume<T, S, P, R>& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_volume::copy_from");
    if (other.depth() != depth_ || other.height() != height_ || other.width() != width())
      throw std::invalid_argument("coalesce::pitched_volume::copy_from: the source is " +
                                  std::to_string(other.depth()) + " x " + std::to_string(other.height()) + " x " +
                                  std::to_string(other.width()) + " but the destination " + std::to_string(depth_) +
                                  " x " + std::to_string(height_) + " x " + std::to_string(width()));
    const char* what = "coalesce::pitched_volume::copy_from";
    if constexpr (on_device && !detail::copies_asynchronously<S, R>) {
      if (!empty()) refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), what, pageable_instead);
    } else if constexpr (!on_device && std::is_same_v<S, device_space>) {
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, read_instead);
    }
    rows_.copy_from(other.as_matrix());
  }
  /// Copies `dense` (see the constructor). Throws std::invalid_argument if dense.size() != size().
  void copy_from(const std::vector<T>& dense) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_volume::copy_from");
    if (on_device && !empty())
      refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), "coalesce::pitched_volume::copy_from",
                     pageable_instead);
    rows_.copy_from(dense);
  }
  /// The elements in a host vector, (z, y, x) at [(z * height + y) * width + x]; a device volume's
  /// waits for the stream.
  std::vector<T> to_vector() const {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_volume::to_vector");
    if (on_device)
      refuse_capture(detail::uncapturable::waits, stream(), "coalesce::pitched_volume::to_vector", read_instead);
    return rows_.to_vector();
  }

 private:
  static constexpr bool on_device = std::is_same_v<Space, device_space>;
  static constexpr const char* copy_instead =
      "copy before the capture begins (copy_from into a device volume made before it is recorded)";
  static constexpr const char* pageable_instead =
      "copy_from a device or pinned (pinned_resource) volume, or before the capture begins";
  static constexpr const char* read_instead =
      "copy the rows with as_matrix().copy_from_async into a pinned matrix, and read it once the graph has run";

  static void refuse_capture(detail::uncapturable reason, cudaStream_t stream, const char* what, const char* instead) {
    detail::refuse_capture_of<Space, Resource>(reason, stream, what, instead);
  }
  static std::size_t row_count(std::size_t depth, std::size_t height) {
    return detail::checked_multiply(depth, height, "coalesce::pitched_volume: depth x height rows of");
  }
  // The rows of a new volume, once a capture is refused for `what`, which allocates them.
  static std::size_t new_rows(std::size_t depth, std::size_t height, std::size_t width, const Resource& resource,
                              const char* what) {
    const std::size_t rows = row_count(depth, height);
    if (rows > 0 && width > 0)
      refuse_capture(detail::uncapturable::allocates, resource.stream(), what,
                     "construct it before the capture begins");
    return rows;
  }
  // other's rows, once a capture is refused for `what`, which copies them into new storage
  // ordered on `stream` (and waits for other's stream from the host).
  template <class S, class P, class R>
  static const pitched_matrix<T, S, P, R>& rows_to_copy(const pitched_volume<T, S, P, R>& other, cudaStream_t stream,
                                                        const char* what) {
    if constexpr (!on_device && std::is_same_v<S, device_space>)
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, copy_instead);
    if (!other.empty()) refuse_capture(detail::uncapturable::allocates, stream, what, copy_instead);
    return other.as_matrix();
  }
  template <class U>
  pitched_volume_view<U, Space> from_rows(const pitched_view<U, Space>& rows) const noexcept {
    return pitched_volume_view<U, Space>(rows.data(), depth_, height_, rows.cols(), rows.pitch_bytes(),
                                         height_ * rows.pitch_bytes(), rows.owned_row_bytes());
  }

  rows_type rows_;
  std::size_t depth_ = 0;
  std::size_t height_ = 0;
};

}  // namespace coalesce
