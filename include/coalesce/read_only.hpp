// coalesce: read_only(view), a view of a grid that a kernel only reads, whose element loads take
// the GPU's read-only (non-coherent) data path. A pitched_view captured in a for_each lambda is
// read with plain coherent loads: the compiler cannot know that no thread writes the grid while
// the kernel runs, so it may not use the read-only path itself. A particle push that interpolates
// a field at each particle reads the field's points many times from many threads, scattered:
//
//   const auto ex = coalesce::read_only(field_x.view());  // nothing writes field_x in this kernel
//   coalesce::for_each(particles, [=] __device__(auto p) {
//     const auto c = std::size_t(p.x), r = std::size_t(p.y);
//     p.vx += q_dt * ex(r, c);                            // ld.global.nc
//   });
//
// Precondition: no thread of the kernel writes the viewed elements (the read-only path does not
// see such writes); writes by earlier kernels on the stream are seen. Host-capable: on the host
// the loads are plain ones.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/detail/pitched_volume_view.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/memory_space.hpp>

#include <cstddef>
#include <type_traits>

namespace coalesce {

/// A view of device memory that only reads: read_only_view<pitched_view<const T>> or
/// read_only_view<pitched_volume_view<const T>>, made by coalesce::read_only. Its elements are
/// values, loaded through the read-only data path in device code. Precondition: nothing writes
/// them while a kernel that reads them through this view runs.
template <class View>
class read_only_view {
  static_assert(
      std::is_const_v<typename View::element_type>,
      "coalesce::read_only_view<View>: View must be a view of const elements (coalesce::read_only makes one)");

 public:
  using view_type = View;                                              ///< the underlying view
  using value_type = std::remove_cv_t<typename View::element_type>;  ///< what an element reads as

  /// The read-only view of `view`.
  COALESCE_HOST_DEVICE explicit read_only_view(View view) noexcept : view_(view) {}

  /// The element at (r, c) of a matrix, or (z, y, x) of a volume, by value: in device code one
  /// non-coherent load of its words (ld.global.nc). Bounds as the view checks them (under
  /// COALESCE_DEBUG).
  template <class... Index>
  COALESCE_HOST_DEVICE value_type operator()(Index... index) const {
#if COALESCE_DEVICE_PASS
    return detail::load_chunk<true>(&view_(index...));
#else
    return view_(index...);
#endif
  }

  /// The underlying view (coherent loads, as any view).
  COALESCE_HOST_DEVICE const View& view() const noexcept { return view_; }

 private:
  View view_;
};

namespace detail {
template <class Space>
COALESCE_HOST_DEVICE constexpr bool check_read_only_space() {
  constexpr bool device = std::is_same_v<Space, device_space>;
  static_assert(device,
                "coalesce::read_only: the view is of host memory; the read-only data path is the GPU's: pass a view of "
                "device memory");
  return device;
}
}  // namespace detail

/// The read-only view of a matrix of device memory: read_only(rho.view())(r, c) loads element
/// (r, c) through the read-only data path. Nothing may write the elements while a kernel reads
/// them through it.
template <class T, class Space>
COALESCE_HOST_DEVICE read_only_view<pitched_view<const T, Space>> read_only(pitched_view<T, Space> view) noexcept {
  static_assert(detail::check_read_only_space<Space>());
  return read_only_view<pitched_view<const T, Space>>(view);
}

/// The read-only view of a volume of device memory, as read_only of a matrix.
template <class T, class Space>
COALESCE_HOST_DEVICE read_only_view<pitched_volume_view<const T, Space>> read_only(
    pitched_volume_view<T, Space> view) noexcept {
  static_assert(detail::check_read_only_space<Space>());
  return read_only_view<pitched_volume_view<const T, Space>>(view);
}

}  // namespace coalesce
