// coalesce: transform_reduce over the views the algorithms walk. f receives what the view's
// element is, as in for_each and transform (a soa_view's const named-field proxy: p.vx * p.vx is
// the whole user code), and op combines the results. The walk reads every column in 16-byte
// read-only accesses, in one kernel (detail/reduce_walk.hpp); its scratch comes from coalesce's
// pool (no driver allocation, no synchronization). Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/reduce.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/capture.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/reduce_walk.hpp>
#  include <coalesce/detail/std_operators.hpp>
#  include <coalesce/device_value.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/memory.hpp>

#  include <cuda/std/type_traits>
#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <type_traits>

namespace coalesce {
namespace detail {

// Reduces into `result` (device memory), ordered on `stream`; a standard function object as op
// runs as its cuda::std twin (detail/std_operators.hpp).
template <class View, class F, class T, class Op>
void reduce_into(const View& view, const F& f, T init, const Op& op, T* result, cudaStream_t stream) {
  using walk = walk_of<View>;
  const auto columns = walk::columns(view);
  require_device_columns(columns, walk::rows(view), walk::cols(view), "coalesce::transform_reduce");
  // Elements only: a pitched view's owned padding (which for_each walks into) is never folded in.
  reduce_columns<std::remove_const_t<decltype(columns)>::chunk_elements>(columns, walk::rows(view), walk::cols(view), f,
                                                                         init, as_device_operator(op), result, stream);
}

// What device code can call as op: anything but a pointer to a function (see is_function_pointer_v).
template <class Op>
constexpr bool reduce_op_ok() {
  constexpr bool callable = !is_function_pointer_v<Op>;
  static_assert(callable,
                "coalesce::transform_reduce: op is a pointer to a function, which device code cannot call (the "
                "address is the host's); pass a function object with a __host__ __device__ operator() or a "
                "__device__ lambda, such as cuda::std::plus<>{} (std::plus<>{}, minus, multiplies, bit_and, bit_or, "
                "bit_xor, logical_and and logical_or are taken as their cuda::std twins)");
  return callable;
}

// The views for_each and transform take: a soa_view, pitched_view or span of device memory.
template <class View>
constexpr bool reduce_view_ok() {
  constexpr bool known = view_space<View>::known;
  static_assert(
      known,
      "coalesce::transform_reduce: the view must be a soa_view, a layout_view, a pitched_view, a cuda::std::span or "
      "mdspan of device memory, a device soa_vector, coalesce::vector or pitched_matrix, or a type with a "
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

/// op(... op(op(init, f(e0)), f(e1)) ..., f(en-1)) over every element e of `view` (a soa_view, a
/// pitched_view or a cuda::std::span of device memory, or a type with a view_adapter), in an order
/// the walk chooses: op must be associative and commutative, and callable in device code (a
/// function object with a __host__ __device__ operator(), a __device__ lambda; std::plus<> and the
/// other standard arithmetic, bitwise and logical function objects are taken as their cuda::std
/// twins). Runs on `stream`, then waits for it, and returns the result to the host. Throws
/// std::logic_error, having done nothing, while `stream` is being captured into a CUDA graph (a
/// graph cannot wait: capture the overload below); coalesce::cuda_error if a launch or the copy
/// fails.
template <class View, class F, class T, class Op>
T transform_reduce(View view, F f, T init, Op op, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "coalesce::transform_reduce: the result type must be trivially copyable and default-constructible "
                "(partial results pass between threads as bytes)");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::reduce_view_ok<walked_type>() && detail::reduce_op_ok<Op>()) {
    detail::throw_if_earlier_error("coalesce::transform_reduce");  // before the result's allocation
    detail::refuse_capture(stream, "coalesce::transform_reduce",
                           "this overload waits for the stream to hand the result to the host, which a graph cannot",
                           "capture transform_reduce(view, f, init, op, result, stream) instead (v.view(), v.stream() "
                           "for a container v), which writes the result to `result` in device memory without "
                           "waiting, and read it after the replay");
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

/// The same, writing the result to `result` (device memory) without waiting: ordered on `stream`,
/// so a CUDA graph capture records it (its scratch becomes the graph's memory, allocated and freed
/// by each replay), and each replay reduces the view's contents at that replay.
template <class View, class F, class T, class Op>
void transform_reduce(View view, F f, T init, Op op, T* result, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "coalesce::transform_reduce: the result type must be trivially copyable and default-constructible "
                "(partial results pass between threads as bytes)");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::reduce_view_ok<walked_type>() && detail::reduce_op_ok<Op>())
    detail::reduce_into(detail::as_const_view(walked), f, init, op, result, stream);
}

/// The same into `result`, on result's stream (result.stream(): order the view's writes before it),
/// without waiting; read it with result.get(), which waits for that stream. A CUDA graph capture
/// of that stream records the reduction, and result.get() after each replay reads that replay's
/// result. init takes result's type T.
template <class View, class F, class T, class Resource, class Op>
void transform_reduce(View view, F f, cuda::std::type_identity_t<T> init, Op op, device_value<T, Resource>& result) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  constexpr bool view_given = !detail::is_container<View>::value;
  static_assert(view_given,
                "coalesce::transform_reduce(view, f, init, op, device_value&): pass the container's view (v.view()); "
                "the reduction runs on the device_value's stream, so make the device_value on the container's "
                "(device_value<T>(init, pool_resource(v.stream())))");
  if constexpr (view_given) transform_reduce(view, f, init, op, result.data(), result.stream());
}

/// The same over a device soa_vector or pitched_matrix, on its stream.
template <class U, class Space, class Resource, class F, class T, class Op>
T transform_reduce(const soa_vector<U, Space, Resource>& v, F f, T init, Op op) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  return transform_reduce(v.view(), f, init, op, v.stream());
}
/// The same over a device coalesce::vector of any layout (layout_vector), on its stream.
template <class U, class Layout, class Space, class Resource, class F, class T, class Op>
T transform_reduce(const layout_vector<U, Layout, Space, Resource>& v, F f, T init, Op op) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  return transform_reduce(v.view(), f, init, op, v.stream());
}
/// The same over a device pitched_matrix, on its stream.
template <class U, class Space, class Policy, class Resource, class F, class T, class Op>
T transform_reduce(const pitched_matrix<U, Space, Policy, Resource>& m, F f, T init, Op op) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_reduce");
  return transform_reduce(m.view(), f, init, op, m.stream());
}

}  // namespace coalesce

#endif  // __CUDACC__
