// coalesce: pitched_view, the non-owning window onto pitched rows that kernels and algorithms
// take, and the cuda::std::mdspan interop (conversions, and the mdspans the algorithms walk).
// Public names in namespace coalesce, kept apart from the owning matrix as a concept of its own;
// users include <coalesce/pitched_matrix.hpp>, which includes this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/view_adapter_base.hpp>
#include <coalesce/detail/view_declarations.hpp>
#include <coalesce/memory_space.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>

#include <cstddef>
#include <stdexcept>
#include <type_traits>

namespace coalesce {

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
    COALESCE_ASSERT(cols * sizeof(T) <= pitch_bytes || rows <= 1,
                    "coalesce::pitched_view: rows overlap (cols * sizeof(T) > pitch_bytes)");
    COALESCE_ASSERT(pitch_bytes % alignof(T) == 0,
                    "coalesce::pitched_view: pitch_bytes is not a multiple of alignof(T)");
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
    COALESCE_ASSERT(m.extent(1) <= 1 || m.stride(1) == 1,
                    "coalesce::pitched_view: the mdspan's column stride must be 1");
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
    COALESCE_ASSERT(first_row + rows <= rows_ && first_col + cols <= cols_,
                    "coalesce::pitched_view::block: out of range");
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
    if constexpr (Extents::rank() == 1 &&
                  (std::is_same_v<Layout, cuda::std::layout_right> || std::is_same_v<Layout, cuda::std::layout_left>)) {
      return cuda::std::span<T>(m.data_handle(), m.extent(0));
    } else if constexpr (Extents::rank() == 1) {
      // A stride known only at run time: one row when the elements are adjacent, else rows of
      // one element (a column of a matrix).
      if (m.extent(0) <= 1 || m.stride(0) == 1)
        return pitched_view<T>(m.data_handle(), 1, m.extent(0), m.extent(0) * sizeof(T));
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

}  // namespace coalesce
