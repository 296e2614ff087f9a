// coalesce::detail: what every stencil call checks (one shape, no overlap with the output, device
// memory, a shape with an interior under interior), and the launch of the walk that suits the
// inputs: band or element walk of a matrix, 2.5D or element walk of a volume, line or element walk
// of a span. Users never include this header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/device_memory.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/stencil_line_walk.hpp>
#include <coalesce/detail/stencil_matrix_walk.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/stencil_volume_walk.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/error.hpp>
#include <coalesce/inputs.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/span>
#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce {

// Several inputs of one shape for one stencil (coalesce::inputs, <coalesce/inputs.hpp>): f then
// takes one neighbourhood per input, in order.
template <class... Views>
using stencil_inputs = input_list<Views...>;

namespace detail {

template <class T>
bool rows_aligned(const pitched_view<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0 && v.pitch_bytes() % alignment == 0;
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

template <class T>
bool rows_aligned(const pitched_volume_view<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0 && v.pitch_bytes() % alignment == 0 &&
         v.slice_pitch_bytes() % alignment == 0;
}

template <class A, class B>
bool rows_overlap(const pitched_volume_view<A>& a, const pitched_volume_view<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto begin = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto end = [](const auto& v) {
    return reinterpret_cast<std::uintptr_t>(v.data()) + (v.depth() - 1) * v.slice_pitch_bytes() +
           (v.height() - 1) * v.pitch_bytes() + v.width() * sizeof(*v.data());
  };
  return begin(a) < end(b) && begin(b) < end(a);
}

// A line (a span) as the checks see it: one row.
template <class T>
bool rows_aligned(const cuda::std::span<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0;
}
template <class A, class B>
bool rows_overlap(const cuda::std::span<A>& a, const cuda::std::span<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto begin = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto end = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data() + v.size()); };
  return begin(a) < end(b) && begin(b) < end(a);
}
template <class T>
std::array<std::size_t, 1> extents_of(const cuda::std::span<T>& v) {
  return {std::size_t(v.size())};
}
template <class T>
std::array<std::size_t, 2> extents_of(const pitched_view<T>& v) {
  return {v.rows(), v.cols()};
}
template <class T>
std::array<std::size_t, 3> extents_of(const pitched_volume_view<T>& v) {
  return {v.depth(), v.height(), v.width()};
}
template <std::size_t N>
std::string shape_text(const std::array<std::size_t, N>& extents) {
  std::string text = std::to_string(extents[0]);
  for (std::size_t i = 1; i < N; ++i) text += " x " + std::to_string(extents[i]);
  return text;
}

// The checks every stencil launch makes, for matrices and volumes alike: one shape for all, no
// input overlapping the output, device memory, no earlier error. False when there is nothing to
// compute (an empty output; under interior, no element whose neighbourhood is inside).
template <int R, class Policy, class Inputs, class OutView>
bool stencil_operands_ready(const Inputs& in, const OutView& out) {
  constexpr const char* what = "coalesce::stencil";
  const auto shape = extents_of(out);
  bool shapes_agree = true, overlap = false;
  std::string shapes;
  const auto check = [&](const auto& v) {
    shapes_agree = shapes_agree && extents_of(v) == shape;
    overlap = overlap || rows_overlap(v, out);
    shapes += shape_text(extents_of(v)) + ", ";
  };
  cuda::std::apply([&](const auto&... v) { (check(v), ...); }, in);
  if (!shapes_agree)
    throw std::invalid_argument(std::string(what) + ": the inputs are " + shapes + "the output " + shape_text(shape) +
                                "; a stencil needs one shape for all");
  if (overlap)
    throw std::invalid_argument(std::string(what) +
                                ": an input overlaps the output, so neighbours would be read after they were written; "
                                "write into another matrix or volume (swap the two each step)");
  if (out.empty()) return false;
  if constexpr (is_interior_v<Policy>) {
    // No element is interior: the call would write nothing at all, which is never what a caller
    // of a stencil means (a 1 x n matrix as a 1D array, a volume one plane thick).
    for (const std::size_t extent : shape)
      if (extent <= 2 * std::size_t(R))
        throw std::invalid_argument(std::string(what) + "<" + std::to_string(R) +
                                    "> under coalesce::interior: the output is " + shape_text(shape) +
                                    " elements, and no element has its whole radius-" + std::to_string(R) +
                                    " neighbourhood inside (that takes more than " + std::to_string(2 * R) +
                                    " along every axis), so nothing would be written; use coalesce::clamp, periodic or "
                                    "constant(v) on a shape this small");
  }
  cuda::std::apply([&](const auto&... v) { (require_device_memory(v.data(), "coalesce::stencil (input)"), ...); }, in);
  require_device_memory(out.data(), "coalesce::stencil (output)");
  throw_if_earlier_error(what);
  return true;
}

// The vector (elements a thread loads and stores as one access) of the band and 2.5D walks, or 0
// where they cannot take the inputs: every input of one element size of 1, 2, 4 or 8 bytes, and a
// radius no wider than the vector.
template <int R, class... Ts>
constexpr int vector_walk_width() {
  using T0 = std::tuple_element_t<0, std::tuple<Ts...>>;
  constexpr bool same_size = ((sizeof(Ts) == sizeof(T0)) && ...);
  return same_size && is_access_width(sizeof(T0)) && std::size_t(R) <= 16 / sizeof(T0) ? int(16 / sizeof(T0)) : 0;
}

// Every input's rows start on 16-byte boundaries.
template <class Inputs>
bool inputs_aligned(const Inputs& in) {
  bool aligned = true;
  cuda::std::apply([&](const auto&... v) { aligned = (rows_aligned(v, 16) && ...); }, in);
  return aligned;
}

// Whether positions can be 32-bit: each count, and a step of a grid's threads past it, below 2^31.
inline bool positions_fit_int(std::initializer_list<std::size_t> counts) {
  constexpr std::size_t limit = std::size_t(0x7fffffff) - std::size_t(0x7fffffff) / 4;
  for (const std::size_t count : counts)
    if (count >= limit) return false;
  return true;
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in, pitched_view<Out> out,
                    const F& f, cudaStream_t stream) {
  if (!stencil_operands_ready<R, Policy>(in, out)) return;
  constexpr int V = vector_walk_width<R, Ts...>();
  if constexpr (V > 0) {
    if (inputs_aligned(in)) {
      using shape = band_shape<R, V, Ts...>;
      constexpr int K = shape::rows_per_thread;
      const std::size_t vectors_per_row = (out.cols() + V - 1) / V;
      const std::size_t bands = (out.rows() + K - 1) / K;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      const dim3 block(shape::block_x, shape::block_y);
      // (x: a row of 2^36 vectors, the most that x could not cover, is no matrix in device memory.)
      const dim3 grid(unsigned((vectors_per_row + block.x - 1) / block.x),
                      unsigned(std::min<std::size_t>((bands + block.y - 1) / block.y, 65535)));
      const auto launch = [&](auto index) {
        using Index = decltype(index);
        stencil_band_kernel<R, V, K, Index, Policy, Out, F, Ts...>
            <<<grid, block, 0, stream>>>(policy, in, out, f, Index(vectors_per_row), vector_stores);
      };
      if (positions_fit_int({vectors_per_row, out.rows() + K + R, out.cols() + V + R})) launch(int{});
      else launch((long long){});
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  const dim3 block(128, 4);
  const unsigned grid =
      one_wave_grid<stencil_element_kernel<R, Policy, Out, F, Ts...>>(block.x * block.y, (out.rows() + 3) / 4);
  stencil_element_kernel<R, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
                    pitched_volume_view<Out> out, const F& f, cudaStream_t stream) {
  if (!stencil_operands_ready<R, Policy>(in, out)) return;
  constexpr int V = vector_walk_width<R, Ts...>();
  if constexpr (V > 0) {
    if (inputs_aligned(in)) {
      using shape = queue_shape;
      constexpr int KY = shape::rows_per_thread;
      const std::size_t vectors_per_row = (out.width() + V - 1) / V;
      const std::size_t row_groups = (out.height() + KY - 1) / KY;
      const std::size_t chunks = (out.depth() + shape::planes_per_block - 1) / shape::planes_per_block;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      const dim3 block(shape::block_x, shape::block_y);
      const dim3 grid(unsigned((vectors_per_row + block.x - 1) / block.x),
                      unsigned(std::min<std::size_t>((row_groups + block.y - 1) / block.y, 65535)),
                      unsigned(std::min<std::size_t>(chunks, 65535)));
      const auto launch = [&](auto index) {
        using Index = decltype(index);
        stencil_queue_kernel<R, V, KY, Index, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(
            policy, in, out, f, Index(vectors_per_row), vector_stores, Index(shape::planes_per_block));
      };
      if (positions_fit_int(
              {vectors_per_row, out.depth() + shape::planes_per_block + R, out.height() + KY + R, out.width() + V + R}))
        launch(int{});
      else launch((long long){});
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  const dim3 block(128, 4);
  const unsigned grid = one_wave_grid<stencil_volume_element_kernel<R, Policy, Out, F, Ts...>>(
      block.x * block.y, (out.depth() * out.height() + 3) / 4);
  stencil_volume_element_kernel<R, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<cuda::std::span<const Ts>...>& in,
                    cuda::std::span<Out> out, const F& f, cudaStream_t stream) {
  if (!stencil_operands_ready<R, Policy>(in, out)) return;
  constexpr int V = vector_walk_width<R, Ts...>();
  constexpr unsigned threads = line_block_threads;
  if constexpr (V > 0) {
    if (inputs_aligned(in)) {
      const std::size_t vectors = (out.size() + V - 1) / V;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      const auto launch = [&](auto index) {
        using Index = decltype(index);
        stencil_line_kernel<R, V, Index, Policy, Out, F, Ts...>
            <<<grid_for_all((vectors + threads - 1) / threads), threads, 0, stream>>>(policy, in, out, f,
                                                                                      vector_stores);
      };
      if (positions_fit_int({out.size() + V + R})) launch(int{});
      else launch((long long){});
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  stencil_line_element_kernel<R, Policy, Out, F, Ts...>
      <<<grid_for_all((out.size() + threads - 1) / threads), threads, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <class T>
inline constexpr bool is_device_view_v = false;
template <class T>
inline constexpr bool is_device_view_v<pitched_view<T, device_space>> = true;

template <class T>
struct stencil_output_of {  // refused by stencil's checks
  static constexpr bool known = false;
};
template <class T>
inline constexpr bool is_device_view_v<pitched_volume_view<T, device_space>> = true;
template <class T>
inline constexpr bool is_device_view_v<cuda::std::span<T>> = true;  // checked at run time

// Whether a view's memory is known to be the device's: a span's is checked at run time.
template <class View>
struct memory_space_of {
  static constexpr bool device = std::is_same_v<typename View::memory_space, device_space>;
};
template <class T>
struct memory_space_of<cuda::std::span<T>> {
  static constexpr bool device = true;
};

// What stencil needs of its output, for a view and for a container (the container brings its
// stream), of a matrix or a volume.
template <class View, int Rank>
struct view_output {
  static constexpr bool known = true;
  static constexpr bool is_container = false;
  static constexpr bool writable = !std::is_const_v<typename View::element_type>;
  static constexpr bool device = memory_space_of<View>::device;
  static constexpr int rank = Rank;
  static View view(const View& v) { return v; }
  static cudaStream_t stream(const View&, cudaStream_t otherwise) { return otherwise; }
};
template <class Container, class View, int Rank>
struct container_output {
  static constexpr bool known = true;
  static constexpr bool is_container = true;
  static constexpr bool writable = true;
  static constexpr bool device = memory_space_of<View>::device;
  static constexpr int rank = Rank;
  static View view(Container& c) { return c.view(); }
  static cudaStream_t stream(const Container& c, cudaStream_t) { return c.stream(); }
};
template <class T>
struct stencil_output_of<cuda::std::span<T>> : view_output<cuda::std::span<T>, 1> {};
template <class T, class S>
struct stencil_output_of<pitched_view<T, S>> : view_output<pitched_view<T, S>, 2> {};
template <class T, class S, class P, class R>
struct stencil_output_of<pitched_matrix<T, S, P, R>>
    : container_output<pitched_matrix<T, S, P, R>, pitched_view<T, S>, 2> {};
template <class T, class S>
struct stencil_output_of<pitched_volume_view<T, S>> : view_output<pitched_volume_view<T, S>, 3> {};
template <class T, class S, class P, class R>
struct stencil_output_of<pitched_volume<T, S, P, R>>
    : container_output<pitched_volume<T, S, P, R>, pitched_volume_view<T, S>, 3> {};

template <class... Views>
constexpr bool inputs_on_device(const stencil_inputs<Views...>*) {
  return (is_device_view_v<Views> && ...);
}

template <class T>
inline constexpr int rank_of_v = 2;
template <class T, class S>
inline constexpr int rank_of_v<pitched_volume_view<T, S>> = 3;
template <class T>
inline constexpr int rank_of_v<cuda::std::span<T>> = 1;

template <int Rank, class... Views>
constexpr bool inputs_of_rank(const stencil_inputs<Views...>*) {
  return ((rank_of_v<Views> == Rank) && ...);
}

template <std::size_t... I, class... Views>
cuda::std::tuple<Views...> as_tuple(const value_pack_of<std::index_sequence<I...>, Views...>& views) {
  return cuda::std::tuple<Views...>(slot<I>(views)...);
}

template <int R, class Policy, class Out, class F, class... Views>
void stencil_checked(const Policy& policy, const stencil_inputs<Views...>& in, Out& out, const F& f,
                     const cudaStream_t* stream) {
  static_assert(is_boundary_policy_v<Policy>,
                "coalesce::stencil: the first argument must be a boundary policy: coalesce::clamp, coalesce::periodic, "
                "coalesce::interior or coalesce::constant(value)");
  static_assert(R >= 1 && R <= 8, "coalesce::stencil<R>: the radius R must be 1 to 8");
  using output = stencil_output_of<std::remove_const_t<Out>>;
  static_assert(
      output::known,
      "coalesce::stencil: the output must be a coalesce::pitched_view, pitched_matrix, pitched_volume_view or "
      "pitched_volume, or a cuda::std::span for a stencil along a line");
  constexpr bool on_device = inputs_on_device(static_cast<const stencil_inputs<Views...>*>(nullptr));
  static_assert(
      on_device,
      "coalesce::stencil: every input must be a pitched_view, pitched_matrix, pitched_volume_view or "
      "pitched_volume of device memory (a host_space one cannot be read by the GPU: copy it into a device one), "
      "or a cuda::std::span of device memory for a stencil along a line");
  if constexpr (output::known && on_device) {
    constexpr bool same_rank = inputs_of_rank<output::rank>(static_cast<const stencil_inputs<Views...>*>(nullptr));
    static_assert(
        same_rank,
        "coalesce::stencil: the inputs and the output must all be matrices (pitched_view, pitched_matrix), "
        "all volumes (pitched_volume_view, pitched_volume) or all lines (cuda::std::span; a soa_view's column "
        "is coalesce::column_span<&T::x>(view))");
    constexpr bool writable = output::writable && !(std::is_const_v<Out> && output::is_container);
    static_assert(writable, "coalesce::stencil: the output is read-only (a view of const T or a const container)");
    static_assert(output::device,
                  "coalesce::stencil: the output is in host_space, which the GPU cannot write; use a device matrix");
    if constexpr (same_rank && writable && output::device && is_boundary_policy_v<Policy> && R >= 1 && R <= 8) {
      const cudaStream_t s = stream ? *stream : output::stream(out, in.has_stream ? in.stream : cudaStream_t{});
      launch_stencil<R>(policy, as_tuple(in.views), output::view(out), f, s);
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
}  // namespace coalesce
