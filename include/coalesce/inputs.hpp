// coalesce: inputs(a, b, ...), several inputs of one shape for one algorithm. f then takes one
// argument per input, in order:
//
//   coalesce::transform(coalesce::inputs(a, b), c, [] __device__(double a, double b) { return a + b; });
//   coalesce::transform_reduce(coalesce::inputs(a, b), [] __device__(double a, double b) { return a * b; }, 0.0, cuda::std::plus<>{});
//   coalesce::stencil<1>(coalesce::inputs(u, v), out, [] __device__(auto u, auto v) { return u(0, 0) * v(1, 0); });
//
// Each input is read as a view of const elements: a cuda::std::span, a soa_view, a pitched_view
// or a pitched_volume_view, or a container (soa_vector, pitched_matrix, pitched_volume), which is
// read through its const view and brings its stream. Host-capable: the list is made on the host.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/value_pack.hpp>
#include <coalesce/detail/view_declarations.hpp>  // pitched_view, pitched_matrix, volumes and cuda::std::span, declared
#include <coalesce/soa.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

namespace coalesce {

/// The views made by coalesce::inputs, in order (detail::slot<I>(views) is input I), with the
/// stream of the first container among them (`has_stream` says whether there was one).
template <class... Views>
struct input_list {
  detail::value_pack<Views...> views;  ///< the inputs' views, in the order given
  cudaStream_t stream = 0;  ///< the first container's stream, if has_stream
  bool has_stream = false;  ///< whether one of the inputs was a container

  static constexpr std::size_t size() noexcept { return sizeof...(Views); }  ///< the number of inputs
};

namespace detail {

// What inputs() keeps of an argument: a view as a view of const elements, a container as its
// const view (and its stream). Anything else is kept as it is, for the algorithm's own check
// to refuse with its message.
template <class T>
struct input_of {
  using type = T;
  static type view(const T& v) { return v; }
  static constexpr bool is_container = false;
};
template <class View, class ConstView>
struct view_input {
  using type = ConstView;
  static type view(const View& v) { return v; }
  static constexpr bool is_container = false;
};
template <class Container, class ConstView>
struct container_input {
  using type = ConstView;
  static type view(const Container& c) { return c.const_view(); }
  static constexpr bool is_container = true;
};
template <class T, std::size_t Extent>
struct input_of<cuda::std::span<T, Extent>> : view_input<cuda::std::span<T, Extent>, cuda::std::span<const T, Extent>> {
};
template <class T, class S>
struct input_of<soa_view<T, S>> : view_input<soa_view<T, S>, soa_view<const T, S>> {};
template <class T, class S, class R>
struct input_of<soa_vector<T, S, R>> : container_input<soa_vector<T, S, R>, soa_view<const T, S>> {};
template <class T, class S>
struct input_of<pitched_view<T, S>> : view_input<pitched_view<T, S>, pitched_view<const T, S>> {};
template <class T, class S, class P, class R>
struct input_of<pitched_matrix<T, S, P, R>> : container_input<pitched_matrix<T, S, P, R>, pitched_view<const T, S>> {};
template <class T, class S>
struct input_of<pitched_volume_view<T, S>> : view_input<pitched_volume_view<T, S>, pitched_volume_view<const T, S>> {};
template <class T, class S, class P, class R>
struct input_of<pitched_volume<T, S, P, R>>
    : container_input<pitched_volume<T, S, P, R>, pitched_volume_view<const T, S>> {};

template <class T>
inline constexpr bool is_input_list_v = false;
template <class... Views>
inline constexpr bool is_input_list_v<input_list<Views...>> = true;

}  // namespace detail

/// The inputs of an algorithm with several: views or containers of one shape, each read as const
/// (see the top of this header). Shapes are checked by the algorithm, which throws
/// std::invalid_argument naming them when they differ.
template <class... Inputs>
input_list<typename detail::input_of<Inputs>::type...> inputs(const Inputs&... in) {
  static_assert(sizeof...(Inputs) >= 1, "coalesce::inputs: name at least one input");
  input_list<typename detail::input_of<Inputs>::type...> list{detail::make_pack(detail::input_of<Inputs>::view(in)...)};
  const auto first_container = [&](const auto& input) {
    using I = std::decay_t<decltype(input)>;
    if constexpr (detail::input_of<I>::is_container) {
      if (!list.has_stream) {
        list.stream = input.stream();
        list.has_stream = true;
      }
    }
  };
  (first_container(in), ...);
  return list;
}

}  // namespace coalesce
