// The stencils along a line (a span) of the device tests and the benchmark, their host
// reference, and the hand-written kernels coalesce::stencil over a span is measured against. Each
// shape is one function of a neighbourhood n(d), called by coalesce::stencil, by the competitors
// (through a line_neighbourhood over their registers) and by the host reference, so all compute
// the same sums in the same order and are compared exactly: a sum, then one multiply, nothing
// nvcc may contract into a fused multiply-add that the host would round differently.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/neighbourhood.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace coalesce_test {

// The 3-point mean (radius 1) and the 5-point mean (radius 2).
struct three_point_line {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ auto operator()(const N& n) const {
    using T = typename N::value_type;
    return T(1.0 / 3.0) * (n(-1) + n(0) + n(1));
  }
};
struct five_point_line {
  static constexpr int radius = 2;
  template <class N>
  __host__ __device__ auto operator()(const N& n) const {
    using T = typename N::value_type;
    return T(0.2) * (n(-2) + n(-1) + n(0) + n(1) + n(2));
  }
};

// out[i] = shape(n) with n read under `policy` (interior: only the outputs with their whole
// neighbourhood inside, the others left as they were).
template <int R, class Policy, class T, class Shape>
void reference_line_stencil(const Policy& policy, const std::vector<T>& in, std::vector<T>& out, const Shape& shape) {
  const long long n = (long long)in.size();
  for (long long i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Policy, coalesce::interior_t>)
      if (!coalesce::interior_contains(R, i, n)) continue;
    T window[2 * R + 1];
    for (int d = -R; d <= R; ++d) {
      const long long j = coalesce::boundary_index(policy, i + d, n);
      if constexpr (coalesce::is_constant_policy_v<Policy>) {
        window[R + d] = j < 0 ? T(policy.value) : in[std::size_t(j)];
      } else {
        window[R + d] = in[std::size_t(j)];
      }
    }
    out[std::size_t(i)] = shape(coalesce::line_neighbourhood<T, R>(&window[R]));
  }
}

namespace competitors {

// One output per thread, its 2R + 1 neighbours through __ldg, clamped at the ends: the kernel a
// CUDA programmer writes first.
template <class Shape>
__global__ void line_one_per_thread(const float* __restrict__ in, float* __restrict__ out, long long n) {
  constexpr int R = Shape::radius;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float window[2 * R + 1];
#pragma unroll
  for (int d = -R; d <= R; ++d) window[R + d] = __ldg(in + coalesce::boundary_index(coalesce::clamp, i + d, n));
  out[i] = Shape{}(coalesce::line_neighbourhood<float, R>(&window[R]));
}

// Four outputs per thread: a float4 of the input through __ldg and the R elements on either side
// (the neighbouring threads' float4s, L1 hits), one float4 store; the last partial vector
// element by element.
template <class Shape>
__global__ void line_float4(const float* __restrict__ in, float* __restrict__ out, long long n) {
  constexpr int R = Shape::radius;
  const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long c0 = 4 * v;
  if (c0 >= n) return;
  float window[4 + 2 * R];
  if (c0 + 4 <= n) {
    const float4 middle = __ldg(reinterpret_cast<const float4*>(in) + v);
    window[R] = middle.x;
    window[R + 1] = middle.y;
    window[R + 2] = middle.z;
    window[R + 3] = middle.w;
  } else {
    for (int j = 0; j < 4; ++j) window[R + j] = __ldg(in + coalesce::boundary_index(coalesce::clamp, c0 + j, n));
  }
#pragma unroll
  for (int k = 1; k <= R; ++k) {
    window[R - k] = __ldg(in + coalesce::boundary_index(coalesce::clamp, c0 - k, n));
    window[R + 3 + k] = __ldg(in + coalesce::boundary_index(coalesce::clamp, c0 + 3 + k, n));
  }
  float result[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) result[j] = Shape{}(coalesce::line_neighbourhood<float, R>(&window[R + j]));
  if (c0 + 4 <= n) {
    reinterpret_cast<float4*>(out)[v] = make_float4(result[0], result[1], result[2], result[3]);
  } else {
    for (int j = 0; j < 4 && c0 + j < n; ++j) out[c0 + j] = result[j];
  }
}

struct line_competitor {
  std::string name;
  std::function<void(cudaStream_t)> launch;
};

// Both, clamped, over n floats (in and out 16-byte aligned).
template <class Shape>
std::vector<line_competitor> line_stencil_clamped(const float* in, float* out, long long n) {
  const unsigned blocks_one = unsigned((n + 255) / 256), blocks_four = unsigned((n / 4 + 1 + 255) / 256);
  return {{"hand-written, an element a thread, __ldg",
           [=](cudaStream_t s) { line_one_per_thread<Shape><<<blocks_one, 256, 0, s>>>(in, out, n); }},
          {"hand-written, a float4 a thread, __ldg",
           [=](cudaStream_t s) { line_float4<Shape><<<blocks_four, 256, 0, s>>>(in, out, n); }}};
}

}  // namespace competitors
}  // namespace coalesce_test
