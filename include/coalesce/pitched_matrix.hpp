// coalesce: a row-major matrix whose rows start on 128-byte boundaries, and the view kernels use.
// A dense row of 1000 floats is 4000 bytes, so most rows start inside a 128-byte line and a warp
// reading 32 floats of such a row touches two lines instead of one. pitched_matrix pads each row
// to a multiple of 128 bytes (the pitch), allocates stream-ordered, and indexes for you.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/container_capture.hpp>
#include <coalesce/detail/container_checks.hpp>
#include <coalesce/detail/nvtx.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/detail/view_declarations.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

/// Pitch policy: every row starts on a multiple of `Bytes` (a power of two). 128 (the default) is
/// one cache line: the fewest lines per row. 512 matches cudaMallocPitch and texture binding;
/// 16 is the least padding that still allows 16-byte vector access to every row.
template <std::size_t Bytes>
struct aligned_rows {
  static_assert(detail::is_power_of_two(Bytes) && Bytes <= 4096,
                "coalesce::aligned_rows<Bytes>: Bytes must be a power of two no larger than 4096");
  static constexpr std::size_t row_alignment = Bytes;  ///< where every row starts: a multiple of Bytes

  /// The pitch for rows of `row_bytes` bytes: the next multiple of the alignment.
  static constexpr std::size_t pitch_bytes(std::size_t row_bytes) { return (row_bytes + Bytes - 1) / Bytes * Bytes; }
};

/// The default pitch policy: rows start on 128-byte lines, so a warp's 32 x 4 B read of a row is
/// one line, not two.
using line_aligned_rows = aligned_rows<128>;

/// An owning row-major matrix of rows x cols elements of T, each row padded to the pitch policy's
/// alignment (128 bytes by default), the base 256-byte aligned (more when the policy asks), in the
/// memory of `Space`. New elements are zero bytes. Copies and fills are ordered on the resource's
/// stream (stream()), and so are coalesce's algorithms handed the matrix; its view carries no
/// stream. to_vector, and copy_from into a host matrix, wait for that stream; copy_from_async
/// never waits, and with copy_from into a device matrix from device or pinned memory, for_each,
/// transform and for_each_index is what a CUDA graph capture may record. While the stream of a
/// device matrix or of a pinned host matrix is being captured, the calls a graph cannot record
/// throw std::logic_error naming the call, before they allocate, enqueue or change anything:
/// construction of a non-empty matrix, copies, copy assignment and resize to another shape (they
/// allocate or release), a device matrix's fill and copy_from from pageable memory (they copy it),
/// copy_from into a host matrix from a device one and to_vector (they wait). A plain host matrix
/// asks nothing.
///
/// Resources: a copy takes the source's resource (or the one given), copy assignment keeps this
/// matrix's, and a move takes the source's with its storage; the moved-from matrix is left 0 x 0
/// (pitch 0, nothing allocated) with a copy of its resource, so its stream() is what it was. swap
/// exchanges the resources with the elements. Exceptions: resize and copy assignment give the
/// strong guarantee (on failure the matrix is as it was, and nothing leaks); fill and copy_from
/// the basic one (a device copy that fails may leave the elements partly written); moves and swap
/// throw nothing. A device matrix's memory is released on its stream: work on another stream that
/// still reads it must be ordered before the destructor, and a matrix whose stream is being
/// captured must not be destroyed or move-assigned to (the release cannot be recorded).
template <class T, class Space = device_space, class PitchPolicy = line_aligned_rows,
          class Resource = default_resource_t<Space>>
class pitched_matrix {
  static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T>,
                "coalesce::pitched_matrix<T>: T must be a trivially copyable, non-const object type (rows move with "
                "cudaMemcpy2D); store indices or handles instead of objects that own memory");
  static_assert(is_memory_space_v<Space>,
                "coalesce::pitched_matrix<T, Space>: Space must be coalesce::host_space or coalesce::device_space");
  static_assert(std::is_same_v<typename Resource::memory_space, Space>,
                "coalesce::pitched_matrix<T, Space, Policy, Resource>: Resource allocates in a different memory space");
  static_assert(PitchPolicy::row_alignment % alignof(T) == 0,
                "coalesce::pitched_matrix<T, Space, aligned_rows<N>>: N must be a multiple of alignof(T); use a "
                "larger aligned_rows");
  static constexpr bool on_device = std::is_same_v<Space, device_space>;
  static constexpr bool moves_nothrow = std::is_nothrow_copy_constructible_v<Resource>;

 public:
  using value_type = T;                                  ///< the element type
  using memory_space = Space;                            ///< where the rows live
  using pitch_policy = PitchPolicy;                      ///< what sets the pitch (aligned_rows)
  using resource_type = Resource;                        ///< what allocates the rows
  using view_type = pitched_view<T, Space>;              ///< what view() returns
  using const_view_type = pitched_view<const T, Space>;  ///< what const_view() returns

  /// An empty matrix (0 x 0); no allocation.
  pitched_matrix() = default;
  /// An empty matrix (0 x 0) that allocates from `resource`, on its stream; no allocation yet.
  explicit pitched_matrix(const Resource& resource) noexcept(moves_nothrow) : storage_(resource) {}

  /// rows x cols zero elements (the padding is zeroed too, so vector reads past the last column
  /// see defined bytes). Throws std::length_error if the bytes overflow std::size_t, and
  /// coalesce::cuda_error (or std::bad_alloc in host space) if allocation fails.
  pitched_matrix(std::size_t rows, std::size_t cols, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource, "coalesce::pitched_matrix(rows, cols)",
                       construct_instead) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::pitched_matrix");
    zero_elements();
  }

  /// rows x cols copies of `value`.
  pitched_matrix(std::size_t rows, std::size_t cols, const T& value, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource, "coalesce::pitched_matrix(rows, cols, value)",
                       construct_instead) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::pitched_matrix");
    fill_unchecked(value);
  }

  /// From `dense`, rows x cols elements stored row-major without padding.
  /// Throws std::invalid_argument if dense.size() != rows * cols.
  pitched_matrix(const std::vector<T>& dense, std::size_t rows, std::size_t cols, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource,
                       "coalesce::pitched_matrix(const std::vector<T>&, rows, cols)", construct_instead) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::pitched_matrix");
    copy_from_dense(dense);
  }

  /// A deep copy of a matrix in any space with any pitch policy.
  template <class S, class P, class R>
  explicit pitched_matrix(const pitched_matrix<T, S, P, R>& other, const Resource& resource = Resource())
      : pitched_matrix(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::pitched_matrix");
    become_copy_of(other, "coalesce::pitched_matrix(const pitched_matrix<T, S, P, R>&)");
  }
  /// A deep copy, with a copy of other's resource: new storage, the same shape and pitch. Throws
  /// coalesce::cuda_error (or std::bad_alloc in host space) if allocation fails.
  pitched_matrix(const pitched_matrix& other) : pitched_matrix(other.resource()) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::pitched_matrix");
    become_copy_of(other, "coalesce::pitched_matrix(const pitched_matrix&)");
  }
  /// Takes other's storage and resource (see the class comment for what other keeps).
  pitched_matrix(pitched_matrix&& other) noexcept(moves_nothrow) : storage_(other.resource()) { swap(other); }
  /// Copies other's elements into new storage from this matrix's resource, which replaces this
  /// matrix's. Strong guarantee.
  pitched_matrix& operator=(const pitched_matrix& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::operator=");
    if (this != &other) {
      pitched_matrix copy(resource());
      copy.become_copy_of(other, "coalesce::pitched_matrix::operator=", this);
      copy.swap(*this);
    }
    return *this;
  }
  /// Takes other's storage and resource; this matrix's are released.
  pitched_matrix& operator=(pitched_matrix&& other) noexcept(moves_nothrow) {
    pitched_matrix(std::move(other)).swap(*this);
    return *this;
  }
  ~pitched_matrix() = default;

  /// Exchanges the elements, the shapes and the resources; nothing is copied or allocated.
  void swap(pitched_matrix& other) noexcept {
    storage_.swap(other.storage_);
    std::swap(rows_, other.rows_);
    std::swap(cols_, other.cols_);
    std::swap(pitch_, other.pitch_);
  }
  friend void swap(pitched_matrix& a, pitched_matrix& b) noexcept { a.swap(b); }

  std::size_t rows() const noexcept { return rows_; }                ///< the number of rows
  std::size_t cols() const noexcept { return cols_; }                ///< elements per row
  std::size_t size() const noexcept { return rows_ * cols_; }        ///< rows() * cols()
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }  ///< whether size() is 0
  std::size_t pitch_bytes() const noexcept { return pitch_; }        ///< bytes from one row's start to the next
  /// Bytes taken from the resource, padding and alignment slack included.
  std::size_t allocated_bytes() const noexcept { return storage_.allocated_bytes(); }
  /// Element (0, 0), or null when nothing is allocated; row r starts pitch_bytes() * r bytes on.
  T* data() noexcept { return static_cast<T*>(storage_.get()); }
  const T* data() const noexcept { return static_cast<const T*>(storage_.get()); }  ///< read-only
  const Resource& resource() const noexcept { return storage_.resource(); }         ///< what allocates the rows
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }     ///< the resource's stream

  /// The whole matrix; the view owns the rows' padding (see pitched_view::owned_row_bytes).
  view_type view() noexcept { return view_type(data(), rows_, cols_, pitch_, owned_row_bytes()); }
  /// The whole matrix, read-only.
  const_view_type view() const noexcept { return const_view_type(data(), rows_, cols_, pitch_, owned_row_bytes()); }
  const_view_type const_view() const noexcept { return view(); }  ///< the whole matrix, read-only

  /// Element access in host space. Precondition: r < rows(), c < cols() (checked under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  T& operator()(std::size_t r, std::size_t c) {
    return view()(r, c);
  }
  /// The same, read-only.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  const T& operator()(std::size_t r, std::size_t c) const {
    return view()(r, c);
  }
  /// A device matrix is not indexed, neither on the host (its elements are across the bus) nor in
  /// device code: a kernel or a device lambda that took the matrix by value holds a copy of the
  /// owner, not the rows.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE T& operator()(std::size_t, std::size_t) const {
    static_assert(std::is_same_v<S, host_space>,
                  "coalesce::pitched_matrix<T, device_space> has no operator(): capture m.view() in the device lambda "
                  "(or pass it to the kernel) and index the view there, view(r, c); to read elements on the host, "
                  "copy to a pitched_matrix<T, host_space> or call to_vector()");
    return *static_cast<T*>(nullptr);  // never compiled into anything: the assertion fails first
  }

  /// Sets every element to `value`. Basic guarantee.
  void fill(const T& value) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::fill");
    if (on_device && !empty())
      refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), "coalesce::pitched_matrix::fill",
                     "fill before the capture begins, or copy_from a device or pinned matrix");
    fill_unchecked(value);
  }

  /// Becomes rows x cols, keeping the elements of the overlapping top-left block; new elements are
  /// zero bytes. Any other shape takes new storage. Strong guarantee: on failure *this is unchanged.
  void resize(std::size_t rows, std::size_t cols) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::resize");
    if (rows == rows_ && cols == cols_) return;
    const char* what = "coalesce::pitched_matrix::resize";
    if (allocated_bytes() > 0) refuse_capture(detail::uncapturable::frees, stream(), what, resize_instead);
    pitched_matrix next(allocate_tag{}, rows, cols, resource(), what, resize_instead);
    next.zero_elements();
    const std::size_t keep_rows = rows < rows_ ? rows : rows_;
    const std::size_t keep_cols = cols < cols_ ? cols : cols_;
    detail::copy_rows<Space, Space>(next.data(), next.pitch_, data(), pitch_, keep_cols * sizeof(T), keep_rows,
                                    stream());
    next.swap(*this);
  }

  /// Copies every element of `other`, which must have the same shape; pitches may differ. The copy
  /// is ordered on the device-side matrix's stream (and waited for when this matrix is on the host).
  /// Throws std::invalid_argument on a shape mismatch. Basic guarantee.
  template <class S, class P, class R>
  void copy_from(const pitched_matrix<T, S, P, R>& other) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::copy_from");
    detail::check_same_shape(other.rows(), other.cols(), rows_, cols_, "copy_from");
    const char* what = "coalesce::pitched_matrix::copy_from";
    if constexpr (on_device && !detail::copies_asynchronously<S, R>) {
      if (!empty())
        refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), what,
                       "copy_from a device or pinned (pinned_resource) matrix, or before the capture begins");
    } else if constexpr (!on_device && std::is_same_v<S, device_space>) {
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, read_instead);
    }
    copy_elements_from(other);
  }
  /// Copies every element of `other`, which must have the same shape (pitches may differ), and
  /// returns without waiting: ordered on the device-side matrix's stream (this one's when both are
  /// on the device), so that a CUDA graph capture of that stream records it. One side must be on
  /// the device, and a host side must be pinned (pinned_resource): pageable memory is copied
  /// synchronously through a staging buffer, which a capture cannot record. Until the stream
  /// reaches the copy, a host destination does not hold the elements yet and a host source must
  /// not change. Throws std::invalid_argument on a shape mismatch.
  template <class S, class P, class R>
  void copy_from_async(const pitched_matrix<T, S, P, R>& other) {
    copy_from_async(other, detail::device_side_stream<Space, S>(stream(), other.stream()));
  }
  /// The same, ordered on `stream`; the caller orders it after the work of the matrices' own
  /// streams that it depends on.
  template <class S, class P, class R>
  void copy_from_async(const pitched_matrix<T, S, P, R>& other, cudaStream_t stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::copy_from_async");
    using copy = detail::async_copy_between<Space, Resource, S, R>;
    constexpr bool device_involved = copy::device_involved;
    static_assert(device_involved,
                  "coalesce::pitched_matrix::copy_from_async: both matrices are in host_space, and a copy between "
                  "them is a memcpy on the calling thread; use copy_from");
    constexpr bool host_side_pinned = copy::host_side_pinned;
    static_assert(!device_involved || host_side_pinned,
                  "coalesce::pitched_matrix::copy_from_async: the host_space matrix is pageable, which CUDA copies "
                  "synchronously through a staging buffer and a CUDA graph cannot capture; allocate it with "
                  "coalesce::pinned_resource (pitched_matrix<T, host_space, line_aligned_rows, pinned_resource>), "
                  "or use copy_from");
    if constexpr (copy::possible) {
      detail::check_same_shape(other.rows(), other.cols(), rows_, cols_, "copy_from_async");
      detail::copy_rows<Space, S>(data(), pitch_, other.data(), other.pitch_bytes(), cols_ * sizeof(T), rows_, stream);
    }
  }
  /// Copies `dense`, rows() x cols() elements row-major without padding.
  /// Throws std::invalid_argument if dense.size() != size(). Basic guarantee.
  void copy_from(const std::vector<T>& dense) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::copy_from");
    if (on_device && !empty())
      refuse_capture(detail::uncapturable::copies_pageable_memory, stream(), "coalesce::pitched_matrix::copy_from",
                     "copy_from a device or pinned (pinned_resource) matrix, or before the capture begins");
    copy_from_dense(dense);
  }
  /// The elements row-major without padding, in a host vector; a device matrix's waits for its
  /// stream (and refuses while the stream is being captured).
  std::vector<T> to_vector() const {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::pitched_matrix::to_vector");
    if (on_device)
      refuse_capture(detail::uncapturable::waits, stream(), "coalesce::pitched_matrix::to_vector", read_instead);
    std::vector<T> dense(size());
    detail::copy_rows<host_space, Space>(dense.data(), cols_ * sizeof(T), data(), pitch_, cols_ * sizeof(T), rows_,
                                         stream());
    detail::wait_for<Space>(stream());
    return dense;
  }

  /// The pitch this matrix's policy gives rows of `cols` elements of T.
  static constexpr std::size_t pitch_for(std::size_t cols) { return PitchPolicy::pitch_bytes(cols * sizeof(T)); }

 private:
  struct allocate_tag {};
  static constexpr const char* construct_instead = "construct it before the capture begins";
  static constexpr const char* resize_instead = "resize before the capture begins";
  static constexpr const char* copy_instead =
      "copy before the capture begins (copy_from into a device matrix made before it is recorded)";
  static constexpr const char* read_instead =
      "copy_from_async into a pinned (pinned_resource) matrix, and read it once the graph has run";

  // Throws std::logic_error (detail::refuse_capture_of) naming `what` while `stream` is being
  // captured.
  static void refuse_capture(detail::uncapturable reason, cudaStream_t stream, const char* what, const char* instead) {
    detail::refuse_capture_of<Space, Resource>(reason, stream, what, instead);
  }

  // Allocates for `what`, having refused a capture; the padding is zeroed here, whatever fills
  // the elements, so that it always holds defined bytes (algorithms read it and write it back to
  // store whole 64-byte units).
  pitched_matrix(allocate_tag, std::size_t rows, std::size_t cols, const Resource& resource, const char* what,
                 const char* instead)
      : storage_(allocate_storage(rows, cols, resource, what, instead)), rows_(rows), cols_(cols),
        pitch_(detail::checked_pitch<T, PitchPolicy>(cols)) {
    const std::size_t row_bytes = cols_ * sizeof(T);
    if (pitch_ > row_bytes && rows_ > 0)
      detail::zero_rows<Space>(static_cast<unsigned char*>(storage_.get()) + row_bytes, pitch_, pitch_ - row_bytes,
                               rows_, stream());
  }
  static detail::owned_bytes<Resource> allocate_storage(std::size_t rows, std::size_t cols, const Resource& resource,
                                                        const char* what, const char* instead) {
    const std::size_t bytes = detail::pitched_allocation_bytes<T, PitchPolicy>(rows, cols);
    if (bytes > 0) refuse_capture(detail::uncapturable::allocates, resource.stream(), what, instead);
    return detail::owned_bytes<Resource>(resource, bytes, detail::pitched_allocation_alignment<PitchPolicy>());
  }

  // Makes this empty matrix a copy of `other`, refusing a capture first for `what`; `replaced` is
  // the matrix this one will replace (copy assignment), whose storage is then released.
  template <class S, class P, class R>
  void become_copy_of(const pitched_matrix<T, S, P, R>& other, const char* what,
                      const pitched_matrix* replaced = nullptr) {
    if constexpr (!on_device && std::is_same_v<S, device_space>)
      detail::refuse_capture_of<S, R>(detail::uncapturable::waits, other.stream(), what, copy_instead);
    if (replaced != nullptr && replaced->allocated_bytes() > 0)
      refuse_capture(detail::uncapturable::frees, replaced->stream(), what, copy_instead);
    pitched_matrix copy(allocate_tag{}, other.rows(), other.cols(), resource(), what, copy_instead);
    copy.copy_elements_from(other);
    copy.swap(*this);
  }

  void zero_elements() { detail::zero_rows<Space>(storage_.get(), pitch_, pitch_, rows_, stream()); }
  void fill_unchecked(const T& value) {
    if (empty()) return;
    std::vector<T> first_row(cols_, value);
    detail::copy_rows<Space, host_space>(data(), pitch_, first_row.data(), cols_ * sizeof(T), cols_ * sizeof(T), 1,
                                         stream());
    // Doubling: rows [0, k) are copied onto [k, 2k), so a fill is log2(rows) pitched copies and
    // needs no kernel (this header compiles with any C++ compiler).
    for (std::size_t done = 1; done < rows_; done *= 2) {
      const std::size_t count = done < rows_ - done ? done : rows_ - done;
      detail::copy_rows<Space, Space>(view().row(done), pitch_, data(), pitch_, cols_ * sizeof(T), count, stream());
    }
  }
  template <class S, class P, class R>
  void copy_elements_from(const pitched_matrix<T, S, P, R>& other) {
    const cudaStream_t s = detail::device_side_stream<Space, S>(stream(), other.stream());
    detail::copy_rows<Space, S>(data(), pitch_, other.data(), other.pitch_bytes(), cols_ * sizeof(T), rows_, s);
    // Host elements are read by host code right away: wait for a copy out of the device.
    if constexpr (!on_device) detail::wait_for<S>(s);
  }
  void copy_from_dense(const std::vector<T>& dense) {
    detail::check_dense_size(dense.size(), rows_, cols_);
    detail::copy_rows<Space, host_space>(data(), pitch_, dense.data(), cols_ * sizeof(T), cols_ * sizeof(T), rows_,
                                         stream());
  }

  std::size_t owned_row_bytes() const noexcept { return rows_ == 0 ? cols_ * sizeof(T) : pitch_; }

  detail::owned_bytes<Resource> storage_;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::size_t pitch_ = 0;
};

}  // namespace coalesce
