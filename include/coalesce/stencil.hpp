// coalesce: stencils on pitched matrices. out(r, c) = f(n) for every element of the output, where
// n is the radius-R neighbourhood of the input(s) around (r, c): finite differences, Jacobi
// sweeps, image filters. Reads beyond the edge follow a boundary policy (boundary.hpp).
//
//   coalesce::stencil<1>(in, out, [] __device__(auto n) { return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1)); });
//   coalesce::stencil<2>(coalesce::periodic, coalesce::inputs(u, v), out, [] __device__(auto u, auto v) { ... });
//
// Needs a CUDA compiler (it launches kernels).
#pragma once

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error "coalesce/stencil.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/device_memory.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coalesce {

// The radius-R neighbourhood of one element of one input, as f receives it: n(dr, dc) is the
// input at (r + dr, c + dc), |dr|, |dc| <= R, after the boundary policy. Offsets known at compile
// time cost nothing (the values are registers); n.at<dr, dc>() checks them at compile time,
// n(dr, dc) under COALESCE_DEBUG. An offset computed at run time indexes a local array.
template <class T, int R>
class neighbourhood {
 public:
  using value_type = T;
  static constexpr int radius = R;

  // Over values laid out row-major, `row_stride` apart, `centre` pointing at offset (0, 0).
  COALESCE_HOST_DEVICE constexpr neighbourhood(const T* centre, int row_stride) : centre_(centre), row_stride_(row_stride) {}

  COALESCE_HOST_DEVICE constexpr T operator()(int dr, int dc) const {
    COALESCE_ASSERT(dr >= -R && dr <= R && dc >= -R && dc <= R, "coalesce::neighbourhood: offset beyond the stencil's radius");
    return centre_[dr * row_stride_ + dc];
  }
  template <int DR, int DC>
  COALESCE_HOST_DEVICE constexpr T at() const {
    static_assert(DR >= -R && DR <= R && DC >= -R && DC <= R,
                  "coalesce::neighbourhood::at<dr, dc>: the offset is beyond the stencil's radius R; raise R in "
                  "coalesce::stencil<R>");
    return centre_[DR * row_stride_ + DC];
  }

 private:
  const T* centre_;
  int row_stride_;
};

// Several inputs of one shape for one stencil: f then takes one neighbourhood per input, in
// order. Made by coalesce::inputs.
template <class... Views>
struct stencil_inputs {
  cuda::std::tuple<Views...> views;
  cudaStream_t stream = 0;   // the first container's, when one was given
  bool has_stream = false;
};

namespace detail {

template <class T>
struct stencil_input_of {  // anything else: refused by stencil's checks
  using type = T;
  static type view(const T& v) { return v; }
  static constexpr bool is_container = false;
};
template <class T, class S>
struct stencil_input_of<pitched_view<T, S>> {
  using type = pitched_view<const T, S>;
  static type view(const pitched_view<T, S>& v) { return v; }
  static constexpr bool is_container = false;
};
template <class T, class S, class P, class R>
struct stencil_input_of<pitched_matrix<T, S, P, R>> {
  using type = pitched_view<const T, S>;
  static type view(const pitched_matrix<T, S, P, R>& m) { return m.const_view(); }
  static constexpr bool is_container = true;
};

template <class T>
cudaStream_t stream_or(const T& input, cudaStream_t otherwise) {
  if constexpr (stencil_input_of<T>::is_container) return input.stream();
  else return otherwise;
}

}  // namespace detail

// The inputs of a stencil with several: pitched_views or pitched_matrices of one shape (a matrix
// also brings its stream, used when the output is a view).
template <class... Inputs>
auto inputs(const Inputs&... in) {
  static_assert(sizeof...(Inputs) >= 1, "coalesce::inputs: name at least one input");
  stencil_inputs<typename detail::stencil_input_of<Inputs>::type...> list{
      cuda::std::tuple<typename detail::stencil_input_of<Inputs>::type...>(detail::stencil_input_of<Inputs>::view(in)...)};
  cudaStream_t stream = 0;
  bool found = false;
  const auto first_container = [&](const auto& input) {
    using I = std::decay_t<decltype(input)>;
    if constexpr (detail::stencil_input_of<I>::is_container)
      if (!found) {
        stream = input.stream();
        found = true;
      }
  };
  (first_container(in), ...);
  list.stream = stream;
  list.has_stream = found;
  return list;
}

namespace detail {

// The window walk's shape. A warp owns a strip of 32 vectors of 16 bytes (128 floats: one
// 512-byte span, starting on a line because rows are padded to 128 bytes) and walks down a band
// of rows, each new row loaded once. Unmeasured choices: 8 warps per block, 32 rows per band
// (the 2R halo rows a band re-reads from L2 are 2R/32 of its loads) and 2 rows loaded ahead of
// the one consumed (each warp keeps 1 KiB of loads in flight besides its window).
inline constexpr unsigned stencil_block_threads = 256;
inline constexpr long long stencil_band_rows = 32;
inline constexpr int stencil_rows_ahead = 2;

inline constexpr unsigned full_warp = 0xffffffffu;

// A value of up to 16 bytes moved between lanes as 32-bit words.
template <class T>
COALESCE_DEVICE COALESCE_FORCEINLINE T shuffle_from_lane(T value, int delta) {
  constexpr int words = int((sizeof(T) + 3) / 4);
  unsigned w[words] = {};
  std::memcpy(w, &value, sizeof(T));
#pragma unroll
  for (int k = 0; k < words; ++k) w[k] = delta < 0 ? __shfl_up_sync(full_warp, w[k], unsigned(-delta)) : __shfl_down_sync(full_warp, w[k], unsigned(delta));
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}

// The element at (row, col) of `in` under the policy; `row` is already a valid row index.
template <class T, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE T load_element(const T* row, long long col, long long cols, const Policy& policy) {
  const long long c = boundary_index(policy, col, cols);
  if constexpr (!std::is_same_v<Policy, clamp_t> && !std::is_same_v<Policy, periodic_t> && !std::is_same_v<Policy, interior_t>) {
    if (c < 0) return static_cast<T>(policy.value);
  }
  return load_chunk<true>(row + c);
}

// One input row as a lane loads it: its vector of V elements and, on the warp's edge lanes, the R
// elements beyond the strip (lane 0: the R to its left; lane 31: the R to its right).
template <class T, int R, int V>
struct loaded_row {
  T body[V];
  T halo[R];
};

// The rows of one input that the outputs of row i read: rows i - R .. i + R, each extended by R
// elements on either side of the lane's vector (from the neighbouring lanes), and the rows
// loaded ahead.
template <class T, int R, int V>
struct input_window {
  static constexpr int width = V + 2 * R;
  T rows[2 * R + 1][width];  // rows[k][R + j]: row i - R + k, column c0 + j
  loaded_row<T, R, V> ahead[stencil_rows_ahead];

  template <class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE static loaded_row<T, R, V> load(const pitched_view<const T>& in, long long i, long long c0,
                                                                      long long halo_col, bool edge_lane, const Policy& policy) {
    loaded_row<T, R, V> out;
    const long long cols = (long long)in.cols();
    const long long r = boundary_index(policy, i, (long long)in.rows());
    if constexpr (!std::is_same_v<Policy, clamp_t> && !std::is_same_v<Policy, periodic_t> && !std::is_same_v<Policy, interior_t>) {
      if (r < 0) {
#pragma unroll
        for (int j = 0; j < V; ++j) out.body[j] = static_cast<T>(policy.value);
#pragma unroll
        for (int k = 0; k < R; ++k) out.halo[k] = static_cast<T>(policy.value);
        return out;
      }
    }
    const T* row = in.row(std::size_t(r));
    if (c0 + V <= cols) {
      const auto v = load_chunk<true>(reinterpret_cast<const vector_chunk<T, V>*>(row + c0));
#pragma unroll
      for (int j = 0; j < V; ++j) out.body[j] = v.value[j];
    } else {
      // The row's last, partial vector (cols % V != 0) and lanes past the end: one element
      // each, through the policy, so that the lanes to their left see the right neighbours.
#pragma unroll
      for (int j = 0; j < V; ++j) out.body[j] = load_element(row, c0 + j, cols, policy);
    }
    if (edge_lane) {
#pragma unroll
      for (int k = 0; k < R; ++k) out.halo[k] = load_element(row, halo_col + k, cols, policy);
    }
    return out;
  }

  // Row k of the window from a loaded row: the lane's vector, its left neighbours from the lane
  // below (lane 0: its halo) and its right neighbours from the lane above (lane 31: its halo).
  COALESCE_DEVICE COALESCE_FORCEINLINE void extend_into(int k, const loaded_row<T, R, V>& l, unsigned lane) {
#pragma unroll
    for (int j = 0; j < V; ++j) rows[k][R + j] = l.body[j];
#pragma unroll
    for (int m = 0; m < R; ++m) {
      const T from_left = shuffle_from_lane(l.body[V - 1 - m], -1);
      const T from_right = shuffle_from_lane(l.body[m], 1);
      rows[k][R - 1 - m] = lane == 0 ? l.halo[R - 1 - m] : from_left;
      rows[k][R + V + m] = lane == 31 ? l.halo[m] : from_right;
    }
  }

  // Moves the window down a row: row i + 1 + R comes from the rows loaded ahead, and row
  // i + 1 + R + rows_ahead is loaded if the band still needs it.
  template <class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void advance(const pitched_view<const T>& in, long long i, long long last, long long c0,
                                                    long long halo_col, unsigned lane, const Policy& policy) {
#pragma unroll
    for (int k = 0; k < 2 * R; ++k)
#pragma unroll
      for (int e = 0; e < width; ++e) rows[k][e] = rows[k + 1][e];
    extend_into(2 * R, ahead[0], lane);
#pragma unroll
    for (int p = 0; p + 1 < stencil_rows_ahead; ++p) ahead[p] = ahead[p + 1];
    const long long next = i + 1 + R + stencil_rows_ahead;
    if (next < last + R) ahead[stencil_rows_ahead - 1] = load(in, next, c0, halo_col, lane == 0 || lane == 31, policy);
  }

  template <class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void start(const pitched_view<const T>& in, long long first, long long last, long long c0,
                                                  long long halo_col, unsigned lane, const Policy& policy) {
    const bool edge_lane = lane == 0 || lane == 31;
#pragma unroll
    for (int k = 0; k <= 2 * R; ++k) extend_into(k, load(in, first - R + k, c0, halo_col, edge_lane, policy), lane);
#pragma unroll
    for (int p = 0; p < stencil_rows_ahead; ++p)
      if (first + R + 1 + p < last + R) ahead[p] = load(in, first + R + 1 + p, c0, halo_col, edge_lane, policy);
  }

  // What f sees for output element j of the lane's vector.
  COALESCE_DEVICE COALESCE_FORCEINLINE neighbourhood<T, R> at(int j) const { return neighbourhood<T, R>(&rows[R][R + j], width); }
};

template <class P>
inline constexpr bool is_interior_v = std::is_same_v<P, interior_t>;

// Whether f takes one neighbourhood per input and returns what the output holds. Checked in
// device code: on the host, nvcc hides a device lambda's call operator.
template <class F, int R, class Out, class... Ts>
COALESCE_HOST_DEVICE constexpr bool stencil_callable() {
  constexpr bool callable = std::is_invocable_v<const F&, neighbourhood<Ts, R>...>;
  static_assert(callable,
                "coalesce::stencil: f cannot be called with one coalesce::neighbourhood<T, R> per input (in the "
                "order of coalesce::inputs); declare its parameters auto");
  if constexpr (callable) {
    constexpr bool converts = std::is_convertible_v<std::invoke_result_t<const F&, neighbourhood<Ts, R>...>, Out>;
    static_assert(converts, "coalesce::stencil: what f returns does not convert to the output's element type");
    return converts;
  }
  return false;
}

// The register window walk (see the top of stencil_window_kernel's launch): every input of the
// same element size, 16-byte aligned rows, R <= V.
template <int R, int V, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_windows(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                       const pitched_view<Out>& out, const F& f, unsigned strips,
                                                       unsigned long long tasks, bool vector_stores, std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const long long rows = (long long)out.rows(), cols = (long long)out.cols();
    const unsigned lane = threadIdx.x % 32;
    const unsigned long long warps = (unsigned long long)gridDim.x * (blockDim.x / 32);
    for (unsigned long long task = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; task < tasks; task += warps) {
      const long long strip_first = (long long)(task % strips) * 32 * V;
      const long long first = (long long)(task / strips) * stencil_band_rows;
      const long long last = first + stencil_band_rows < rows ? first + stencil_band_rows : rows;
      const long long c0 = strip_first + lane * V;
      const long long halo_col = lane == 0 ? strip_first - R : strip_first + 32 * V;
      cuda::std::tuple<input_window<Ts, R, V>...> windows;
      (cuda::std::get<I>(windows).start(cuda::std::get<I>(in), first, last, c0, halo_col, lane, policy), ...);
      for (long long i = first; i < last; ++i) {
        Out result[V];
#pragma unroll
        for (int j = 0; j < V; ++j) result[j] = static_cast<Out>(f(cuda::std::get<I>(windows).at(j)...));
        Out* row = out.row(std::size_t(i));
        bool whole = c0 + V <= cols && vector_stores;
        if constexpr (is_interior_v<Policy>)
          whole = whole && interior_contains(R, i, rows) && c0 >= R && c0 + V + R <= cols;
        if (whole) {
          vector_chunk<Out, V> v;
#pragma unroll
          for (int j = 0; j < V; ++j) v.value[j] = result[j];
          store_chunk(reinterpret_cast<vector_chunk<Out, V>*>(row + c0), v);
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) {
            bool inside = c0 + j < cols;
            if constexpr (is_interior_v<Policy>) inside = inside && interior_contains(R, i, rows) && interior_contains(R, c0 + j, cols);
            if (inside) row[c0 + j] = result[j];
          }
        }
        if (i + 1 < last) (cuda::std::get<I>(windows).advance(cuda::std::get<I>(in), i, last, c0, halo_col, lane, policy), ...);
      }
    }
  }
}

template <int R, int V, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(stencil_block_threads)
    stencil_window_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in, pitched_view<Out> out, F f,
                          unsigned strips, unsigned long long tasks, bool vector_stores) {
  walk_windows<R, V>(policy, in, out, f, strips, tasks, vector_stores, std::index_sequence_for<Ts...>{});
}

// The element walk, for what the window walk cannot take (elements of other sizes, rows not
// 16-byte aligned, a radius wider than a lane's vector): a thread per output, 128 x 4 threads per
// block, each neighbour read through the read-only path (nvcc drops the reads f never uses).
template <class T, int R>
struct gathered {
  T values[2 * R + 1][2 * R + 1];
  COALESCE_DEVICE COALESCE_FORCEINLINE neighbourhood<T, R> centre() const { return neighbourhood<T, R>(&values[R][R], 2 * R + 1); }
};

template <int R, class T, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void gather(gathered<T, R>& g, const pitched_view<const T>& in, long long r, long long c,
                                                 const Policy& policy) {
  auto& values = g.values;
  const long long rows = (long long)in.rows(), cols = (long long)in.cols();
#pragma unroll
  for (int dr = -R; dr <= R; ++dr) {
    const long long rr = boundary_index(policy, r + dr, rows);
    bool outside_row = false;
    if constexpr (!std::is_same_v<Policy, clamp_t> && !std::is_same_v<Policy, periodic_t> && !is_interior_v<Policy>) outside_row = rr < 0;
#pragma unroll
    for (int dc = -R; dc <= R; ++dc) {
      if constexpr (!std::is_same_v<Policy, clamp_t> && !std::is_same_v<Policy, periodic_t> && !is_interior_v<Policy>) {
        if (outside_row) {
          values[R + dr][R + dc] = static_cast<T>(policy.value);
          continue;
        }
      }
      values[R + dr][R + dc] = load_element(in.row(std::size_t(rr)), c + dc, cols, policy);
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_elements(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                        const pitched_view<Out>& out, const F& f, std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const long long rows = (long long)out.rows(), cols = (long long)out.cols();
    for (long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y; r < rows; r += (long long)gridDim.x * blockDim.y) {
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, r, rows)) continue;
      for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
        if constexpr (is_interior_v<Policy>)
          if (!interior_contains(R, c, cols)) continue;
        cuda::std::tuple<gathered<Ts, R>...> values;
        (gather<R>(cuda::std::get<I>(values), cuda::std::get<I>(in), r, c, policy), ...);
        out(std::size_t(r), std::size_t(c)) = static_cast<Out>(f(cuda::std::get<I>(values).centre()...));
      }
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void stencil_element_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in, pitched_view<Out> out, F f) {
  walk_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

template <class T>
bool rows_aligned(const pitched_view<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0 && v.pitch_bytes() % alignment == 0;
}

inline std::string shape_text(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// The elements of `a` and `b` overlap in memory (their spans of rows do).
template <class A, class B>
bool rows_overlap(const pitched_view<A>& a, const pitched_view<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto begin = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto end = [](const auto& v) {
    return reinterpret_cast<std::uintptr_t>(v.data()) + (v.rows() - 1) * v.pitch_bytes() + v.cols() * sizeof(*v.data());
  };
  return begin(a) < end(b) && begin(b) < end(a);
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in, pitched_view<Out> out,
                    const F& f, cudaStream_t stream) {
  constexpr const char* what = "coalesce::stencil";
  bool shapes_agree = true, overlap = false;
  std::string shapes;
  const auto check = [&](const auto& v) {
    shapes_agree = shapes_agree && v.rows() == out.rows() && v.cols() == out.cols();
    overlap = overlap || rows_overlap(v, out);
    shapes += shape_text(v.rows(), v.cols()) + ", ";
  };
  cuda::std::apply([&](const auto&... v) { (check(v), ...); }, in);
  if (!shapes_agree)
    throw std::invalid_argument(std::string(what) + ": the inputs are " + shapes + "the output " +
                                shape_text(out.rows(), out.cols()) + "; a stencil needs one shape for all");
  if (overlap)
    throw std::invalid_argument(std::string(what) +
                                ": an input overlaps the output, so neighbours would be read after they were written; "
                                "write into another matrix (swap the two each step)");
  if (out.empty()) return;
  if constexpr (is_interior_v<Policy>)
    if (out.rows() <= 2 * std::size_t(R) || out.cols() <= 2 * std::size_t(R)) return;  // no element is interior
  cuda::std::apply([&](const auto&... v) { (require_device_memory(v.data(), "coalesce::stencil (input)"), ...); }, in);
  require_device_memory(out.data(), "coalesce::stencil (output)");
  throw_if_earlier_error(what);

  using T0 = std::tuple_element_t<0, std::tuple<Ts...>>;
  constexpr bool same_size = ((sizeof(Ts) == sizeof(T0)) && ...);
  constexpr bool window_possible = same_size && is_access_width(sizeof(T0)) && std::size_t(R) <= 16 / sizeof(T0);
  if constexpr (window_possible) {
    constexpr int V = int(16 / sizeof(T0));
    bool aligned = true;
    cuda::std::apply([&](const auto&... v) { aligned = (rows_aligned(v, 16) && ...); }, in);
    if (aligned) {
      const std::size_t strips = (out.cols() + 32 * V - 1) / (32 * V);
      const std::size_t bands = (out.rows() + stencil_band_rows - 1) / stencil_band_rows;
      const unsigned long long tasks = (unsigned long long)(strips * bands);
      constexpr unsigned warps_per_block = stencil_block_threads / 32;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      stencil_window_kernel<R, V, Policy, Out, F, Ts...>
          <<<grid_for_all((tasks + warps_per_block - 1) / warps_per_block), stencil_block_threads, 0, stream>>>(
              policy, in, out, f, unsigned(strips), tasks, vector_stores);
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  const dim3 block(128, 4);
  const unsigned grid = one_wave_grid<stencil_element_kernel<R, Policy, Out, F, Ts...>>(block.x * block.y, (out.rows() + 3) / 4);
  stencil_element_kernel<R, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <class T>
inline constexpr bool is_device_pitched_view_v = false;
template <class T>
inline constexpr bool is_device_pitched_view_v<pitched_view<T, device_space>> = true;

template <class T>
struct stencil_output_of {  // refused by stencil's checks
  static constexpr bool known = false;
};
template <class T, class S>
struct stencil_output_of<pitched_view<T, S>> {
  static constexpr bool known = true;
  static constexpr bool is_container = false;
  static constexpr bool writable = !std::is_const_v<T>;
  static constexpr bool device = std::is_same_v<S, device_space>;
  static pitched_view<T, S> view(const pitched_view<T, S>& v) { return v; }
  static cudaStream_t stream(const pitched_view<T, S>&, cudaStream_t otherwise) { return otherwise; }
};
template <class T, class S, class P, class R>
struct stencil_output_of<pitched_matrix<T, S, P, R>> {
  static constexpr bool known = true;
  static constexpr bool is_container = true;
  static constexpr bool writable = true;
  static constexpr bool device = std::is_same_v<S, device_space>;
  static pitched_view<T, S> view(pitched_matrix<T, S, P, R>& m) { return m.view(); }
  static cudaStream_t stream(const pitched_matrix<T, S, P, R>& m, cudaStream_t) { return m.stream(); }
};

template <class... Views>
constexpr bool inputs_on_device(const stencil_inputs<Views...>*) {
  return (is_device_pitched_view_v<Views> && ...);
}

template <int R, class Policy, class Out, class F, class... Views>
void stencil_checked(const Policy& policy, const stencil_inputs<Views...>& in, Out& out, const F& f, const cudaStream_t* stream) {
  static_assert(is_boundary_policy_v<Policy>,
                "coalesce::stencil: the first argument must be a boundary policy: coalesce::clamp, coalesce::periodic, "
                "coalesce::interior or coalesce::constant(value)");
  static_assert(R >= 1 && R <= 8, "coalesce::stencil<R>: the radius R must be 1 to 8");
  using output = stencil_output_of<std::remove_const_t<Out>>;
  static_assert(output::known, "coalesce::stencil: the output must be a coalesce::pitched_view or pitched_matrix");
  constexpr bool on_device = inputs_on_device(static_cast<const stencil_inputs<Views...>*>(nullptr));
  static_assert(on_device,
                "coalesce::stencil: every input must be a pitched_view or pitched_matrix of device memory (a host_space "
                "one cannot be read by the GPU: copy it into a device matrix)");
  if constexpr (output::known && on_device) {
    constexpr bool writable = output::writable && !(std::is_const_v<Out> && output::is_container);
    static_assert(writable, "coalesce::stencil: the output is read-only (a pitched_view<const T> or a const matrix)");
    static_assert(output::device,
                  "coalesce::stencil: the output is in host_space, which the GPU cannot write; use a device matrix");
    if constexpr (writable && output::device && is_boundary_policy_v<Policy> && R >= 1 && R <= 8) {
      const cudaStream_t s = stream ? *stream : output::stream(out, in.has_stream ? in.stream : cudaStream_t{});
      launch_stencil<R>(policy, in.views, output::view(out), f, s);
    }
  }
}

template <class In>
auto as_stencil_inputs(const In& in) {
  return inputs(in);
}
template <class... Views>
const stencil_inputs<Views...>& as_stencil_inputs(const stencil_inputs<Views...>& in) {
  return in;
}

}  // namespace detail

// out(r, c) = f(n...) on the device for every element of `out`, asynchronously: n is the radius-R
// neighbourhood of each input around (r, c), reads beyond the edge following `policy`
// (coalesce::clamp, periodic, constant(v), interior). `in` is a pitched_view or pitched_matrix of
// device memory, or several of one shape as coalesce::inputs(u, v) (f then takes one
// neighbourhood per input); `out` a pitched_view or pitched_matrix of the same shape, of any
// element type f's result converts to. Runs on `stream`; without one, on the output matrix's
// stream, else the first input matrix's, else stream 0.
//
// Each warp walks a 512-byte strip of columns down a band of rows, holding 2R + 1 rows of
// 16-byte vectors in registers: every row is loaded once, as one 16-byte read-only access per
// lane, horizontal neighbours come from the adjacent lanes by shuffles, and each output row is
// stored as one 16-byte vector per lane. Elements that are not 1, 2, 4 or 8 bytes (or inputs of
// different sizes, rows not 16-byte aligned, R wider than a lane's vector) take a walk of one
// element per thread, correct and coalesced but slower.
//
// Throws std::invalid_argument if the shapes differ or an input overlaps the output (in place is
// not possible: neighbours would be read after being written), coalesce::cuda_error if the
// launch fails.
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f) {
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, nullptr);
}
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f, cudaStream_t stream) {
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, &stream);
}
// The same with coalesce::clamp.
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f) {
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, nullptr);
}
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f, cudaStream_t stream) {
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, &stream);
}

}  // namespace coalesce

#endif  // __CUDACC__
