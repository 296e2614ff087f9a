// coalesce: Thrust interop for soa_view, kept in its own header because Thrust is slow to compile
// (a unit that includes <thrust/device_vector.h> takes about 15 s where <coalesce/soa.hpp> adds
// little). device_begin(view) / device_end(view) are Thrust device iterators whose value_type is T
// and whose reference is view[i], so thrust::transform, reduce, copy_if, for_each and
// sort_by_key work on SoA data with functors written for T. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/thrust.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/soa.hpp>
#  include <coalesce/soa_convert.hpp>

#  include <thrust/device_vector.h>
#  include <thrust/iterator/iterator_facade.h>

#  include <cstddef>

namespace coalesce {

/// A Thrust random-access device iterator over a soa_view<T>.
template <class T>
class soa_device_iterator
    : public thrust::iterator_facade<soa_device_iterator<T>, std::remove_const_t<T>, thrust::device_system_tag,
                                     thrust::random_access_traversal_tag, soa_reference_t<T>, std::ptrdiff_t> {
 public:
  soa_device_iterator() = default;
  /// The iterator at element `index` of `view`.
  COALESCE_HOST_DEVICE soa_device_iterator(const soa_view<T>& view, std::size_t index) : view_(view), index_(index) {}

 private:
  friend class thrust::iterator_core_access;
  COALESCE_HOST_DEVICE soa_reference_t<T> dereference() const { return view_[index_]; }
  COALESCE_HOST_DEVICE bool equal(const soa_device_iterator& other) const { return index_ == other.index_; }
  COALESCE_HOST_DEVICE void increment() { ++index_; }
  COALESCE_HOST_DEVICE void decrement() { --index_; }
  COALESCE_HOST_DEVICE void advance(std::ptrdiff_t n) { index_ += n; }
  COALESCE_HOST_DEVICE std::ptrdiff_t distance_to(const soa_device_iterator& other) const {
    return std::ptrdiff_t(other.index_) - std::ptrdiff_t(index_);
  }

  soa_view<T> view_{};
  std::size_t index_ = 0;
};

/// A Thrust device iterator at the first element of `view`, for thrust algorithms over its elements.
template <class T>
soa_device_iterator<T> device_begin(const soa_view<T>& view) {
  return soa_device_iterator<T>(view, 0);
}
/// A Thrust device iterator one past the last element of `view`.
template <class T>
soa_device_iterator<T> device_end(const soa_view<T>& view) {
  return soa_device_iterator<T>(view, view.size());
}

/// A device soa_vector of the structs in `aos`, converted on the device.
template <class T, class Alloc>
soa_vector<T> to_soa(const thrust::device_vector<T, Alloc>& aos) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::to_soa");
  return to_soa(thrust::raw_pointer_cast(aos.data()), aos.size());
}

/// The elements of a device soa_vector as a thrust::device_vector of structs.
template <class T, class Resource>
thrust::device_vector<T> to_aos(const soa_vector<T, device_space, Resource>& soa) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::to_aos");
  thrust::device_vector<T> aos(soa.size());
  copy_soa_to_aos(soa.const_view(), thrust::raw_pointer_cast(aos.data()), soa.stream());
  return aos;
}

}  // namespace coalesce

#endif  // __CUDACC__
