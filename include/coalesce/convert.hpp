// coalesce: convert(from, to), a copy of every element between two layouts of T on the device
// (layout::soa, layout::aos, layout::aosoa<Lanes>, any two), at copy bandwidth:
//   - records to columns or tiles, and back: a block reads a run of records into shared memory
//     with 16-byte accesses and its threads write each element's leaves, a warp a run of 32 of
//     each (soa_convert.hpp's kernels);
//   - columns to tiles, tiles to columns, tiles to tiles: the chunk walk of transform, 16-byte
//     vectors of every leaf on both sides;
//   - columns to a layout::split of cold records: the hot leaves straight into their columns, the
//     cold records assembled in shared memory and copied out whole (split_convert.hpp);
//   - records to records: one cudaMemcpyAsync.
// Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
#  error \
      "coalesce/convert.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/split_convert.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/layout_vector.hpp>
#  include <coalesce/soa_convert.hpp>

#  include <cuda_runtime_api.h>

#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {
namespace detail {

// f for transform: the element, whole.
template <class T>
struct whole_element {
  template <class P>
  COALESCE_DEVICE COALESCE_FORCEINLINE T operator()(const P& p) const {
    return static_cast<T>(p);
  }
};

template <class View>
inline constexpr bool is_layout_view_v = is_soa_view_v<View>;
template <class T, class L, class Space>
inline constexpr bool is_layout_view_v<layout_view<T, L, Space>> = true;

template <class From, class To>
constexpr bool convert_views_ok() {
  constexpr bool views = is_layout_view_v<From> && is_layout_view_v<To>;
  static_assert(views, "coalesce::convert: from and to must each be a coalesce::vector (soa_vector or layout_vector) "
                       "or the view of one (soa_view, layout_view)");
  if constexpr (views) {
    constexpr bool same = std::is_same_v<typename From::value_type, typename To::value_type>;
    static_assert(same, "coalesce::convert: from and to must hold the same element type");
    constexpr bool device = std::is_same_v<typename view_space<From>::type, device_space> &&
                            std::is_same_v<typename view_space<To>::type, device_space>;
    static_assert(!same || device, "coalesce::convert: both sides must be in device memory (copy a host_space "
                                   "vector to the device with assign or a constructor first)");
    constexpr bool writable = !std::is_const_v<typename To::element_type>;
    static_assert(!same || !device || writable, "coalesce::convert: the destination must be writable");
    return same && device && writable;
  }
  return false;
}

}  // namespace detail

namespace detail {

template <class From, class To>
void convert_views(From from, To to, cudaStream_t stream) {
  if constexpr (convert_views_ok<From, To>()) {
    using T = typename To::value_type;
    if (from.size() != to.size())
      throw std::invalid_argument("coalesce::convert: from holds " + std::to_string(from.size()) + " elements, to " +
                                  std::to_string(to.size()));
    if (from.empty()) return;
    constexpr bool from_records = is_record_view_v<From>, to_records = is_record_view_v<To>;
    constexpr const char* what = "coalesce::convert kernel launch";
    if constexpr (from_records && to_records) {
      if (static_cast<const void*>(from.data()) == static_cast<const void*>(to.data())) return;
      require_device_memory(from.data(), "coalesce::convert");
      require_device_memory(to.data(), "coalesce::convert");
      throw_if_earlier_error("coalesce::convert (cudaMemcpyAsync)");
      throw_on_error(::cudaMemcpyAsync(to.data(), from.data(), from.size() * sizeof(T), cudaMemcpyDeviceToDevice,
                                       stream),
                     "coalesce::convert: cudaMemcpyAsync");
    } else if constexpr (from_records) {
      require_device_memory(from.data(), "coalesce::convert");
      copy_records_to_columns(static_cast<const T*>(from.data()), to, stream, what);
    } else if constexpr (to_records) {
      require_device_memory(to.data(), "coalesce::convert");
      copy_columns_to_records(as_const_view(from), to.data(), stream, what);
    } else if constexpr (is_soa_view_v<From> && stages_split_records_v<To>) {
      copy_columns_to_split_records(as_const_view(from), to, stream, what);
    } else {
      transform(from, to, whole_element<T>{}, stream);
    }
  }
}

// The stream a convert handed containers runs on: to's, else from's, else 0.
template <class From, class To>
cudaStream_t convert_stream(const From& from, const To& to) {
  if constexpr (is_container<To>::value) return to.stream();
  else if constexpr (is_container<From>::value) return from.stream();
  else return cudaStream_t{};
}

}  // namespace detail

/// to[i] = from[i] for every element, on the device, asynchronously on `stream`. from and to hold
/// one element type T in any two layouts: each a device coalesce::vector (soa_vector or
/// layout_vector) or the view of one (soa_view, layout_view). A vector as `to` first becomes
/// from.size() elements long (resize_for_overwrite: it allocates only to grow, strong guarantee);
/// views must be of the same size. Every element's bytes move once each way; padding between
/// records or runs is neither read nor written. Throws std::invalid_argument if two views' sizes
/// differ or they overlap without being the same elements (nothing is copied then), and
/// coalesce::cuda_error if a launch fails.
template <class From, class To>
void convert(const From& from, To&& to, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::convert");
  using to_type = std::remove_reference_t<To>;
  if constexpr (detail::is_container<to_type>::value) {
    static_assert(!std::is_const_v<to_type>, "coalesce::convert: the destination must be writable");
    if constexpr (!std::is_const_v<to_type>) {
      to.resize_for_overwrite(from.size());
      detail::convert_views(detail::view_of(from), to.view(), stream);
    }
  } else {
    detail::convert_views(detail::view_of(from), to, stream);
  }
}
/// The same on to's stream if it is a vector, else on from's if that is one, else on stream 0;
/// the caller orders the other side's pending work before it.
template <class From, class To>
void convert(const From& from, To&& to) {
  convert(from, static_cast<To&&>(to), detail::convert_stream(from, to));
}

}  // namespace coalesce

#endif  // __CUDACC__
