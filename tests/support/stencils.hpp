// The stencils of the device tests, the benchmark and their competitors, and a host reference:
// each shape is one function of a neighbourhood, called by coalesce::stencil, by every
// hand-written competitor (through coalesce::neighbourhood over their registers or shared memory)
// and by the host reference, so that all of them compute the same sums in the same order and
// their results are compared exactly. Each is a sum, then one multiply: nothing nvcc may contract
// into a fused multiply-add that the host would round differently.
#pragma once

#include <coalesce/boundary.hpp>

#include <cstddef>
#include <type_traits>
#include <vector>

namespace coalesce_test {

struct five_point {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.2f * (n(0, 0) + n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

struct nine_point {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return (1.0f / 9.0f) *
           (n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -1) + n(0, 0) + n(0, 1) + n(1, -1) + n(1, 0) + n(1, 1));
  }
};

// Every point within a Manhattan distance of 2: the 13-point stencil of radius 2.
struct thirteen_point {
  static constexpr int radius = 2;
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return (1.0f / 13.0f) * (n(-2, 0) + n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -2) + n(0, -1) + n(0, 0) + n(0, 1) +
                             n(0, 2) + n(1, -1) + n(1, 0) + n(1, 1) + n(2, 0));
  }
};

// The same three shapes on elements of type T (floats or doubles), for the iterated stencils' tests
// and experiments: on floats each computes what the float shape above does.
template <class T>
struct five_point_of {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return T(0.2) * (n(0, 0) + n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};
template <class T>
struct nine_point_of {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return (T(1) / T(9)) *
           (n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -1) + n(0, 0) + n(0, 1) + n(1, -1) + n(1, 0) + n(1, 1));
  }
};
template <class T>
struct thirteen_point_of {
  static constexpr int radius = 2;
  template <class N>
  __host__ __device__ T operator()(const N& n) const {
    return (T(1) / T(13)) * (n(-2, 0) + n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -2) + n(0, -1) + n(0, 0) + n(0, 1) +
                             n(0, 2) + n(1, -1) + n(1, 0) + n(1, 1) + n(2, 0));
  }
};

// The 3D shapes: the 7-point stencil (radius 1) and the 25-point star of radius 4, the seismic
// kernel's shape (each axis to distance 4).
struct seven_point {
  static constexpr int radius = 1;
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.125f *
           (n(0, 0, 0) + n(0, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(0, -1, 0) + n(0, 1, 0) + n(0, 0, -1) + n(0, 0, 1));
  }
};

struct twenty_five_point {
  static constexpr int radius = 4;
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    // Written out: offsets known at compile time keep the neighbourhood in registers.
    const float z =
        n(-4, 0, 0) + n(-3, 0, 0) + n(-2, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(2, 0, 0) + n(3, 0, 0) + n(4, 0, 0);
    const float y =
        n(0, -4, 0) + n(0, -3, 0) + n(0, -2, 0) + n(0, -1, 0) + n(0, 1, 0) + n(0, 2, 0) + n(0, 3, 0) + n(0, 4, 0);
    const float x =
        n(0, 0, -4) + n(0, 0, -3) + n(0, 0, -2) + n(0, 0, -1) + n(0, 0, 1) + n(0, 0, 2) + n(0, 0, 3) + n(0, 0, 4);
    return 0.03125f * (n(0, 0, 0) + z + y + x);
  }
};

// A neighbourhood of a dense host matrix, reads beyond the edge following a boundary policy.
template <class T, class Policy>
struct dense_neighbourhood {
  const T* values;
  long long rows, cols, r, c;
  Policy policy;

  // Host and device, as the shapes that call it are; it only runs on the host.
  __host__ __device__ T operator()(int dr, int dc) const {
    const long long i = coalesce::boundary_index(policy, r + dr, rows);
    const long long j = coalesce::boundary_index(policy, c + dc, cols);
    if (i < 0 || j < 0) {
      if constexpr (std::is_same_v<Policy, coalesce::clamp_t> || std::is_same_v<Policy, coalesce::periodic_t> ||
                    std::is_same_v<Policy, coalesce::interior_t>)
        return T{};  // not reached: only constant gives -1
      else return static_cast<T>(policy.value);
    }
    return values[i * cols + j];
  }
  template <int DR, int DC>
  __host__ __device__ T at() const {
    return (*this)(DR, DC);
  }
};

// out(r, c) = f(neighbourhoods of every input) on the host, for every element out holds (dense,
// rows x cols); with interior, only the interior is written and the rest left as it was.
template <int R, class Policy, class Out, class F, class... Ts>
void reference_stencil(const Policy& policy, std::size_t rows, std::size_t cols, std::vector<Out>& out, const F& f,
                       const std::vector<Ts>&... in) {
  for (long long r = 0; r < (long long)rows; ++r)
    for (long long c = 0; c < (long long)cols; ++c) {
      if constexpr (std::is_same_v<Policy, coalesce::interior_t>)
        if (!coalesce::interior_contains(R, r, (long long)rows) || !coalesce::interior_contains(R, c, (long long)cols))
          continue;
      out[std::size_t(r) * cols + std::size_t(c)] = static_cast<Out>(
          f(dense_neighbourhood<Ts, Policy>{in.data(), (long long)rows, (long long)cols, r, c, policy}...));
    }
}

// The same for a dense host volume, (z, y, x) at [(z * rows + y) * cols + x].
template <class T, class Policy>
struct dense_volume_neighbourhood {
  const T* values;
  long long depth, rows, cols, z, y, x;
  Policy policy;

  __host__ __device__ T operator()(int dz, int dy, int dx) const {
    const long long k = coalesce::boundary_index(policy, z + dz, depth);
    const long long i = coalesce::boundary_index(policy, y + dy, rows);
    const long long j = coalesce::boundary_index(policy, x + dx, cols);
    if (k < 0 || i < 0 || j < 0) {
      if constexpr (std::is_same_v<Policy, coalesce::clamp_t> || std::is_same_v<Policy, coalesce::periodic_t> ||
                    std::is_same_v<Policy, coalesce::interior_t>)
        return T{};  // not reached: only constant gives -1
      else return static_cast<T>(policy.value);
    }
    return values[(k * rows + i) * cols + j];
  }
  template <int DZ, int DY, int DX>
  __host__ __device__ T at() const {
    return (*this)(DZ, DY, DX);
  }
};

template <int R, class Policy, class Out, class F, class... Ts>
void reference_volume_stencil(const Policy& policy, std::size_t depth, std::size_t rows, std::size_t cols,
                              std::vector<Out>& out, const F& f, const std::vector<Ts>&... in) {
  const long long d = (long long)depth, h = (long long)rows, w = (long long)cols;
  for (long long z = 0; z < d; ++z)
    for (long long y = 0; y < h; ++y)
      for (long long x = 0; x < w; ++x) {
        if constexpr (std::is_same_v<Policy, coalesce::interior_t>)
          if (!coalesce::interior_contains(R, z, d) || !coalesce::interior_contains(R, y, h) ||
              !coalesce::interior_contains(R, x, w))
            continue;
        out[std::size_t((z * h + y) * w + x)] =
            static_cast<Out>(f(dense_volume_neighbourhood<Ts, Policy>{in.data(), d, h, w, z, y, x, policy}...));
      }
}

}  // namespace coalesce_test
