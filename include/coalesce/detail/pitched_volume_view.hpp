// coalesce: pitched_volume_view, the non-owning window onto a pitched 3D array that kernels and
// algorithms take, its rank-3 mdspan, and coalesce::copy between volume views (cudaMemcpy3DAsync).
// Public names in namespace coalesce, kept apart from the owning volume as a concept of its own;
// users include <coalesce/pitched_volume.hpp>, which includes this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/detail/view_adapter_base.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda/std/mdspan>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace coalesce {

// The mdspan type a pitched_volume_view converts to: strides in elements (slice, row, 1).
template <class T>
using pitched_volume_mdspan = cuda::std::mdspan<T, cuda::std::dextents<std::size_t, 3>, cuda::std::layout_stride>;

// A non-owning window onto a pitched volume: a pointer, the extents (depth, height, width), the
// row pitch and the slice pitch in bytes. Trivially copyable, so it is passed to kernels by value.
// Space says where the elements live, as for pitched_view.
template <class T, class Space = device_space>
class pitched_volume_view {
  static_assert(
      is_memory_space_v<Space>,
      "coalesce::pitched_volume_view<T, Space>: Space must be coalesce::host_space or coalesce::device_space");
  using byte = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;

 public:
  using element_type = T;
  using memory_space = Space;
  using value_type = std::remove_cv_t<T>;
  using size_type = std::size_t;

  pitched_volume_view() = default;
  // depth x height rows of `width` elements at `data`: rows `pitch_bytes` apart, slices
  // `slice_pitch_bytes` apart. The first `owned_row_bytes` bytes of each row (at least
  // width * sizeof(T), at most the pitch) belong to this view alone, as for pitched_view.
  // Precondition: width * sizeof(T) <= pitch_bytes, height * pitch_bytes <= slice_pitch_bytes,
  // both pitches multiples of alignof(T).
  COALESCE_HOST_DEVICE pitched_volume_view(T* data, std::size_t depth, std::size_t height, std::size_t width,
                                           std::size_t pitch_bytes, std::size_t slice_pitch_bytes)
      : pitched_volume_view(data, depth, height, width, pitch_bytes, slice_pitch_bytes, width * sizeof(T)) {}
  COALESCE_HOST_DEVICE pitched_volume_view(T* data, std::size_t depth, std::size_t height, std::size_t width,
                                           std::size_t pitch_bytes, std::size_t slice_pitch_bytes,
                                           std::size_t owned_row_bytes)
      : data_(data), depth_(depth), height_(height), width_(width), pitch_(pitch_bytes),
        slice_pitch_(slice_pitch_bytes), owned_(owned_row_bytes) {
    COALESCE_ASSERT(width * sizeof(T) <= pitch_bytes || height * depth <= 1,
                    "coalesce::pitched_volume_view: rows overlap (width * sizeof(T) > pitch_bytes)");
    COALESCE_ASSERT(height * pitch_bytes <= slice_pitch_bytes || depth <= 1,
                    "coalesce::pitched_volume_view: slices overlap (height * pitch_bytes > slice_pitch_bytes)");
    COALESCE_ASSERT(pitch_bytes % alignof(T) == 0 && slice_pitch_bytes % alignof(T) == 0,
                    "coalesce::pitched_volume_view: a pitch is not a multiple of alignof(T)");
  }

  // A read-only view of a writable one.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  COALESCE_HOST_DEVICE pitched_volume_view(const pitched_volume_view<U, Space>& other)
      : data_(other.data()), depth_(other.depth()), height_(other.height()), width_(other.width()),
        pitch_(other.pitch_bytes()), slice_pitch_(other.slice_pitch_bytes()), owned_(other.owned_row_bytes()) {}

  // Element (z, y, x). Precondition: z < depth(), y < height(), x < width() (checked under
  // COALESCE_DEBUG). Host and device code for a view of device memory; host code only for a view
  // of host memory.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE T& operator()(std::size_t z, std::size_t y, std::size_t x) const {
    return element(z, y, x);
  }
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  T& operator()(std::size_t z, std::size_t y, std::size_t x) const {
    return element(z, y, x);
  }
  // The first element of row (z, y).
  COALESCE_HOST_DEVICE T* row(std::size_t z, std::size_t y) const {
    COALESCE_ASSERT(z < depth_ && y < height_, "coalesce::pitched_volume_view: row out of range");
    return reinterpret_cast<T*>(reinterpret_cast<byte*>(data_) + z * slice_pitch_ + y * pitch_);
  }
  // Slice z: height x width, same pitch.
  COALESCE_HOST_DEVICE pitched_view<T, Space> slice(std::size_t z) const {
    COALESCE_ASSERT(z < depth_, "coalesce::pitched_volume_view: slice out of range");
    return pitched_view<T, Space>(reinterpret_cast<T*>(reinterpret_cast<byte*>(data_) + z * slice_pitch_), height_,
                                  width_, pitch_, owned_);
  }

  COALESCE_HOST_DEVICE T* data() const noexcept { return data_; }
  COALESCE_HOST_DEVICE std::size_t depth() const noexcept { return depth_; }
  COALESCE_HOST_DEVICE std::size_t height() const noexcept { return height_; }
  COALESCE_HOST_DEVICE std::size_t width() const noexcept { return width_; }
  COALESCE_HOST_DEVICE std::size_t pitch_bytes() const noexcept { return pitch_; }
  COALESCE_HOST_DEVICE std::size_t slice_pitch_bytes() const noexcept { return slice_pitch_; }
  COALESCE_HOST_DEVICE std::size_t owned_row_bytes() const noexcept { return owned_; }
  COALESCE_HOST_DEVICE std::size_t size() const noexcept { return depth_ * height_ * width_; }
  COALESCE_HOST_DEVICE bool empty() const noexcept { return depth_ == 0 || height_ == 0 || width_ == 0; }

  // The block of depth x height x width elements whose first corner is (z, y, x); same pitches.
  // Precondition: the block lies inside this view (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE pitched_volume_view block(std::size_t z, std::size_t y, std::size_t x, std::size_t depth,
                                                 std::size_t height, std::size_t width) const {
    COALESCE_ASSERT(z + depth <= depth_ && y + height <= height_ && x + width <= width_,
                    "coalesce::pitched_volume_view::block: out of range");
    // As pitched_view::block: a block that reaches the last x keeps the rows' padding.
    const std::size_t owned = x + width == width_ ? owned_ - x * sizeof(T) : width * sizeof(T);
    T* first = reinterpret_cast<T*>(reinterpret_cast<byte*>(data_) + z * slice_pitch_ + y * pitch_) + x;
    return pitched_volume_view(first, depth, height, width, pitch_, slice_pitch_, owned);
  }
  COALESCE_HOST_DEVICE pitched_volume_view<const T, Space> as_const() const noexcept { return *this; }

  // Whether every row follows the one before it at the pitch, slice boundaries included (a whole
  // volume, or a block of whole slices), so that the depth * height rows are one pitched_view.
  COALESCE_HOST_DEVICE bool rows_are_one_matrix() const noexcept {
    return depth_ <= 1 || slice_pitch_ == height_ * pitch_;
  }
  // The depth * height rows as one pitched_view (row z * height + y). Precondition:
  // rows_are_one_matrix() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE pitched_view<T, Space> rows() const {
    COALESCE_ASSERT(rows_are_one_matrix(), "coalesce::pitched_volume_view::rows: the slices are not one pitch apart");
    return pitched_view<T, Space>(data_, depth_ * height_, width_, pitch_, owned_);
  }

  // Whether to_mdspan() is possible: both pitches are whole numbers of elements.
  COALESCE_HOST_DEVICE bool is_mdspan_compatible() const noexcept {
    return pitch_ % sizeof(T) == 0 && slice_pitch_ % sizeof(T) == 0;
  }
  // The same elements as a rank-3 cuda::std::mdspan, layout_stride {slice, pitch, 1} in elements.
  // Precondition: is_mdspan_compatible() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE pitched_volume_mdspan<T> to_mdspan() const {
    COALESCE_ASSERT(is_mdspan_compatible(),
                    "coalesce::pitched_volume_view::to_mdspan: sizeof(T) does not divide a pitch");
    using extents = cuda::std::dextents<std::size_t, 3>;
    using mapping = typename cuda::std::layout_stride::template mapping<extents>;
    const cuda::std::array<std::size_t, 3> strides{slice_pitch_ / sizeof(T), pitch_ / sizeof(T), 1};
    return pitched_volume_mdspan<T>(data_, mapping(extents(depth_, height_, width_), strides));
  }

 private:
  COALESCE_HOST_DEVICE T& element(std::size_t z, std::size_t y, std::size_t x) const {
    COALESCE_ASSERT(z < depth_ && y < height_ && x < width_, "coalesce::pitched_volume_view: (z, y, x) out of range");
    return row(z, y)[x];
  }

  T* data_ = nullptr;
  std::size_t depth_ = 0;
  std::size_t height_ = 0;
  std::size_t width_ = 0;
  std::size_t pitch_ = 0;
  std::size_t slice_pitch_ = 0;
  std::size_t owned_ = 0;
};

// for_each and transform walk a volume as its rows: a whole volume, or a block of whole slices, is
// one pitched_view of depth * height rows. A block cut in y has slices that are not one pitch
// apart; walk it a slice at a time (view.slice(z)), or with for_each_index, which takes any block.
template <class T>
struct view_adapter<pitched_volume_view<T, device_space>> {
  static pitched_view<T> adapt(const pitched_volume_view<T, device_space>& v) {
    if (!v.rows_are_one_matrix())
      throw std::invalid_argument(
          "coalesce: a pitched_volume_view block cut in y is not one pitched matrix of rows; walk it a slice at a "
          "time (view.slice(z)), or use for_each_index");
    return v.rows();
  }
};

namespace detail {

// A cudaPitchedPtr for the volume at `data` whose rows are `pitch` bytes apart and slices
// `slice_pitch` apart (a whole number of rows, as cudaMemcpy3D requires).
inline cudaPitchedPtr pitched_pointer(const void* data, std::size_t pitch, std::size_t row_bytes,
                                      std::size_t slice_pitch) {
  cudaPitchedPtr pointer{};
  pointer.ptr = const_cast<void*>(data);
  pointer.pitch = pitch;
  pointer.xsize = row_bytes;
  pointer.ysize = pitch == 0 ? 0 : slice_pitch / pitch;
  return pointer;
}

}  // namespace detail

// Copies every element of `from` into `to`, which must have the same extents; the pitches may
// differ. Ordered on `stream` through cudaMemcpy3DAsync (host to host: memcpy, at once). A copy to
// host memory is complete only once the stream has reached it. Throws std::invalid_argument if the
// extents differ or a slice pitch is not a whole number of rows, coalesce::cuda_error if the copy
// cannot be queued.
template <class T, class FromSpace, class ToSpace>
void copy(pitched_volume_view<const T, FromSpace> from, pitched_volume_view<T, ToSpace> to, cudaStream_t stream = 0) {
  if (from.depth() != to.depth() || from.height() != to.height() || from.width() != to.width())
    throw std::invalid_argument("coalesce::copy: the source volume is " + std::to_string(from.depth()) + " x " +
                                std::to_string(from.height()) + " x " + std::to_string(from.width()) +
                                ", the destination " + std::to_string(to.depth()) + " x " +
                                std::to_string(to.height()) + " x " + std::to_string(to.width()));
  if (from.empty()) return;
  const std::size_t row_bytes = from.width() * sizeof(T);
  if constexpr (std::is_same_v<FromSpace, host_space> && std::is_same_v<ToSpace, host_space>) {
    (void)stream;
    for (std::size_t z = 0; z < from.depth(); ++z)
      detail::copy_rows<host_space, host_space>(to.row(z, 0), to.pitch_bytes(), from.row(z, 0), from.pitch_bytes(),
                                                row_bytes, from.height(), cudaStream_t{});
  } else {
    detail::throw_if_earlier_error("coalesce::copy");
    const bool whole_rows = (from.depth() <= 1 || from.slice_pitch_bytes() % from.pitch_bytes() == 0) &&
                            (to.depth() <= 1 || to.slice_pitch_bytes() % to.pitch_bytes() == 0);
    if (!whole_rows)
      throw std::invalid_argument("coalesce::copy: a volume's slice pitch must be a whole number of rows");
    if (!detail::pitches_fit_2d_copy(to.pitch_bytes(), from.pitch_bytes())) {
      // Rows too far apart for cudaMemcpy3D (detail::max_copy_pitch): slice by slice, row by row.
      for (std::size_t z = 0; z < from.depth(); ++z)
        detail::copy_rows<ToSpace, FromSpace>(to.row(z, 0), to.pitch_bytes(), from.row(z, 0), from.pitch_bytes(),
                                              row_bytes, from.height(), stream);
      return;
    }
    // A single slice has no slice pitch to speak of: give cudaMemcpy3D one of exactly its rows.
    const auto slice_pitch = [](const auto& v) {
      return v.depth() <= 1 ? v.height() * v.pitch_bytes() : v.slice_pitch_bytes();
    };
    cudaMemcpy3DParms parameters{};
    parameters.srcPtr = detail::pitched_pointer(from.data(), from.pitch_bytes(), row_bytes, slice_pitch(from));
    parameters.dstPtr = detail::pitched_pointer(to.data(), to.pitch_bytes(), row_bytes, slice_pitch(to));
    parameters.extent = cudaExtent{row_bytes, from.height(), from.depth()};
    parameters.kind = detail::copy_kind<ToSpace, FromSpace>();
    throw_on_error(::cudaMemcpy3DAsync(&parameters, stream), "cudaMemcpy3DAsync");
  }
}
template <class T, class FromSpace, class ToSpace>
void copy(pitched_volume_view<T, FromSpace> from, pitched_volume_view<T, ToSpace> to, cudaStream_t stream = 0) {
  copy(pitched_volume_view<const T, FromSpace>(from), to, stream);
}

}  // namespace coalesce
