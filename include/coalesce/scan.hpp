// coalesce: prefix sums over a column, or over f of each element of a view, into a span of device
// memory: the offsets of a binning, the first index of each cell. On cub::DeviceScan (decoupled
// look-back: one read of the input, one write of the output), with its scratch from coalesce's
// pool. A column is handed to CUB as a pointer, which it reads in vectors; f of a soa_view's
// elements through an index iterator, so only the columns f reads are loaded. Asynchronous on the
// stream, waiting for nothing: a CUDA graph capture records a scan, its scratch becoming memory of
// the graph's that each replay allocates and frees. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/scan.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/std_operators.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/memory.hpp>

#  include <cub/device/device_scan.cuh>
#  include <cuda/std/functional>
#  include <cuda/std/span>
#  include <cuda/std/type_traits>
#  include <thrust/iterator/counting_iterator.h>
#  include <thrust/iterator/transform_iterator.h>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {
namespace detail {

// f of the element at flat index i of a view, as the output's type U: view[i] for a soa_view or
// span, element (i / cols, i % cols) - row-major order - for a pitched_view. The result type is
// spelled out, not deduced: CUB asks it on the host, where a __device__ lambda cannot be called,
// not even in an unevaluated context.
template <class View, class F, class U>
struct element_at_index {
  View view;
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE U operator()(std::size_t i) const {
    if constexpr (is_pitched_view_v<View>) {
      return static_cast<U>(f(view(i / view.cols(), i % view.cols())));
    } else {
      return static_cast<U>(f(view[i]));
    }
  }
};

// What device code can call as op: not a stream given where op belongs, nor a pointer to a
// function (see is_function_pointer_v).
template <class Op>
constexpr bool scan_op_ok() {
  constexpr bool ok = !std::is_same_v<std::decay_t<Op>, cudaStream_t>;
  static_assert(ok, "coalesce scans: the operation comes before the stream, e.g. "
                    "coalesce::inclusive_scan(in, out, cuda::std::plus<>{}, stream)");
  constexpr bool callable = !is_function_pointer_v<Op>;
  static_assert(!ok || callable,
                "coalesce scans: op is a pointer to a function, which device code cannot call (the address is the "
                "host's); pass a function object with a __host__ __device__ operator() or a __device__ lambda, such "
                "as cuda::std::plus<>{} (std::plus<>{}, minus, multiplies, bit_and, bit_or, bit_xor, logical_and and "
                "logical_or are taken as their cuda::std twins)");
  return ok && callable;
}

template <class View>
constexpr bool scan_view_ok() {
  constexpr bool known = view_space<View>::known;
  static_assert(known,
                "coalesce scans: the input must be a soa_view, a pitched_view or a cuda::std::span of device memory, "
                "or a type with a coalesce::view_adapter");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device, "coalesce scans: the input is of host memory; the GPU cannot read it");
    return device;
  }
  return false;
}

inline void require_same_count(std::size_t in, std::size_t out, const char* what) {
  if (in != out)
    throw std::invalid_argument(std::string(what) + ": the input has " + std::to_string(in) + " elements, the output " +
                                std::to_string(out));
}

// Runs `scan(temp, bytes)` twice, CUB's way: once to size the scratch, once with it (from
// coalesce's pool on the stream).
template <class Scan>
void with_scan_scratch(const Scan& scan, cudaStream_t stream, const char* what) {
  throw_if_earlier_error(what);
  std::size_t bytes = 0;
  throw_on_error(scan(nullptr, bytes), what);
  const pool_resource pool(stream);
  const owned_bytes<pool_resource> temp(pool, bytes > 0 ? bytes : 1, allocation_alignment);
  throw_on_error(scan(temp.get(), bytes), what);
}

template <class View, class U, class F, class Op>
void scan_view(const View& view, U* out, std::size_t count, const F& f, const Op& op, const U* init,
               cudaStream_t stream, const char* what) {
  using walk = walk_of<View>;
  require_same_count(walk::rows(view) * walk::cols(view), count, what);
  if (count == 0) return;
  const auto in =
      thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0), element_at_index<View, F, U>{view, f});
  const auto device_op = as_device_operator(op);
  with_scan_scratch(
      [&](void* temp, std::size_t& bytes) {
        return init ? cub::DeviceScan::ExclusiveScan(temp, bytes, in, out, device_op, *init, count, stream)
                    : cub::DeviceScan::InclusiveScan(temp, bytes, in, out, device_op, count, stream);
      },
      stream, what);
}

}  // namespace detail

/// out[i] = in[0] op in[1] op ... op in[i], for a column of device memory; in may be out (in
/// place). op must be associative (the grouping is CUB's) and callable in device code: a function
/// object with a __host__ __device__ operator() or a __device__ lambda; std::plus<> and the other
/// standard arithmetic, bitwise and logical function objects are taken as their cuda::std twins,
/// as in every scan below. Throws std::invalid_argument if the sizes differ, coalesce::cuda_error
/// if a launch fails.
template <class T, std::size_t InExtent, class U, std::size_t OutExtent, class Op>
void inclusive_scan(cuda::std::span<T, InExtent> in, cuda::std::span<U, OutExtent> out, Op op,
                    cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::inclusive_scan");
  if constexpr (detail::scan_op_ok<Op>()) {
    constexpr const char* what = "coalesce::inclusive_scan";
    detail::require_same_count(in.size(), out.size(), what);
    if (in.empty()) return;
    const T* first = in.data();
    const auto device_op = detail::as_device_operator(op);
    detail::with_scan_scratch(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::InclusiveScan(temp, bytes, first, out.data(), device_op, in.size(), stream);
        },
        stream, what);
  }
}
/// The same, summing.
template <class T, std::size_t InExtent, class U, std::size_t OutExtent>
void inclusive_scan(cuda::std::span<T, InExtent> in, cuda::std::span<U, OutExtent> out) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::inclusive_scan");
  inclusive_scan(in, out, cuda::std::plus<>{});
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i - 1]: the offsets of a binning from its
/// counts.
template <class T, std::size_t InExtent, class U, std::size_t OutExtent, class Op>
void exclusive_scan(cuda::std::span<T, InExtent> in, cuda::std::span<U, OutExtent> out,
                    cuda::std::type_identity_t<U> init, Op op, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::exclusive_scan");
  if constexpr (detail::scan_op_ok<Op>()) {
    constexpr const char* what = "coalesce::exclusive_scan";
    detail::require_same_count(in.size(), out.size(), what);
    if (in.empty()) return;
    const T* first = in.data();
    const auto device_op = detail::as_device_operator(op);
    detail::with_scan_scratch(
        [&](void* temp, std::size_t& bytes) {
          return cub::DeviceScan::ExclusiveScan(temp, bytes, first, out.data(), device_op, init, in.size(), stream);
        },
        stream, what);
  }
}
/// The exclusive sums (op = cuda::std::plus), on the default stream.
template <class T, std::size_t InExtent, class U, std::size_t OutExtent>
void exclusive_scan(cuda::std::span<T, InExtent> in, cuda::std::span<U, OutExtent> out,
                    cuda::std::type_identity_t<U> init) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::exclusive_scan");
  exclusive_scan(in, out, init, cuda::std::plus<>{});
}

/// The scans of f(e) for every element e of `view` (a soa_view, a pitched_view in row-major order,
/// a span, or a type with a view_adapter), as U. f receives what for_each's f receives for a const
/// element: a soa_view's named-field proxy (p.vx > 0 ? 1u : 0u), so only the columns f reads are
/// loaded. (coalesce's order: f right after the view, as in transform_reduce.)
template <class View, class U, std::size_t OutExtent, class F, class Op>
void transform_inclusive_scan(View view, cuda::std::span<U, OutExtent> out, F f, Op op, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_inclusive_scan");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::scan_op_ok<Op>() && detail::scan_view_ok<walked_type>())
    detail::scan_view(detail::as_const_view(walked), out.data(), out.size(), f, op, static_cast<const U*>(nullptr),
                      stream, "coalesce::transform_inclusive_scan");
}
/// The exclusive scan of f(e): out[0] = init, out[i] = init op f(view[0]) op ... op
/// f(view[i - 1]), e.g. a count per element (f) into the offset of each one's output. Throws
/// std::invalid_argument if out's size is not the view's, coalesce::cuda_error if a launch fails.
template <class View, class U, std::size_t OutExtent, class F, class Op>
void transform_exclusive_scan(View view, cuda::std::span<U, OutExtent> out, F f, cuda::std::type_identity_t<U> init,
                              Op op, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform_exclusive_scan");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::scan_op_ok<Op>() && detail::scan_view_ok<walked_type>())
    detail::scan_view(detail::as_const_view(walked), out.data(), out.size(), f, op, &init, stream,
                      "coalesce::transform_exclusive_scan");
}

}  // namespace coalesce

#endif  // __CUDACC__
