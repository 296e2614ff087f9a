// coalesce::detail: for_each, for_each_index and transform handed a device container rather
// than a view - the overloads that bring the container's stream to the kernel. Included by
// <coalesce/algorithm.hpp> after the view overloads they call; users never include this header.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/layout_vector.hpp>
#include <coalesce/soa.hpp>

#include <cuda_runtime_api.h>

#include <type_traits>

namespace coalesce {

// --- containers ------------------------------------------------------------------------------
//
// for_each, transform and for_each_index also take a soa_vector or pitched_matrix of device
// memory, and then run on its stream (container.stream(), its memory resource's): after the
// copies and algorithms already queued for it, before its destructor's stream-ordered release,
// and into a CUDA graph when that stream is being captured. A view carries no stream; these
// overloads are how the container's stream reaches the kernel. transform handed two containers
// runs on the output's stream: when the input's stream differs, the caller orders the input's
// pending work before the call (cudaEventRecord on its stream, cudaStreamWaitEvent on the
// output's). Each overload also takes an explicit stream, which the caller then orders against
// the containers' own streams in the same way. A host_space container does not compile: the GPU
// cannot read it.

namespace detail {

template <class T, class S, class R>
struct is_container<soa_vector<T, S, R>> : std::true_type {};
template <class T, class S, class P, class R>
struct is_container<pitched_matrix<T, S, P, R>> : std::true_type {};
template <class T, class L, class S, class R>
struct is_container<layout_vector<T, L, S, R>> : std::true_type {};
template <class T, class S, class P, class R>
struct is_container<pitched_volume<T, S, P, R>> : std::true_type {};

// Whether an algorithm's argument is device memory as far as a container can say (the view
// overloads check views).
template <class Argument>
constexpr bool container_on_device() {
  if constexpr (is_container<Argument>::value) return std::is_same_v<typename Argument::memory_space, device_space>;
  else return true;
}

// A container's view (read-only for a const container), or a view as it is.
template <class Argument>
auto view_of(Argument& argument) {
  if constexpr (is_container<std::remove_const_t<Argument>>::value) return argument.view();
  else return argument;
}

template <class Container, class F>
void for_each_in_container(Container& container, const F& f, cudaStream_t stream) {
  constexpr bool device = container_on_device<Container>();
  static_assert(device, "coalesce::for_each: the container is in host_space, whose memory the GPU cannot read; copy it "
                        "into a device container (assign_async or copy_from_async from a pinned one) and pass that");
  if constexpr (device) coalesce::for_each(container.view(), f, stream);
}

template <class Container, class F, class... Shape>
void for_each_index_in_container(Container& container, const F& f, cudaStream_t stream, Shape... shape) {
  constexpr bool device = container_on_device<Container>();
  static_assert(device,
                "coalesce::for_each_index: the container is in host_space, whose memory the GPU cannot read; copy it "
                "into a device container (assign_async or copy_from_async from a pinned one) and pass that");
  if constexpr (device) coalesce::for_each_index(container.view(), f, shape..., stream);
}

template <class In, class Out, class F>
void transform_with_containers(const In& in, Out& out, const F& f, cudaStream_t stream) {
  constexpr bool device = container_on_device<In>() && container_on_device<Out>();
  static_assert(device,
                "coalesce::transform: a container is in host_space, whose memory the GPU cannot read; copy it into "
                "a device container (assign_async or copy_from_async from a pinned one) and pass that");
  if constexpr (device) coalesce::transform(view_of(in), view_of(out), f, stream);
}

template <class Container, class U>
void fill_container(Container& container, const U& value) {
  constexpr bool device = container_on_device<Container>();
  static_assert(device, "coalesce::fill: the container is in host_space, whose memory the GPU cannot write");
  if constexpr (device) coalesce::fill(container.view(), value, container.stream());
}

}  // namespace detail

// for_each(view, f) over a device soa_vector, on the vector's stream (or on `stream`).
template <class T, class Space, class Resource, class F>
void for_each(soa_vector<T, Space, Resource>& v, F f) {
  detail::for_each_in_container(v, f, v.stream());
}
template <class T, class Space, class Resource, class F>
void for_each(soa_vector<T, Space, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_in_container(v, f, stream);
}

// for_each, for_each_index, fill and zero over a device coalesce::vector of records or tiles
// (layout_vector), on its stream (or on `stream`).
template <class T, class L, class Space, class Resource, class F>
void for_each(layout_vector<T, L, Space, Resource>& v, F f) {
  detail::for_each_in_container(v, f, v.stream());
}
template <class T, class L, class Space, class Resource, class F>
void for_each(layout_vector<T, L, Space, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_in_container(v, f, stream);
}
template <class T, class L, class Space, class Resource, class F>
void for_each_index(layout_vector<T, L, Space, Resource>& v, F f) {
  detail::for_each_index_in_container(v, f, v.stream());
}
template <class T, class L, class Space, class Resource, class F>
void for_each_index(layout_vector<T, L, Space, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_index_in_container(v, f, stream);
}
template <class T, class L, class Space, class Resource, class U>
void fill(layout_vector<T, L, Space, Resource>& v, const U& value) {
  detail::fill_container(v, value);
}
template <class T, class L, class Space, class Resource>
void zero(layout_vector<T, L, Space, Resource>& v) {
  detail::fill_container(v, detail::zero_bytes<T>());
}

// for_each(view, f) over a device pitched_matrix, on the matrix's stream (or on `stream`).
template <class T, class Space, class Policy, class Resource, class F>
void for_each(pitched_matrix<T, Space, Policy, Resource>& m, F f) {
  detail::for_each_in_container(m, f, m.stream());
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each(pitched_matrix<T, Space, Policy, Resource>& m, F f, cudaStream_t stream) {
  detail::for_each_in_container(m, f, stream);
}

// fill(view, value) over a device soa_vector, pitched_matrix or pitched_volume, on its stream:
// asynchronous and capturable, as for a view.
template <class T, class Space, class Resource, class U>
void fill(soa_vector<T, Space, Resource>& v, const U& value) {
  detail::fill_container(v, value);
}
template <class T, class Space, class Policy, class Resource, class U>
void fill(pitched_matrix<T, Space, Policy, Resource>& m, const U& value) {
  detail::fill_container(m, value);
}
template <class T, class Space, class Policy, class Resource, class U>
void fill(pitched_volume<T, Space, Policy, Resource>& m, const U& value) {
  detail::fill_container(m, value);
}

// zero(view) over a device soa_vector, pitched_matrix or pitched_volume, on its stream.
template <class T, class Space, class Resource>
void zero(soa_vector<T, Space, Resource>& v) {
  detail::fill_container(v, detail::zero_bytes<T>());
}
template <class T, class Space, class Policy, class Resource>
void zero(pitched_matrix<T, Space, Policy, Resource>& m) {
  detail::fill_container(m, detail::zero_bytes<T>());
}
template <class T, class Space, class Policy, class Resource>
void zero(pitched_volume<T, Space, Policy, Resource>& m) {
  detail::fill_container(m, detail::zero_bytes<T>());
}

// for_each_index(view, f(i)) over a device soa_vector, on the vector's stream (or on `stream`).
template <class T, class Space, class Resource, class F>
void for_each_index(soa_vector<T, Space, Resource>& v, F f) {
  detail::for_each_index_in_container(v, f, v.stream());
}
template <class T, class Space, class Resource, class F>
void for_each_index(soa_vector<T, Space, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_index_in_container(v, f, stream);
}

// for_each_index(view, f(r, c)) over a device pitched_matrix, on the matrix's stream (or on
// `stream`), with coalesce's row walk or `shape`.
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_matrix<T, Space, Policy, Resource>& m, F f) {
  detail::for_each_index_in_container(m, f, m.stream());
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_matrix<T, Space, Policy, Resource>& m, F f, cudaStream_t stream) {
  detail::for_each_index_in_container(m, f, stream);
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_matrix<T, Space, Policy, Resource>& m, F f, row_walk shape) {
  detail::for_each_index_in_container(m, f, m.stream(), shape);
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_matrix<T, Space, Policy, Resource>& m, F f, row_walk shape, cudaStream_t stream) {
  detail::for_each_index_in_container(m, f, stream, shape);
}

// transform(in_view, out_view, f) with a device container on either side or both: a soa_vector
// or pitched_matrix input, a pitched_matrix output (or any view the view overload takes), on the
// container's stream - the output's when both are containers - or on `stream`.
template <class T, class S, class R, class U, class S2, class P2, class R2, class F>
void transform(const soa_vector<T, S, R>& in, pitched_matrix<U, S2, P2, R2>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}
template <class T, class S, class R, class U, class S2, class P2, class R2, class F>
void transform(const soa_vector<T, S, R>& in, pitched_matrix<U, S2, P2, R2>& out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class T, class S, class P, class R, class U, class S2, class P2, class R2, class F>
void transform(const pitched_matrix<T, S, P, R>& in, pitched_matrix<U, S2, P2, R2>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}
template <class T, class S, class P, class R, class U, class S2, class P2, class R2, class F>
void transform(const pitched_matrix<T, S, P, R>& in, pitched_matrix<U, S2, P2, R2>& out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class T, class S, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const soa_vector<T, S, R>& in, Out out, F f) {
  detail::transform_with_containers(in, out, f, in.stream());
}
template <class T, class S, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const soa_vector<T, S, R>& in, Out out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class T, class S, class P, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const pitched_matrix<T, S, P, R>& in, Out out, F f) {
  detail::transform_with_containers(in, out, f, in.stream());
}
template <class T, class S, class P, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const pitched_matrix<T, S, P, R>& in, Out out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class In, class U, class S, class P, class R, class F>
void transform(In in, pitched_matrix<U, S, P, R>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}
template <class In, class U, class S, class P, class R, class F>
void transform(In in, pitched_matrix<U, S, P, R>& out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}

// transform with a device layout_vector as the input, on its stream (or on `stream`); into a
// pitched_matrix, on the matrix's.
template <class T, class L, class S, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const layout_vector<T, L, S, R>& in, Out out, F f) {
  detail::transform_with_containers(in, out, f, in.stream());
}
template <class T, class L, class S, class R, class Out, class F, detail::not_a_container<Out> = 0>
void transform(const layout_vector<T, L, S, R>& in, Out out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class T, class L, class S, class R, class U, class S2, class P2, class R2, class F>
void transform(const layout_vector<T, L, S, R>& in, pitched_matrix<U, S2, P2, R2>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}

// transform into a device soa_vector or coalesce::vector of any layout (taken by reference: the
// output is the container itself), from a view, a container or coalesce::inputs(...), on the
// output's stream (or on `stream`). The output keeps its size; a different input size throws.
template <class In, class U, class S, class R, class F>
void transform(const In& in, soa_vector<U, S, R>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}
template <class In, class U, class S, class R, class F>
void transform(const In& in, soa_vector<U, S, R>& out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}
template <class In, class U, class L, class S, class R, class F>
void transform(const In& in, layout_vector<U, L, S, R>& out, F f) {
  detail::transform_with_containers(in, out, f, out.stream());
}
template <class In, class U, class L, class S, class R, class F>
void transform(const In& in, layout_vector<U, L, S, R>& out, F f, cudaStream_t stream) {
  detail::transform_with_containers(in, out, f, stream);
}

// The same for a device pitched_volume, on its stream (or on `stream`); for_each over one.
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_volume<T, Space, Policy, Resource>& v, F f) {
  detail::for_each_index_in_container(v, f, v.stream());
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each_index(pitched_volume<T, Space, Policy, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_index_in_container(v, f, stream);
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each(pitched_volume<T, Space, Policy, Resource>& v, F f) {
  detail::for_each_in_container(v, f, v.stream());
}
template <class T, class Space, class Policy, class Resource, class F>
void for_each(pitched_volume<T, Space, Policy, Resource>& v, F f, cudaStream_t stream) {
  detail::for_each_in_container(v, f, stream);
}

}  // namespace coalesce
