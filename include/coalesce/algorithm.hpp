// coalesce: layout-aware algorithms. Hand them per-element code; they pick the thread mapping
// that keeps a warp's accesses coalesced and size the grid from the device.
// Needs a CUDA compiler (it launches kernels). Include what you pass: <cuda/std/span> for a span,
// <coalesce/pitched_matrix.hpp> for a pitched_view, <coalesce/view_adapter.hpp> for an mdspan
// (this header only declares them: libcu++'s span and mdspan cost an nvcc compile more than all
// of the algorithms, and a unit that walks soa_views or pointers needs neither).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/algorithm.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/chunk_walk.hpp>
#  include <coalesce/detail/device_memory.hpp>
#  include <coalesce/detail/fill_walk.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/staged_walk.hpp>
#  include <coalesce/detail/strided_column.hpp>
#  include <coalesce/detail/view_adapter_base.hpp>
#  include <coalesce/detail/view_declarations.hpp>
#  include <coalesce/detail/view_walks.hpp>
#  include <coalesce/detail/zip_columns.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/soa.hpp>

// pitched_view and cuda::std::span are only declared, and the mdspan adapter comes with
// <coalesce/pitched_matrix.hpp>: their headers cost more than the rest of this one, and a caller
// that hands one of them over has included its header.
#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {

/// How a walk over a pitched view maps threads to elements: `threads_along_row` consecutive
/// threads take consecutive columns of one row (a warp reads 32 neighbours: one 128-byte line of
/// floats in a 128-byte-pitched row), `rows_per_block` rows go to each block, and the grid strides
/// over the rest. A threads_along_row that is not a multiple of 32 splits warps across rows: it is
/// allowed (to measure it), never the default.
struct row_walk {
  unsigned threads_along_row = 128;  ///< consecutive threads on one row, taking consecutive columns
  unsigned rows_per_block = 4;       ///< rows each block takes
};

/// The walk coalesce uses for rows of `cols` elements: 512 threads per block, 128 along a row
/// (128 x 4) unless the rows are narrower. Measured on an NVIDIA H200, CUDA 13.0: on a pitched
/// 200000 x 1000 float matrix, 128 x 4 beats 16 x 16, whose half-warps split each request over two
/// rows (two lines per request instead of one); see tests/device/pitched_matrix.cu.
inline row_walk default_row_walk(std::size_t cols) noexcept {
  unsigned along = 128;
  while (along > 32 && along / 2 >= cols) along /= 2;
  return row_walk{along, 512 / along};
}

namespace detail {

template <class T, class F>
__global__ void walk_rows_kernel(pitched_view<T, device_space> view, F f) {
  const std::size_t rows = view.rows();
  const std::size_t cols = view.cols();
  const std::size_t row_step = std::size_t(gridDim.x) * blockDim.y;
  for (std::size_t r = std::size_t(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += row_step)
    for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) f(r, c);
}

template <class F>
__global__ void walk_indices_kernel(std::size_t n, F f) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    f(i);
}

// f(i) for i < n, a thread per index, consecutive threads at consecutive indices.
template <class F>
void launch_index_walk(std::size_t n, const F& f, cudaStream_t stream) {
  if (n == 0) return;
  constexpr const char* what = "coalesce::for_each_index kernel launch";
  throw_if_earlier_error(what);
  constexpr unsigned threads = 256;
  const unsigned grid = one_wave_grid<walk_indices_kernel<F>>(threads, (n + threads - 1) / threads);
  walk_indices_kernel<F><<<grid, threads, 0, stream>>>(n, f);
  throw_if_launch_failed(what);
}

template <class T, class F>
void launch_row_walk(pitched_view<T, device_space> view, F f, row_walk shape, cudaStream_t stream,
                     const char* what = "coalesce::for_each_index") {
  if (view.empty()) return;
  require_device_memory(view.data(), what);
  throw_if_earlier_error(what);
  if (shape.threads_along_row == 0 || shape.rows_per_block == 0 ||
      std::size_t(shape.threads_along_row) * shape.rows_per_block > 1024)
    throw std::invalid_argument("coalesce::for_each_index: a row_walk needs 1 to 1024 threads per block");
  const dim3 block(shape.threads_along_row, shape.rows_per_block);
  const unsigned grid = one_wave_grid<walk_rows_kernel<T, F>>(block.x * block.y, (view.rows() + block.y - 1) / block.y);
  walk_rows_kernel<T, F><<<grid, block, 0, stream>>>(view, f);
  throw_if_launch_failed("coalesce::for_each_index kernel launch");
}

// for_each over one contiguous run of device memory (a span, or a pointer and a size).
template <class T, class F>
void for_each_run(T* data, std::size_t size, const F& f, cudaStream_t stream) {
  if (size == 0) return;
  if constexpr (!is_access_width(sizeof(T))) {
    // Structs that one access cannot move (12, 24, 32 bytes...): staged through shared memory,
    // where the device can give a block its stage.
    require_device_memory(data, "coalesce::for_each");
    if (launch_staged_for_each(data, size, f, stream)) return;
  }
  // Each thread its own element, read in the widest accesses its alignment allows: coalesced for
  // 1-16-byte elements, and for larger ones still correct.
  const strided_column<T> run{data, 0};
  require_device_columns(run, 1, size, "coalesce::for_each");
  update_columns(run, 1, size, f, stream);
}

// for_each over a layout_view of records: for_each_run's walk, f handed the proxy of each.
template <class T, class F>
void for_each_records(T* data, std::size_t size, const F& f, cudaStream_t stream) {
  if constexpr (!is_access_width(sizeof(T))) {
    require_device_memory(data, "coalesce::for_each");
    if (launch_staged_for_each(data, size, call_with_proxy<T, F>{f}, stream)) return;
  }
  const record_columns<T> run{{data, 0}};
  require_device_columns(run, 1, size, "coalesce::for_each");
  update_columns(run, 1, size, f, stream);
}

// transform's walk once the views are columns: both sides may run into their owned padding
// (walk_cols past cols) only if they agree on how far.
template <class In, class Out, class F>
void transform_columns(const In& in, const Out& out, std::size_t rows, std::size_t cols, std::size_t in_walk_cols,
                       std::size_t out_walk_cols, const F& f, cudaStream_t stream) {
  require_device_columns(in, rows, cols, "coalesce::transform (input)");
  require_device_columns(out, rows, cols, "coalesce::transform (output)");
  map_columns_into(in, out, rows, in_walk_cols == out_walk_cols ? in_walk_cols : cols, f, stream);
}

}  // namespace detail

/// Calls f(r, c) on the device once for every element of `view` (a pitched_view of device
/// memory), asynchronously on `stream`; threadIdx.x runs along columns so a warp's accesses to row
/// r are coalesced. f may capture other views (a stencil reads `in`, writes `out`). For a soa_view
/// or a cuda::std::span, f(i) once for every index, consecutive threads at consecutive indices.
/// Throws coalesce::cuda_error if the launch fails.
template <class View, class F>
void for_each_index(View view, F f, row_walk shape, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_index");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::for_each_index_view_ok<walked_type>()) {
    static_assert(detail::is_pitched_view_v<walked_type>,
                  "coalesce::for_each_index: a row_walk shapes the walk of a pitched view's rows; a soa_view or span "
                  "is walked one index per thread");
    if constexpr (detail::is_pitched_view_v<walked_type>) detail::launch_row_walk(walked, f, shape, stream);
  }
}
/// The same with the walk coalesce picks for the view (default_row_walk for a pitched view's rows).
template <class View, class F>
void for_each_index(View view, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_index");
  const auto walked = detail::as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (detail::for_each_index_view_ok<walked_type>()) {
    if constexpr (detail::is_pitched_view_v<walked_type>) {
      detail::launch_row_walk(walked, f, default_row_walk(walked.cols()), stream);
    } else {
      using walk = detail::walk_of<walked_type>;
      detail::require_device_columns(walk::columns(walked), 1, walk::cols(walked), "coalesce::for_each_index");
      detail::launch_index_walk(walk::cols(walked), f, stream);
    }
  }
}

// --- for_each --------------------------------------------------------------------------------

/// Calls f(element) on the device once for every element of `view`, asynchronously on `stream`;
/// f may modify the element through the reference it receives. `view` is a soa_view (f gets the
/// named-field proxy: p.x += p.vx * dt is the whole user code), a pitched_view or a
/// cuda::std::span of device memory.
///
/// Each thread loads 16-byte vectors of every column (4 floats, 2 doubles) and f runs on copies in
/// registers; a column is stored back only where f changed its bits, so an in-place update of 3 of
/// 6 columns writes 3, and a read-only f writes nothing. Columns that are not vector-aligned at the
/// same element (a view of other memory) fall back to one coalesced element per thread.
///
/// The contract, at every position (vector body, head, tail, fallback, staged structs):
///   - f receives a reference to a copy of its element in registers, never to memory: its
///     address says nothing about the element's place (no &x - base, no atomics on it);
///   - what f changed is stored after f returns, and only that; a struct's padding is neither
///     compared nor changed (rebuilt whole with the same values, it is not stored; with new
///     values, its padding bytes go back as they were read);
///   - of the range walked, f may read and write its own element only, not even through a view
///     of the same memory that it captured: another element of the range may be loaded, or not
///     yet stored, while f runs. Read neighbours from another view (for_each_index over an
///     output, a stencil's input);
///   - other memory f may read and write through the views, spans and pointers it captures, and
///     add into with atomics: a histogram, a deposit into a grid, a count in a device_value. The
///     calls run in no order, so calls that write one address need atomics, and nothing orders
///     one call's writes before another's reads (tests/device/small_things.cu: atomics into a
///     captured histogram and a device_value, stores to each element's slot of a span).
/// Throws coalesce::cuda_error if the launch fails.
template <class View, class F>
void for_each(View view, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each");
  if constexpr (detail::has_view_adapter<View>::value) {
    for_each(detail::as_walkable(view), f, stream);  // an mdspan, or a type of the user's (view_adapter.hpp)
  } else if constexpr (detail::for_each_view_ok<View>()) {
    using walk = detail::walk_of<View>;
    if (walk::rows(view) == 0 || walk::cols(view) == 0) return;
    if constexpr (walk::is_contiguous_range) {
      detail::for_each_run(view.data(), view.size(), f, stream);
    } else if constexpr (detail::is_record_view_v<View>) {
      detail::for_each_records(view.data(), view.size(), f, stream);
    } else if constexpr (detail::is_pitched_view_v<View>) {
      if (view.is_mdspan_compatible()) {
        detail::require_device_columns(walk::columns(view), walk::rows(view), walk::cols(view), "coalesce::for_each");
        detail::update_columns(walk::columns(view), walk::rows(view), walk::walk_cols(view), f, stream);
      } else {
        // A pitch that is not a whole number of elements (12-byte elements in 128-byte-aligned
        // rows): the row walk, one element per thread.
        detail::launch_row_walk(view, detail::apply_at<typename View::element_type, F>{view, f},
                                default_row_walk(view.cols()), stream, "coalesce::for_each");
      }
    } else {
      detail::require_device_columns(walk::columns(view), walk::rows(view), walk::cols(view), "coalesce::for_each");
      detail::update_columns(walk::columns(view), walk::rows(view), walk::walk_cols(view), f, stream);
    }
  }
}

/// for_each over `size` elements at `data` (device memory), for arrays of structs the program
/// cannot re-lay out: a block copies a run of structs into shared memory with 16-byte loads, each
/// thread runs f on its structs there, and the run is written back with 16-byte stores (only if f
/// changed something). Arrays of 1, 2, 4, 8 or 16-byte elements move as 16-byte vectors directly.
template <class T, class F>
void for_each(T* data, std::size_t size, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each");
  static_assert(!std::is_const_v<T>, "coalesce::for_each: the elements must be writable");
  static_assert(std::is_const_v<T> || std::is_trivially_copyable_v<T>,
                "coalesce::for_each: T must be trivially copyable");
  if constexpr (!std::is_const_v<T> && std::is_trivially_copyable_v<T>) detail::for_each_run(data, size, f, stream);
}

// --- transform -----------------------------------------------------------------------------

/// Writes out[i] = f(in[i]) on the device for every element, asynchronously on `stream`. `in` and
/// `out` are views of the same shape: a soa_view, pitched_view or cuda::std::span each (a soa_view
/// of particles into a span of energies, a span into a soa_view), or for `in` several of them as
/// coalesce::inputs(a, b, ...), f then taking one element of each. f receives what in[i] is (for a
/// soa_view, the const named-field proxy) and returns the output's value type; into a soa_view,
/// f returns the whole element and every column is stored (none is loaded). Every column moves
/// as 16-byte vectors where alignment allows; inputs are read through the non-coherent
/// (read-only) path unless they overlap the output. An input may be the output itself, or one of
/// its columns (in place: each element is read before it is written, by the same thread); any
/// other overlap is refused. Throws std::invalid_argument, before launching anything, if the
/// shapes differ, an input overlaps the output without being it, or a pitched view's pitch is not
/// a whole number of elements; coalesce::cuda_error if the launch fails.
template <class In, class Out, class F>
void transform(In in, Out out, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform");
  if constexpr (detail::has_view_adapter<In>::value || detail::has_view_adapter<Out>::value) {
    transform(detail::as_walkable(in), detail::as_walkable(out), f, stream);
  } else if constexpr (detail::transform_views_ok<In, Out>()) {
    using in_walk = detail::walk_of<In>;
    using out_walk = detail::walk_of<Out>;
    if (in_walk::rows(in) != out_walk::rows(out) || in_walk::cols(in) != out_walk::cols(out))
      throw std::invalid_argument("coalesce::transform: input is " + std::to_string(in_walk::rows(in)) + " x " +
                                  std::to_string(in_walk::cols(in)) + " elements, output " +
                                  std::to_string(out_walk::rows(out)) + " x " + std::to_string(out_walk::cols(out)));
    if (in_walk::rows(in) == 0 || in_walk::cols(in) == 0) return;
    const auto in_view = detail::as_const_view(in);  // f sees const inputs, as in[i] would be read
    detail::transform_columns(detail::walk_of<std::remove_const_t<decltype(in_view)>>::columns(in_view),
                              out_walk::columns(out), in_walk::rows(in), in_walk::cols(in), in_walk::walk_cols(in),
                              out_walk::walk_cols(out), f, stream);
  }
}

/// The same over coalesce::inputs(a, b, ...) (<coalesce/inputs.hpp>): out[i] = f(a[i], b[i], ...),
/// every input of out's shape, on the first input container's stream when the list has one (else
/// stream 0). An input that is the output, or one of its columns, is in place; any other overlap
/// of an input with the output throws std::invalid_argument, as for one input.
template <class... Views, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const input_list<Views...>& in, Out out, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform");
  transform(in, out, f, in.has_stream ? in.stream : cudaStream_t{});
}

/// transform over `size` elements at `in` into `out` (device memory).
template <class T, class U, class F>
void transform(const T* in, std::size_t size, U* out, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::transform");
  static_assert(!std::is_const_v<U>, "coalesce::transform: the output view must be writable");
  if constexpr (!std::is_const_v<U>) {
    if (size == 0) return;
    detail::transform_columns(detail::strided_column<const T>{in, 0}, detail::strided_column<U>{out, 0}, 1, size, size,
                              size, f, stream);
  }
}

// --- fill ------------------------------------------------------------------------------------

/// Sets every element of `view` to `value` on the device, asynchronously on `stream`: one kernel
/// that stores every column in 16-byte vectors and loads nothing, so a CUDA graph capture records
/// it (unlike a container's own fill, which copies the value from pageable host memory).
/// coalesce::zero(view) below clears every byte. `view` is a soa_view, pitched_view, pitched_volume_view or
/// cuda::std::span of device memory; a device soa_vector, pitched_matrix or pitched_volume is filled
/// on its stream (the overloads after this one). A pitched view's padding is not written.
template <class View, class T>
void fill(View view, const T& value, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::fill");
  if constexpr (detail::has_view_adapter<View>::value) {
    fill(detail::as_walkable(view), value, stream);  // a volume's rows, an mdspan
  } else if constexpr (detail::mdspans_adapted<View>() && detail::fill_view_ok<View>()) {
    using walk = detail::walk_of<View>;
    const std::size_t rows = walk::rows(view), cols = walk::cols(view);
    if (rows == 0 || cols == 0) return;
    const auto columns = walk::columns(view);
    using columns_type = std::remove_const_t<decltype(columns)>;
    detail::require_device_columns(columns, rows, cols, "coalesce::fill");
    detail::launch_columns<columns_type::chunk_elements>(
        rows, cols, detail::store_value<columns_type>{columns, typename columns_type::value_type(value)}, stream,
        "coalesce::fill kernel launch", columns);
  }
}

/// Sets every byte of every element of `view` to zero: fill with an element of zero bytes (the
/// same store-only kernel, capturable); a device container is zeroed on its stream.
template <class View>
void zero(View view, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::zero");
  fill(view, detail::zero_bytes<std::remove_const_t<typename View::element_type>>(), stream);
}

// --- volumes -----------------------------------------------------------------------------------
//
// A pitched_volume_view is walked as its rows (view_adapter in pitched_volume.hpp): for_each and
// transform take it like any view. for_each_index calls f(z, y, x), threadIdx.x along x.

namespace detail {

// f(z, y, x) for the row walk's (r, c) over a volume's rows, row r = z * height + y.
template <class F>
struct volume_index {
  std::size_t height;
  std::size_t first_z;
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE void operator()(std::size_t r, std::size_t x) const { f(first_z + r / height, r % height, x); }
};

}  // namespace detail

/// Calls f(z, y, x) on the device once for every element of `volume` (a view of device memory: a
/// whole volume or any block of one), asynchronously on `stream`. A view whose rows are one
/// pitched matrix is one launch; a block cut in y is one launch per slice.
template <class T, class F>
void for_each_index(pitched_volume_view<T, device_space> volume, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_index");
  if (volume.empty()) return;
  if (volume.rows_are_one_matrix()) {
    for_each_index(volume.rows(), detail::volume_index<F>{volume.height(), 0, f}, stream);
  } else {
    for (std::size_t z = 0; z < volume.depth(); ++z)
      for_each_index(volume.slice(z), detail::volume_index<F>{volume.height(), z, f}, stream);
  }
}

}  // namespace coalesce

// The same calls handed a device container, on its stream: after the view overloads they call.
#  include <coalesce/detail/algorithm_containers.hpp>

#endif  // __CUDACC__
