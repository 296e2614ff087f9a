// coalesce: a row-major matrix whose rows start on 128-byte boundaries, and the view kernels use.
// A dense row of 1000 floats is 4000 bytes, so most rows start inside a 128-byte line and a warp
// reading 32 floats of such a row touches two lines instead of one. pitched_matrix pads each row
// to a multiple of 128 bytes (the pitch), allocates stream-ordered, and indexes for you.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/view_adapter_base.hpp>
#include <coalesce/detail/view_declarations.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

// Pitch policy: every row starts on a multiple of `Bytes` (a power of two). 128 (the default) is
// one cache line: the fewest lines per row. 512 matches cudaMallocPitch and texture binding;
// 16 is the least padding that still allows 16-byte vector access to every row.
template <std::size_t Bytes>
struct aligned_rows {
  static_assert(detail::is_power_of_two(Bytes) && Bytes <= 4096,
                "coalesce::aligned_rows<Bytes>: Bytes must be a power of two no larger than 4096");
  static constexpr std::size_t row_alignment = Bytes;

  // The pitch for rows of `row_bytes` bytes: the next multiple of the alignment.
  static constexpr std::size_t pitch_bytes(std::size_t row_bytes) { return (row_bytes + Bytes - 1) / Bytes * Bytes; }
};

using line_aligned_rows = aligned_rows<128>;

// The mdspan type a pitched_view converts to and from: strides in elements, so it exists only
// when sizeof(T) divides the pitch.
template <class T>
using pitched_mdspan = cuda::std::mdspan<T, cuda::std::dextents<std::size_t, 2>, cuda::std::layout_stride>;

// A non-owning window onto pitched rows: a pointer, rows, columns and the pitch in bytes.
// Trivially copyable, so it is passed to kernels by value; pitched_view<const T> is read-only.
// Space says where the rows live: device memory (the default, what kernels and algorithms take)
// or host memory, whose view is a different type that device code cannot index. A view carries
// no stream: an algorithm handed a view runs on the stream it is given (0 unless told), where one
// handed the pitched_matrix runs on the matrix's.
template <class T, class Space>
class pitched_view {
  static_assert(is_memory_space_v<Space>,
                "coalesce::pitched_view<T, Space>: Space must be coalesce::host_space or coalesce::device_space");
  using byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;

 public:
  using element_type = T;
  using memory_space = Space;
  using value_type = std::remove_cv_t<T>;
  using size_type = std::size_t;

  pitched_view() = default;
  // Rows of `cols` elements at `data`, `pitch_bytes` apart. Precondition: `data` and
  // `pitch_bytes` are multiples of alignof(T), and cols * sizeof(T) <= pitch_bytes.
  COALESCE_HOST_DEVICE pitched_view(T* data, std::size_t rows, std::size_t cols, std::size_t pitch_bytes)
      : pitched_view(data, rows, cols, pitch_bytes, cols * sizeof(T)) {}

  // The same, where the first `owned_row_bytes` bytes of each row (at least cols * sizeof(T), at
  // most the pitch) belong to this view alone: its elements, then padding that holds zero bytes
  // and that nothing else reads or writes. A pitched_matrix's view() owns its padding.
  // Algorithms may then load that padding with the row to move whole 128-byte lines; they never
  // hand it to user code and never change it.
  COALESCE_HOST_DEVICE pitched_view(T* data, std::size_t rows, std::size_t cols, std::size_t pitch_bytes,
                                    std::size_t owned_row_bytes)
      : data_(data), rows_(rows), cols_(cols), pitch_(pitch_bytes), owned_(owned_row_bytes) {
    COALESCE_ASSERT(cols * sizeof(T) <= pitch_bytes || rows <= 1, "coalesce::pitched_view: rows overlap (cols * sizeof(T) > pitch_bytes)");
    COALESCE_ASSERT(pitch_bytes % alignof(T) == 0, "coalesce::pitched_view: pitch_bytes is not a multiple of alignof(T)");
    COALESCE_ASSERT(owned_row_bytes >= cols * sizeof(T) && (owned_row_bytes <= pitch_bytes || rows <= 1),
                    "coalesce::pitched_view: owned_row_bytes must lie between cols * sizeof(T) and the pitch");
  }

  // A read-only view of a writable one.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  COALESCE_HOST_DEVICE pitched_view(const pitched_view<U, Space>& other)
      : data_(other.data()), rows_(other.rows()), cols_(other.cols()), pitch_(other.pitch_bytes()),
        owned_(other.owned_row_bytes()) {}

  // From a 2D layout_stride mdspan whose column stride is 1 (contiguous rows).
  COALESCE_HOST_DEVICE explicit pitched_view(const pitched_mdspan<T>& m)
      : data_(m.data_handle()), rows_(m.extent(0)), cols_(m.extent(1)), pitch_(m.stride(0) * sizeof(T)),
        owned_(m.extent(1) * sizeof(T)) {
    COALESCE_ASSERT(m.extent(1) <= 1 || m.stride(1) == 1, "coalesce::pitched_view: the mdspan's column stride must be 1");
  }

  // Element (r, c). Precondition: r < rows(), c < cols() (checked under COALESCE_DEBUG). Host
  // and device code for a view of device memory; host code only for a view of host memory.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE T& operator()(std::size_t r, std::size_t c) const {
    return element(r, c);
  }
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  T& operator()(std::size_t r, std::size_t c) const {
    return element(r, c);
  }
  // The first element of row r. Precondition: r < rows() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE T* row(std::size_t r) const {
    COALESCE_ASSERT(r < rows_, "coalesce::pitched_view: row out of range");
    return reinterpret_cast<T*>(reinterpret_cast<byte*>(data_) + r * pitch_);
  }

  COALESCE_HOST_DEVICE T* data() const noexcept { return data_; }
  COALESCE_HOST_DEVICE std::size_t rows() const noexcept { return rows_; }
  COALESCE_HOST_DEVICE std::size_t cols() const noexcept { return cols_; }
  COALESCE_HOST_DEVICE std::size_t pitch_bytes() const noexcept { return pitch_; }
  // Bytes from the start of each row that belong to this view alone (elements, then owned padding).
  COALESCE_HOST_DEVICE std::size_t owned_row_bytes() const noexcept { return owned_; }
  COALESCE_HOST_DEVICE std::size_t size() const noexcept { return rows_ * cols_; }
  COALESCE_HOST_DEVICE bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }

  // The block of `rows` x `cols` elements whose top-left is (first_row, first_col); same pitch.
  // Precondition: the block lies inside this view (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE pitched_view block(std::size_t first_row, std::size_t first_col, std::size_t rows,
                                          std::size_t cols) const {
    COALESCE_ASSERT(first_row + rows <= rows_ && first_col + cols <= cols_, "coalesce::pitched_view::block: out of range");
    // A block that reaches the last column keeps the padding after it; any other block ends
    // where its neighbour's elements begin.
    const std::size_t owned = first_col + cols == cols_ ? owned_ - first_col * sizeof(T) : cols * sizeof(T);
    return pitched_view(reinterpret_cast<T*>(reinterpret_cast<byte*>(data_) + first_row * pitch_) + first_col, rows,
                        cols, pitch_, owned);
  }
  COALESCE_HOST_DEVICE pitched_view<const T, Space> as_const() const noexcept { return *this; }

  // Whether to_mdspan() is possible: the pitch is a whole number of elements.
  COALESCE_HOST_DEVICE bool is_mdspan_compatible() const noexcept { return pitch_ % sizeof(T) == 0; }
  // The same elements as a cuda::std::mdspan with layout_stride {pitch / sizeof(T), 1}.
  // Precondition: is_mdspan_compatible() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE pitched_mdspan<T> to_mdspan() const {
    COALESCE_ASSERT(is_mdspan_compatible(), "coalesce::pitched_view::to_mdspan: sizeof(T) does not divide the pitch");
    using mapping = typename cuda::std::layout_stride::template mapping<cuda::std::dextents<std::size_t, 2>>;
    const cuda::std::array<std::size_t, 2> strides{pitch_ / sizeof(T), 1};
    return pitched_mdspan<T>(data_, mapping(cuda::std::dextents<std::size_t, 2>(rows_, cols_), strides));
  }

 private:
  COALESCE_HOST_DEVICE T& element(std::size_t r, std::size_t c) const {
    COALESCE_ASSERT(r < rows_ && c < cols_, "coalesce::pitched_view: (r, c) out of range");
    return row(r)[c];
  }

  T* data_ = nullptr;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::size_t pitch_ = 0;
  std::size_t owned_ = 0;
};

// cuda::std::mdspan walked by the algorithms (see <coalesce/view_adapter.hpp>): rank 1 as a span
// (layout_right, layout_left) or strided rows, rank 2 as a pitched_view. Here, with the rest of
// the mdspan interop, so that a unit that includes no mdspan pays nothing for it.
template <class T, class Extents, class Layout, class Accessor>
struct view_adapter<cuda::std::mdspan<T, Extents, Layout, Accessor>> {
  using mdspan_type = cuda::std::mdspan<T, Extents, Layout, Accessor>;
  static_assert(Extents::rank() == 1 || Extents::rank() == 2,
                "coalesce: an mdspan walked by coalesce's algorithms must be of rank 1 or 2");
  static_assert(std::is_same_v<typename Accessor::data_handle_type, T*>,
                "coalesce: an mdspan walked by coalesce's algorithms must hold a T* (default_accessor or "
                "aligned_accessor)");

  static auto adapt(const mdspan_type& m) {
    if constexpr (Extents::rank() == 1 && (std::is_same_v<Layout, cuda::std::layout_right> ||
                                           std::is_same_v<Layout, cuda::std::layout_left>)) {
      return cuda::std::span<T>(m.data_handle(), m.extent(0));
    } else if constexpr (Extents::rank() == 1) {
      // A stride known only at run time: one row when the elements are adjacent, else rows of
      // one element (a column of a matrix).
      if (m.extent(0) <= 1 || m.stride(0) == 1) return pitched_view<T>(m.data_handle(), 1, m.extent(0), m.extent(0) * sizeof(T));
      return pitched_view<T>(m.data_handle(), m.extent(0), 1, std::size_t(m.stride(0)) * sizeof(T));
    } else {
      if (m.extent(0) > 1 && m.extent(1) > 1 && m.stride(1) != 1)
        throw std::invalid_argument(
            "coalesce: a rank-2 mdspan must be contiguous along its last index (layout_right, or layout_stride "
            "with stride(1) == 1) to be walked a row at a time");
      return pitched_view<T>(m.data_handle(), m.extent(0), m.extent(1), std::size_t(m.stride(0)) * sizeof(T));
    }
  }
};

// An owning row-major matrix of rows x cols elements of T, each row padded to the pitch policy's
// alignment (128 bytes by default), the base 256-byte aligned (more when the policy asks), in the
// memory of `Space`. New elements are zero bytes. Copies and fills are ordered on the resource's
// stream (stream()), and so are coalesce's algorithms handed the matrix; its view carries no
// stream. to_vector, and copy_from into a host matrix, wait for that stream; copy_from_async
// never waits, and with for_each, transform and for_each_index is what a CUDA graph capture may
// record (construct, fill and resize outside a capture: they fill from pageable memory). A
// device matrix's memory is released on its stream: work on another stream that still reads it
// must be ordered before the destructor.
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

 public:
  using value_type = T;
  using memory_space = Space;
  using pitch_policy = PitchPolicy;
  using resource_type = Resource;
  using view_type = pitched_view<T, Space>;
  using const_view_type = pitched_view<const T, Space>;

  // An empty matrix (0 x 0); no allocation.
  pitched_matrix() = default;
  explicit pitched_matrix(const Resource& resource) : storage_(resource, 0, 0) {}

  // rows x cols zero elements (the padding is zeroed too, so vector reads past the last column
  // see defined bytes). Throws std::length_error if the bytes overflow std::size_t, and
  // coalesce::cuda_error (or std::bad_alloc in host space) if allocation fails.
  pitched_matrix(std::size_t rows, std::size_t cols, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource) {
    detail::zero_rows<Space>(storage_.get(), pitch_, pitch_, rows_, stream());
  }

  // rows x cols copies of `value`.
  pitched_matrix(std::size_t rows, std::size_t cols, const T& value, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource) {
    fill(value);
  }

  // From `dense`, rows x cols elements stored row-major without padding.
  // Throws std::invalid_argument if dense.size() != rows * cols.
  pitched_matrix(const std::vector<T>& dense, std::size_t rows, std::size_t cols, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, rows, cols, resource) {
    copy_from(dense);
  }

  // A deep copy of a matrix in any space with any pitch policy.
  template <class S, class P, class R>
  explicit pitched_matrix(const pitched_matrix<T, S, P, R>& other, const Resource& resource = Resource())
      : pitched_matrix(allocate_tag{}, other.rows(), other.cols(), resource) {
    copy_from(other);
  }

  pitched_matrix(const pitched_matrix& other) : pitched_matrix(allocate_tag{}, other.rows_, other.cols_, other.resource()) {
    copy_from(other);
  }
  pitched_matrix(pitched_matrix&& other) noexcept { swap(other); }
  // Strong guarantee: on failure *this is unchanged.
  pitched_matrix& operator=(const pitched_matrix& other) {
    if (this != &other) pitched_matrix(other).swap(*this);
    return *this;
  }
  pitched_matrix& operator=(pitched_matrix&& other) noexcept {
    pitched_matrix(std::move(other)).swap(*this);
    return *this;
  }
  ~pitched_matrix() = default;

  void swap(pitched_matrix& other) noexcept {
    storage_.swap(other.storage_);
    std::swap(rows_, other.rows_);
    std::swap(cols_, other.cols_);
    std::swap(pitch_, other.pitch_);
  }
  friend void swap(pitched_matrix& a, pitched_matrix& b) noexcept { a.swap(b); }

  std::size_t rows() const noexcept { return rows_; }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t size() const noexcept { return rows_ * cols_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  std::size_t pitch_bytes() const noexcept { return pitch_; }
  // Bytes taken from the resource, padding and alignment slack included.
  std::size_t allocated_bytes() const noexcept { return storage_.allocated_bytes(); }
  T* data() noexcept { return static_cast<T*>(storage_.get()); }
  const T* data() const noexcept { return static_cast<const T*>(storage_.get()); }
  const Resource& resource() const noexcept { return storage_.resource(); }
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }

  // The whole matrix; the view owns the rows' padding (see pitched_view::owned_row_bytes).
  view_type view() noexcept { return view_type(data(), rows_, cols_, pitch_, owned_row_bytes()); }
  const_view_type view() const noexcept { return const_view_type(data(), rows_, cols_, pitch_, owned_row_bytes()); }
  const_view_type const_view() const noexcept { return view(); }

  // Element access in host space. Precondition: r < rows(), c < cols() (checked under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  T& operator()(std::size_t r, std::size_t c) {
    return view()(r, c);
  }
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  const T& operator()(std::size_t r, std::size_t c) const {
    return view()(r, c);
  }

  // Sets every element to `value`.
  void fill(const T& value) {
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

  // Becomes rows x cols, keeping the elements of the overlapping top-left block; new elements are
  // zero bytes. Strong guarantee: on failure *this is unchanged.
  void resize(std::size_t rows, std::size_t cols) {
    if (rows == rows_ && cols == cols_) return;
    pitched_matrix next(rows, cols, resource());
    const std::size_t keep_rows = rows < rows_ ? rows : rows_;
    const std::size_t keep_cols = cols < cols_ ? cols : cols_;
    detail::copy_rows<Space, Space>(next.data(), next.pitch_, data(), pitch_, keep_cols * sizeof(T), keep_rows, stream());
    next.swap(*this);
  }

  // Copies every element of `other`, which must have the same shape; pitches may differ. The copy
  // is ordered on the device-side matrix's stream (and waited for when this matrix is on the host).
  // Throws std::invalid_argument on a shape mismatch.
  template <class S, class P, class R>
  void copy_from(const pitched_matrix<T, S, P, R>& other) {
    check_same_shape(other.rows(), other.cols(), "copy_from");
    const cudaStream_t s = detail::device_side_stream<Space, S>(stream(), other.stream());
    detail::copy_rows<Space, S>(data(), pitch_, other.data(), other.pitch_bytes(), cols_ * sizeof(T), rows_, s);
    // Host elements are read by host code right away: wait for a copy out of the device.
    if constexpr (std::is_same_v<Space, host_space>) detail::wait_for<S>(s);
  }
  // Copies every element of `other`, which must have the same shape (pitches may differ), and
  // returns without waiting: ordered on the device-side matrix's stream (this one's when both are
  // on the device), so that a CUDA graph capture of that stream records it. One side must be on
  // the device, and a host side must be pinned (pinned_resource): pageable memory is copied
  // synchronously through a staging buffer, which a capture cannot record. Until the stream
  // reaches the copy, a host destination does not hold the elements yet and a host source must
  // not change. Throws std::invalid_argument on a shape mismatch.
  template <class S, class P, class R>
  void copy_from_async(const pitched_matrix<T, S, P, R>& other) {
    copy_from_async(other, detail::device_side_stream<Space, S>(stream(), other.stream()));
  }
  // The same, ordered on `stream`; the caller orders it after the work of the matrices' own
  // streams that it depends on.
  template <class S, class P, class R>
  void copy_from_async(const pitched_matrix<T, S, P, R>& other, cudaStream_t stream) {
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
      check_same_shape(other.rows(), other.cols(), "copy_from_async");
      detail::copy_rows<Space, S>(data(), pitch_, other.data(), other.pitch_bytes(), cols_ * sizeof(T), rows_, stream);
    }
  }
  // Copies `dense`, rows() x cols() elements row-major without padding.
  // Throws std::invalid_argument if dense.size() != size().
  void copy_from(const std::vector<T>& dense) {
    if (dense.size() != size())
      throw std::invalid_argument("coalesce::pitched_matrix::copy_from: a dense vector of " + std::to_string(dense.size()) +
                                  " elements cannot fill a " + shape_text(rows_, cols_) + " matrix");
    detail::copy_rows<Space, host_space>(data(), pitch_, dense.data(), cols_ * sizeof(T), cols_ * sizeof(T), rows_,
                                         stream());
  }
  // The elements row-major without padding, in a host vector; waits for the matrix's stream (never
  // call it while the stream is being captured).
  std::vector<T> to_vector() const {
    std::vector<T> dense(size());
    detail::copy_rows<host_space, Space>(dense.data(), cols_ * sizeof(T), data(), pitch_, cols_ * sizeof(T), rows_,
                                         stream());
    detail::wait_for<Space>(stream());
    return dense;
  }

  // The pitch this matrix's policy gives rows of `cols` elements of T.
  static constexpr std::size_t pitch_for(std::size_t cols) { return PitchPolicy::pitch_bytes(cols * sizeof(T)); }

 private:
  struct allocate_tag {};

  // Allocates; the padding is zeroed here, whatever fills the elements, so that it always holds
  // defined bytes (algorithms read it and write it back to store whole 64-byte units).
  pitched_matrix(allocate_tag, std::size_t rows, std::size_t cols, const Resource& resource)
      : storage_(resource, allocation_bytes(rows, cols), allocation_alignment_for_policy()), rows_(rows), cols_(cols),
        pitch_(checked_pitch(cols)) {
    const std::size_t row_bytes = cols_ * sizeof(T);
    if (pitch_ > row_bytes && rows_ > 0)
      detail::zero_rows<Space>(static_cast<unsigned char*>(storage_.get()) + row_bytes, pitch_, pitch_ - row_bytes, rows_,
                               stream());
  }
  std::size_t owned_row_bytes() const noexcept { return rows_ == 0 ? cols_ * sizeof(T) : pitch_; }

  static constexpr std::size_t allocation_alignment_for_policy() {
    return PitchPolicy::row_alignment > allocation_alignment ? PitchPolicy::row_alignment : allocation_alignment;
  }
  static std::size_t checked_pitch(std::size_t cols) {
    const std::size_t row_bytes = detail::checked_multiply(cols, sizeof(T), "coalesce::pitched_matrix: a row of");
    return detail::checked_round_up(row_bytes, PitchPolicy::row_alignment, "coalesce::pitched_matrix: the pitch of");
  }
  static std::size_t allocation_bytes(std::size_t rows, std::size_t cols) {
    if (rows == 0 || cols == 0) {
      (void)checked_pitch(cols);
      return 0;
    }
    return detail::checked_multiply(rows, checked_pitch(cols), "coalesce::pitched_matrix: rows x pitch");
  }
  static std::string shape_text(std::size_t rows, std::size_t cols) {
    return std::to_string(rows) + " x " + std::to_string(cols);
  }
  void check_same_shape(std::size_t rows, std::size_t cols, const char* operation) const {
    if (rows != rows_ || cols != cols_)
      throw std::invalid_argument(std::string("coalesce::pitched_matrix::") + operation + ": the source is " +
                                  shape_text(rows, cols) + " but the destination is " + shape_text(rows_, cols_));
  }

  detail::owned_bytes<Resource> storage_;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::size_t pitch_ = 0;
};

}  // namespace coalesce
