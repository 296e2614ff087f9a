// coalesce: layout-aware algorithms. Hand them per-element code; they pick the thread mapping
// that keeps a warp's accesses coalesced and size the grid from the device.
// Needs a CUDA compiler (it launches kernels).
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>

namespace coalesce {

// How a walk over a pitched view maps threads to elements: `threads_along_row` consecutive
// threads take consecutive columns of one row (a warp reads 32 neighbours: one 128-byte line of
// floats in a 128-byte-pitched row), `rows_per_block` rows go to each block, and the grid strides
// over the rest. A threads_along_row that is not a multiple of 32 splits warps across rows: it is
// allowed (to measure it), never the default.
struct row_walk {
  unsigned threads_along_row = 128;
  unsigned rows_per_block = 4;
};

// The walk coalesce uses for rows of `cols` elements: 512 threads per block, 128 along a row
// (128 x 4) unless the rows are narrower. Measured on an NVIDIA H200, CUDA 13.0: on a pitched
// 200000 x 1000 float matrix, 128 x 4 beats 16 x 16, whose half-warps split each request over two
// rows (two lines per request instead of one); see tests/device/pitched_matrix.cu.
inline row_walk default_row_walk(std::size_t cols) noexcept {
  unsigned along = 128;
  while (along > 32 && along / 2 >= cols) along /= 2;
  return row_walk{along, 512 / along};
}

namespace detail {

template <class T, class F>
__global__ void walk_rows_kernel(pitched_view<T> view, F f) {
  const std::size_t rows = view.rows();
  const std::size_t cols = view.cols();
  const std::size_t row_step = std::size_t(gridDim.x) * blockDim.y;
  for (std::size_t r = std::size_t(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += row_step)
    for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) f(r, c);
}

// Adapts f(T&) to the walk's f(r, c).
template <class T, class F>
struct apply_to_element {
  pitched_view<T> view;
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE void operator()(std::size_t r, std::size_t c) const { f(view.row(r)[c]); }
};

template <class T, class F>
void launch_row_walk(pitched_view<T> view, F f, row_walk shape, cudaStream_t stream) {
  if (view.empty()) return;
  if (shape.threads_along_row == 0 || shape.rows_per_block == 0 || std::size_t(shape.threads_along_row) * shape.rows_per_block > 1024)
    throw std::invalid_argument("coalesce::for_each_index: a row_walk needs 1 to 1024 threads per block");
  const dim3 block(shape.threads_along_row, shape.rows_per_block);
  const unsigned grid = one_wave_grid(walk_rows_kernel<T, F>, block.x * block.y, (view.rows() + block.y - 1) / block.y);
  walk_rows_kernel<T, F><<<grid, block, 0, stream>>>(view, f);
  throw_on_error(::cudaGetLastError(), "coalesce::for_each_index kernel launch");
}

}  // namespace detail

// Calls f(r, c) on the device once for every element of `view`, asynchronously on `stream`;
// threadIdx.x runs along columns so a warp's accesses to row r are coalesced. f may capture
// other views (a stencil reads `in`, writes `out`). Throws coalesce::cuda_error if the launch fails.
template <class T, class F>
void for_each_index(pitched_view<T> view, F f, row_walk shape, cudaStream_t stream = 0) {
  detail::launch_row_walk(view, f, shape, stream);
}
template <class T, class F>
void for_each_index(pitched_view<T> view, F f, cudaStream_t stream = 0) {
  detail::launch_row_walk(view, f, default_row_walk(view.cols()), stream);
}

// Calls f(element) on the device for every element of `view` (f may modify it), with the same
// walk as for_each_index.
template <class T, class F>
void for_each(pitched_view<T> view, F f, cudaStream_t stream = 0) {
  detail::launch_row_walk(view, detail::apply_to_element<T, F>{view, f}, default_row_walk(view.cols()), stream);
}

// --- soa_view ---------------------------------------------------------------------------------

namespace detail {

// Elements a thread takes at once from a soa_view: 4, so a float column moves as one 16-byte
// vector per thread (a double column as two, a short column as one 8-byte access).
inline constexpr unsigned soa_elements_per_thread = 4;

template <class F, unsigned N>
struct alignas(sizeof(F) * N <= 16 ? sizeof(F) * N : 16) column_chunk {
  F value[N];
};

template <class F, unsigned N>
COALESCE_DEVICE COALESCE_FORCEINLINE bool same_bits(const F (&a)[N], const F (&b)[N]) {
  const auto* x = reinterpret_cast<const unsigned char*>(a);
  const auto* y = reinterpret_cast<const unsigned char*>(b);
  bool same = true;
#pragma unroll
  for (unsigned i = 0; i < sizeof(F) * N; ++i) same = same && x[i] == y[i];
  return same;
}

// The proxy f receives for an element held in registers: the same type view[i] has, so a functor
// written for view[i] (p.x += p.vx * dt) works unchanged.
template <class T, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE soa_reference_t<T> register_reference(T& element, std::index_sequence<I...>) {
  auto fields = tie_fields(element);
  if constexpr (has_named_fields<T>::value) {
    return soa_reference_t<T>{{}, get_leaf<I>(fields)...};
  } else {
    return soa_reference_t<T>(fields);
  }
}

// Loads chunk `c` of every column into `elements`, column by column, as vectors.
template <class T, unsigned N, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_chunk(const soa_view<T>& view, std::size_t first, T (&elements)[N],
                                                     std::index_sequence<I...>) {
  (
      [&] {
        using F = field_type_t<T, I>;
        const auto chunk = *reinterpret_cast<const column_chunk<F, N>*>(view.template column<I>() + first);
#pragma unroll
        for (unsigned k = 0; k < N; ++k) get_leaf<I>(tie_fields(elements[k])) = chunk.value[k];
      }(),
      ...);
}

// Stores back the columns whose values f changed; a column f only read is never written.
template <class T, unsigned N, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed(const soa_view<T>& view, std::size_t first,
                                                        const T (&before)[N], const T (&after)[N],
                                                        std::index_sequence<I...>) {
  (
      [&] {
        using F = field_type_t<T, I>;
        F old_values[N], new_values[N];
#pragma unroll
        for (unsigned k = 0; k < N; ++k) {
          old_values[k] = get_leaf<I>(tie_fields(before[k]));
          new_values[k] = get_leaf<I>(tie_fields(after[k]));
        }
        if (!same_bits(old_values, new_values)) {
          column_chunk<F, N> chunk;
#pragma unroll
          for (unsigned k = 0; k < N; ++k) chunk.value[k] = new_values[k];
          *reinterpret_cast<column_chunk<F, N>*>(view.template column<I>() + first) = chunk;
        }
      }(),
      ...);
}

template <class T, class F>
__global__ void soa_for_each_kernel(soa_view<T> view, F f) {
  constexpr unsigned N = soa_elements_per_thread;
  constexpr auto fields = std::make_index_sequence<field_count_v<T>>{};
  const std::size_t n = view.size(), whole = n / N;
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t c = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; c < whole; c += step) {
    T before[N], after[N];
    load_chunk(view, c * N, before, fields);
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      after[k] = before[k];
      f(register_reference(after[k], fields));
    }
    store_changed(view, c * N, before, after, fields);
  }
  // The last n % N elements, one per thread, in place.
  const std::size_t tail = whole * N + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) f(view[tail]);
}

}  // namespace detail

// Calls f(view[i]) on the device for every element, asynchronously on `stream`; f may modify the
// element through the reference it receives (p.x += p.vx * dt). Each thread moves four elements
// of every column as one vector per column, and stores back only the columns whose values f
// changed, so an in-place update of 3 of 6 columns writes 3. Columns are 256-byte aligned in a
// soa_vector; a view of other memory must have 16-byte-aligned columns.
// Throws coalesce::cuda_error if the launch fails.
template <class T, class F>
void for_each(soa_view<T> view, F f, cudaStream_t stream = 0) {
  static_assert(!std::is_const_v<T>, "coalesce::for_each: the view must be writable (soa_view<T>, not soa_view<const T>)");
  if (view.empty()) return;
  constexpr unsigned threads = 256;
  const std::size_t chunks = view.size() / detail::soa_elements_per_thread + 1;
  const unsigned grid = detail::one_wave_grid(detail::soa_for_each_kernel<T, F>, threads, (chunks + threads - 1) / threads);
  detail::soa_for_each_kernel<T, F><<<grid, threads, 0, stream>>>(view, f);
  throw_on_error(::cudaGetLastError(), "coalesce::for_each kernel launch");
}

}  // namespace coalesce
