// coalesce::detail: the stencil walk of a line (a cuda::std::span, a column of a soa_view): a
// thread per vector of V = 16 / sizeof(T) outputs (4 floats), loading the 16-byte vector over
// its outputs and the R elements on either side through the read-only path (the side elements
// are the neighbouring threads' vectors: L1 hits, not DRAM traffic), and storing its outputs as
// one vector. Elements of other sizes, inputs not 16-byte aligned, or a radius wider than the
// vector take a walk of one element per thread. Users never include this header;
// <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/neighbourhood.hpp>

#include <cuda/std/span>
#include <cuda/std/tuple>

#include <cstddef>
#include <utility>

namespace coalesce::detail {

inline constexpr unsigned line_block_threads = 256;

// The V + 2R input elements around a thread's V outputs at c0 .. c0 + V - 1.
template <class T, int R, int V>
struct input_line {
  T values[V + 2 * R];  // values[R + j]: the input at c0 + j

  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(const cuda::std::span<const T>& in, Index c0, bool whole,
                                                 const Policy& policy) {
    load_line<T, R, V>(values, in.data(), c0, Index(in.size()), whole, policy);
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE line_neighbourhood<T, R> at(int j) const {
    return line_neighbourhood<T, R>(&values[R + j]);
  }
};

template <class F, int R, class Out, class... Ts>
COALESCE_HOST_DEVICE constexpr bool line_stencil_callable() {
  return stencil_callable_with<line_neighbourhood, F, R, Out, Ts...>();
}

template <int R, int V, class Index, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_line(const Policy& policy,
                                                    const cuda::std::tuple<cuda::std::span<const Ts>...>& in,
                                                    const cuda::std::span<Out>& out, const F& f, bool vector_stores,
                                                    std::index_sequence<I...>) {
  if constexpr (line_stencil_callable<F, R, Out, Ts...>()) {
    const Index n = Index(out.size());
    const Index vectors = (n + V - 1) / V;
    const Index step = Index(gridDim.x) * Index(blockDim.x);
    for (Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x); v < vectors; v += step) {
      const Index c0 = v * V;
      if constexpr (is_interior_v<Policy>)
        if (c0 + V <= Index(R) || c0 + Index(R) >= n) continue;  // no interior output in the vector
      const bool whole_vector = c0 + V <= n;
      cuda::std::tuple<input_line<Ts, R, V>...> lines;
      (cuda::std::get<I>(lines).load(cuda::std::get<I>(in), c0, whole_vector, policy), ...);
      bool whole = whole_vector && vector_stores;
      if constexpr (is_interior_v<Policy>) whole = whole && c0 >= R && c0 + V + R <= n;
      store_outputs<R, V, Policy>(out.data(), c0, n, whole,
                                  [&](int j) { return static_cast<Out>(f(cuda::std::get<I>(lines).at(j)...)); });
    }
  }
}

template <int R, int V, class Index, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(line_block_threads)
    stencil_line_kernel(Policy policy, cuda::std::tuple<cuda::std::span<const Ts>...> in, cuda::std::span<Out> out, F f,
                        bool vector_stores) {
  walk_line<R, V, Index>(policy, in, out, f, vector_stores, std::index_sequence_for<Ts...>{});
}

// One element per thread: its 2R + 1 neighbours each read through the read-only path.
template <int R, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_line_elements(const Policy& policy,
                                                             const cuda::std::tuple<cuda::std::span<const Ts>...>& in,
                                                             const cuda::std::span<Out>& out, const F& f,
                                                             std::index_sequence<I...>) {
  if constexpr (line_stencil_callable<F, R, Out, Ts...>()) {
    const long long n = (long long)out.size();
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, i, n)) continue;
      cuda::std::tuple<input_line<Ts, R, 1>...> lines;  // values[R + d]: the input at i + d
      (
          [&] {
            auto& line = cuda::std::get<I>(lines);
            const auto& input = cuda::std::get<I>(in);
#pragma unroll
            for (int d = -R; d <= R; ++d) line.values[R + d] = load_element(input.data(), i + d, n, policy);
          }(),
          ...);
      out[std::size_t(i)] = static_cast<Out>(f(cuda::std::get<I>(lines).at(0)...));
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(line_block_threads)
    stencil_line_element_kernel(Policy policy, cuda::std::tuple<cuda::std::span<const Ts>...> in,
                                cuda::std::span<Out> out, F f) {
  walk_line_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

}  // namespace coalesce::detail
