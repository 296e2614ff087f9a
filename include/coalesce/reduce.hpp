// coalesce: transform_reduce over the views the algorithms walk, on CUB. f receives what the
// view's element is, as in for_each and transform (a soa_view's const named-field proxy: p.vx *
// p.vx is the whole user code), and op combines the results. The reduction is
// cub::DeviceReduce::TransformReduce over the indices of the view, so it is as fast as CUB's own
// on the same columns, and its temporary storage comes from coalesce's pool (no driver call, no
// synchronization). Needs a CUDA compiler.
#pragma once

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error "coalesce/reduce.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#include <coalesce/algorithm.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

namespace coalesce {
namespace detail {

// f of the element at flat index i of a view, as the reduction's type T: view[i] for a soa_view or
// span, element (i / cols, i % cols) for a pitched_view. The result type is spelled out, not
// deduced: CUB asks it on the host, where a __device__ lambda cannot be called, not even in an
// unevaluated context.
template <class View, class F, class T>
struct element_at_index {
  View view;
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE T operator()(std::size_t i) const {
    if constexpr (is_pitched_view_v<View>) {
      return static_cast<T>(f(view(i / view.cols(), i % view.cols())));
    } else {
      return static_cast<T>(f(view[i]));
    }
  }
};

template <class View>
std::size_t element_count(const View& view) {
  using walk = walk_of<View>;
  return walk::rows(view) * walk::cols(view);
}

// Reduces into `result` (device memory), ordered on `stream`, with CUB's temporary storage from
// coalesce's pool on that stream.
template <class View, class F, class T, class Op>
void reduce_into(const View& view, const F& f, T init, const Op& op, T* result, cudaStream_t stream) {
  constexpr const char* what = "coalesce::transform_reduce";
  throw_if_earlier_error(what);
  const thrust::counting_iterator<std::size_t> first(0);
  const element_at_index<View, F, T> transform{view, f};
  const std::size_t n = element_count(view);
  std::size_t temp_bytes = 0;
  throw_on_error(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, result, n, op, transform, init, stream),
                 "coalesce::transform_reduce: cub::DeviceReduce::TransformReduce (sizing)");
  const pool_resource pool(stream);
  const owned_bytes<pool_resource> temp(pool, temp_bytes > 0 ? temp_bytes : 1, allocation_alignment);
  throw_on_error(
      cub::DeviceReduce::TransformReduce(temp.get(), temp_bytes, first, result, n, op, transform, init, stream),
      "coalesce::transform_reduce: cub::DeviceReduce::TransformReduce");
}

// The views for_each and transform take: a soa_view, pitched_view or span of device memory.
template <class View>
constexpr bool reduce_view_ok() {
  constexpr bool known = view_space<View>::known;
  static_assert(known,
                "coalesce::transform_reduce: the view must be a soa_view, a pitched_view, a cuda::std::span or "
                "mdspan of device memory, a device soa_vector or pitched_matrix, or a type with a "
                "coalesce::view_adapter");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device,
                  "coalesce::transform_reduce: the view is of host memory; the GPU cannot read it: copy it into a "
                  "device container and pass that");
    return device;
  }
  return false;
}

}  // namespace detail

// op(... op(op(init, f(e0)), f(e1)) ..., f(en-1)) over every element e of `view` (a soa_view, a
// pitched_view or a cuda::std::span of device memory, or a type with a view_adapter), in an order
// CUB chooses: op must be associative and commutative. Runs on `stream`, then waits for it, and
// returns the result to the host. Throws coalesce::cuda_error if a launch or the copy fails.
template <class View, class F, class T, class Op>
T transform_reduce(View view, F f, T init, Op op, cudaStream_t stream = 0) {
  static_assert(std::is_trivially_copyable_v<T>, "coalesce::transform_reduce: the result type must be trivially copyable");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::reduce_view_ok<walked_type>()) {
    const auto in = detail::as_const_view(walked);
    const pool_resource pool(stream);
    const detail::owned_bytes<pool_resource> result(pool, sizeof(T), allocation_alignment);
    detail::reduce_into(in, f, init, op, static_cast<T*>(result.get()), stream);
    T value = init;
    throw_on_error(::cudaMemcpyAsync(&value, result.get(), sizeof(T), cudaMemcpyDeviceToHost, stream),
                   "coalesce::transform_reduce: cudaMemcpyAsync of the result");
    throw_on_error(::cudaStreamSynchronize(stream), "coalesce::transform_reduce: cudaStreamSynchronize");
    return value;
  } else {
    return init;
  }
}

// The same, writing the result to `result` (device memory) without waiting: ordered on `stream`,
// so it can be captured into a CUDA graph.
template <class View, class F, class T, class Op>
void transform_reduce(View view, F f, T init, Op op, T* result, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>, "coalesce::transform_reduce: the result type must be trivially copyable");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::reduce_view_ok<walked_type>())
    detail::reduce_into(detail::as_const_view(walked), f, init, op, result, stream);
}

// The same over a device soa_vector or pitched_matrix, on its stream.
template <class U, class Space, class Resource, class F, class T, class Op>
T transform_reduce(const soa_vector<U, Space, Resource>& v, F f, T init, Op op) {
  return transform_reduce(v.view(), f, init, op, v.stream());
}
template <class U, class Space, class Policy, class Resource, class F, class T, class Op>
T transform_reduce(const pitched_matrix<U, Space, Policy, Resource>& m, F f, T init, Op op) {
  return transform_reduce(m.view(), f, init, op, m.stream());
}

}  // namespace coalesce

#endif  // __CUDACC__
