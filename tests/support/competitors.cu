// The competitors coalesce is judged against (declared and explained in competitors.hpp): the
// kernels and the library calls, compiled once for the device tests and the benchmark.
#include "competitors.hpp"

#include <coalesce/error.hpp>

#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>

#include "mixed.hpp"
#include "stencils.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace coalesce_test::competitors {
namespace {

constexpr unsigned block_threads = 256;

inline unsigned blocks_for(std::size_t work_items, unsigned threads = block_threads) {
  return unsigned((work_items + threads - 1) / threads);
}

// Throws unless every pointer is 16-byte aligned and n a multiple of 4: the float4 kernels' promise.
template <class... Pointers>
void require_float4(const char* what, std::size_t n, const Pointers*... pointers) {
  const bool aligned = ((reinterpret_cast<std::uintptr_t>(pointers) % 16 == 0) && ...);
  if (!aligned || n % 4 != 0)
    throw std::invalid_argument(std::string(what) + ": needs 16-byte aligned columns and a multiple of 4 elements");
}

inline void check_cub(cudaError_t status, const char* what) { coalesce::throw_on_error(status, what); }

// --- the particle update: x += vx dt, y += vy dt, z += vz dt on six float columns ------------------

__global__ void drift_one_per_thread(particle_columns p, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < p.n) {
    p.x[i] += p.vx[i] * dt;
    p.y[i] += p.vy[i] * dt;
    p.z[i] += p.vz[i] * dt;
  }
}

__device__ inline void add_scaled(float4& a, const float4& v, float dt) {
  a.x += v.x * dt;
  a.y += v.y * dt;
  a.z += v.z * dt;
  a.w += v.w * dt;
}

__global__ void __launch_bounds__(block_threads)
    drift_float4(float4* __restrict__ x, float4* __restrict__ y, float4* __restrict__ z, const float4* __restrict__ vx,
                 const float4* __restrict__ vy, const float4* __restrict__ vz, std::size_t n4, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 px = x[i], py = y[i], pz = z[i];
  add_scaled(px, vx[i], dt);
  add_scaled(py, vy[i], dt);
  add_scaled(pz, vz[i], dt);
  x[i] = px;
  y[i] = py;
  z[i] = pz;
}

struct drift_tuple {
  float dt;
  template <class Tuple>
  __device__ void operator()(Tuple t) const {
    thrust::get<0>(t) += thrust::get<3>(t) * dt;
    thrust::get<1>(t) += thrust::get<4>(t) * dt;
    thrust::get<2>(t) += thrust::get<5>(t) * dt;
  }
};

struct drifted_position {
  float dt;
  template <class Tuple>
  __device__ cuda::std::tuple<float, float, float> operator()(const Tuple& t) const {
    return {thrust::get<0>(t) + thrust::get<3>(t) * dt, thrust::get<1>(t) + thrust::get<4>(t) * dt,
            thrust::get<2>(t) + thrust::get<5>(t) * dt};
  }
};

struct drift_column {
  float dt;
  __device__ float operator()(float x, float v) const { return x + v * dt; }
};

struct drift_six {
  float dt;
  __device__ cuda::std::tuple<float, float, float> operator()(float x, float y, float z, float vx, float vy,
                                                              float vz) const {
    return {x + vx * dt, y + vy * dt, z + vz * dt};
  }
};

// The same update on an array of 24-byte structs, one per thread: the layout SoA replaces.
__global__ void drift_structs(Particle* p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

// --- one float column: x -> 0.25 - x ---------------------------------------------------------------
// Every launch changes every value (a map that converged would let coalesce skip its stores after
// a few launches and flatter it), and host and device round it the same way.

__global__ void reflect_one_per_thread(const float* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 0.25f - in[i];
}

__device__ inline float4 reflected(float4 v) { return {0.25f - v.x, 0.25f - v.y, 0.25f - v.z, 0.25f - v.w}; }

__global__ void __launch_bounds__(block_threads) reflect_float4_in_place(float4* __restrict__ x, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n4) x[i] = reflected(x[i]);
}

__global__ void __launch_bounds__(block_threads)
    reflect_float4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n4) out[i] = reflected(in[i]);
}

// --- eight mixed columns: a += e * (c & 7), b = f * d - b, g += h --------------------------------
// Reads all eight columns, writes a, b and g; no column converges, so every launch stores all three.

__global__ void mix_one_per_thread(float* __restrict__ a, double* __restrict__ b, const std::int32_t* __restrict__ c,
                                   const std::int16_t* __restrict__ d, const float* __restrict__ e,
                                   const double* __restrict__ f, std::int32_t* __restrict__ g,
                                   const std::int16_t* __restrict__ h, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    a[i] += e[i] * float(c[i] & 7);
    b[i] = f[i] * double(d[i]) - b[i];
    g[i] += std::int32_t(h[i]);
  }
}

// Four elements per thread: one 16-byte access of each 4-byte column, two of each double column
// and one 8-byte access of each short column; __restrict__ puts the five read-only columns on the
// non-coherent path.
__global__ void __launch_bounds__(block_threads)
    mix_vector4(float4* __restrict__ a, double2* __restrict__ b, const int4* __restrict__ c,
                const short4* __restrict__ d, const float4* __restrict__ e, const double2* __restrict__ f,
                int4* __restrict__ g, const short4* __restrict__ h, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 av = a[i];
  double2 b0 = b[2 * i], b1 = b[2 * i + 1];
  const int4 cv = c[i];
  const short4 dv = d[i];
  const float4 ev = e[i];
  const double2 f0 = f[2 * i], f1 = f[2 * i + 1];
  int4 gv = g[i];
  const short4 hv = h[i];
  av.x += ev.x * float(cv.x & 7);
  av.y += ev.y * float(cv.y & 7);
  av.z += ev.z * float(cv.z & 7);
  av.w += ev.w * float(cv.w & 7);
  b0.x = f0.x * double(dv.x) - b0.x;
  b0.y = f0.y * double(dv.y) - b0.y;
  b1.x = f1.x * double(dv.z) - b1.x;
  b1.y = f1.y * double(dv.w) - b1.y;
  gv.x += hv.x;
  gv.y += hv.y;
  gv.z += hv.z;
  gv.w += hv.w;
  a[i] = av;
  b[2 * i] = b0;
  b[2 * i + 1] = b1;
  g[i] = gv;
}

struct mix_tuple {
  template <class Tuple>
  __device__ void operator()(Tuple t) const {
    thrust::get<0>(t) += thrust::get<4>(t) * float(thrust::get<2>(t) & 7);
    thrust::get<1>(t) = thrust::get<5>(t) * double(thrust::get<3>(t)) - thrust::get<1>(t);
    thrust::get<6>(t) += std::int32_t(thrust::get<7>(t));
  }
};

struct mix_a {
  __device__ float operator()(float a, float e, std::int32_t c) const { return a + e * float(c & 7); }
};
struct mix_b {
  __device__ double operator()(double b, double f, std::int16_t d) const { return f * double(d) - b; }
};
struct mix_g {
  __device__ std::int32_t operator()(std::int32_t g, std::int16_t h) const { return g + std::int32_t(h); }
};

// --- rows of a pitched matrix, in place: x -> 0.25 - x -------------------------------------------

__global__ void reflect_2d(coalesce::pitched_view<float> m) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t r = blockIdx.y * std::size_t(blockDim.y) + threadIdx.y;
  if (r < m.rows() && c < m.cols()) m(r, c) = 0.25f - m(r, c);
}

// One float4 of a row per thread over the rows' elements only: `vectors_per_row` vectors, then the
// next row `pitch4` vectors on.
__global__ void __launch_bounds__(block_threads)
    reflect_rows_float4(float4* __restrict__ data, std::size_t rows, unsigned vectors_per_row, std::size_t pitch4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= rows * vectors_per_row) return;
  const std::size_t r = i / vectors_per_row, k = i % vectors_per_row;
  float4* p = data + r * pitch4 + k;
  *p = reflected(*p);
}

// One float4 per thread over whole rows, padding included (the matrix owns it): every warp reads
// whole 128-byte lines, and only vectors of elements are stored.
__global__ void __launch_bounds__(block_threads)
    reflect_whole_rows_float4(float4* __restrict__ data, std::size_t rows, std::size_t pitch4,
                              unsigned element_vectors) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= rows * pitch4) return;
  const float4 v = data[i];
  if (i % pitch4 < element_vectors) data[i] = reflected(v);
}

// --- an array of 24-byte structs, in place: the particle update on Particle* ----------------------

// What a careful user writes for structs coalesce may not re-lay out: the block stages its 256
// structs through shared memory with 16-byte accesses, updates them there and writes them back.
__global__ void __launch_bounds__(block_threads) drift_structs_staged(Particle* p, std::size_t n, float dt) {
  constexpr unsigned words = block_threads * sizeof(Particle) / 16;  // 384 float4s
  __shared__ float4 stage[words];
  const std::size_t first = std::size_t(blockIdx.x) * block_threads;
  const std::size_t count = n - first < block_threads ? n - first : block_threads;
  auto* global = reinterpret_cast<float4*>(p + first);
  const unsigned whole = unsigned(count * sizeof(Particle) / 16);
  for (unsigned w = threadIdx.x; w < whole; w += block_threads) stage[w] = global[w];
  __syncthreads();
  Particle* mine = reinterpret_cast<Particle*>(stage) + threadIdx.x;
  if (threadIdx.x < count) {
    mine->x += mine->vx * dt;
    mine->y += mine->vy * dt;
    mine->z += mine->vz * dt;
  }
  __syncthreads();
  for (unsigned w = threadIdx.x; w < whole; w += block_threads) global[w] = stage[w];
}

struct drifted_struct {
  float dt;
  __device__ Particle operator()(Particle p) const {
    drift_struct{dt}(p);
    return p;
  }
};

// --- conversion between an array of Particles and six columns ---------------------------------------

struct split_particle {
  __device__ cuda::std::tuple<float, float, float, float, float, float> operator()(const Particle& p) const {
    return {p.x, p.y, p.z, p.vx, p.vy, p.vz};
  }
};
struct join_particle {
  __device__ Particle operator()(float x, float y, float z, float vx, float vy, float vz) const {
    return {x, y, z, vx, vy, vz};
  }
};
struct join_tuple {
  template <class Tuple>
  __device__ Particle operator()(const Tuple& t) const {
    return {thrust::get<0>(t), thrust::get<1>(t), thrust::get<2>(t),
            thrust::get<3>(t), thrust::get<4>(t), thrust::get<5>(t)};
  }
};

__global__ void split_one_per_thread(const Particle* in, float* x, float* y, float* z, float* vx, float* vy, float* vz,
                                     std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    const Particle p = in[i];
    x[i] = p.x, y[i] = p.y, z[i] = p.z, vx[i] = p.vx, vy[i] = p.vy, vz[i] = p.vz;
  }
}
__global__ void join_one_per_thread(const float* x, const float* y, const float* z, const float* vx, const float* vy,
                                    const float* vz, Particle* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = {x[i], y[i], z[i], vx[i], vy[i], vz[i]};
}

// --- copying a pitched matrix: rows of floats into rows of the same pitch ---------------------------

// One float4 per thread over whole rows (both matrices own their padding): whole 128-byte lines
// are read, and the vectors that hold elements are stored.
__global__ void __launch_bounds__(block_threads)
    copy_whole_rows_float4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t rows,
                           std::size_t pitch4, unsigned element_vectors) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= rows * pitch4) return;
  const float4 v = in[i];
  if (i % pitch4 < element_vectors) out[i] = v;
}

// --- reading one float column: out[i] = 2 x[i] ------------------------------------------------------

struct twice {
  __device__ float operator()(float x) const { return 2.0f * x; }
};

__global__ void __launch_bounds__(block_threads)
    twice_float4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n4) {
    const float4 v = in[i];
    out[i] = {2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w};
  }
}

}  // namespace

// The particle update's competitors on the columns of `p`.
std::vector<candidate> particle_update(const particle_columns& p, float dt) {
  require_float4("particle update competitors", p.n, p.x, p.y, p.z, p.vx, p.vy, p.vz);
  float *x = p.x, *y = p.y, *z = p.z;
  const float *vx = p.vx, *vy = p.vy, *vz = p.vz;
  const std::size_t n = p.n;
  return {
      {"hand-written, one element per thread", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) { drift_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(p, dt); }},
      {"hand-written, float4 chunk per thread, restrict", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) {
         drift_float4<<<blocks_for(n / 4), block_threads, 0, s>>>(
             reinterpret_cast<float4*>(x), reinterpret_cast<float4*>(y), reinterpret_cast<float4*>(z),
             reinterpret_cast<const float4*>(vx), reinterpret_cast<const float4*>(vy),
             reinterpret_cast<const float4*>(vz), n / 4, dt);
       }},
      {"thrust::transform, zip of 6 into 3, par_nosync", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) {
         const auto in = thrust::make_zip_iterator(x, y, z, vx, vy, vz);
         thrust::transform(thrust::cuda::par_nosync.on(s), in, in + n, thrust::make_zip_iterator(x, y, z),
                           drifted_position{dt});
       }},
      {"thrust::for_each, zip in place, par_nosync", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) {
         const auto zip = thrust::make_zip_iterator(x, y, z, vx, vy, vz);
         thrust::for_each(thrust::cuda::par_nosync.on(s), zip, zip + n, drift_tuple{dt});
       }},
      {"cub::DeviceTransform, one call per column", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, vx), x, n, drift_column{dt}, s), "cub x");
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(y, vy), y, n, drift_column{dt}, s), "cub y");
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(z, vz), z, n, drift_column{dt}, s), "cub z");
       }},
      {"cub::DeviceTransform, 6 inputs into a zip of 3", coalesce::testing::row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y, z, vx, vy, vz),
                                                   thrust::make_zip_iterator(x, y, z), n, drift_six{dt}, s),
                   "cub::DeviceTransform (6 inputs)");
       }},
  };
}

// x[i] = 0.25 - x[i] in place.
std::vector<candidate> column_in_place(float* x, std::size_t n) {
  require_float4("one-column competitors", n, x);
  using coalesce::testing::row_role;
  return {
      {"hand-written, one element per thread", row_role::competitor,
       [=](cudaStream_t s) { reflect_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(x, x, n); }},
      {"hand-written, float4 chunk per thread", row_role::competitor,
       [=](cudaStream_t s) {
         reflect_float4_in_place<<<blocks_for(n / 4), block_threads, 0, s>>>(reinterpret_cast<float4*>(x), n / 4);
       }},
      {"thrust::transform in place, par_nosync", row_role::competitor,
       [=](cudaStream_t s) { thrust::transform(thrust::cuda::par_nosync.on(s), x, x + n, x, reflect{}); }},
      {"cub::DeviceTransform in place", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(x, x, n, reflect{}, s), "cub::DeviceTransform");
       }},
  };
}

// y[i] = 0.25 - x[i].
std::vector<candidate> column_into_another(const float* x, float* y, std::size_t n) {
  require_float4("one-column competitors", n, x, y);
  using coalesce::testing::row_role;
  return {
      {"hand-written, one element per thread", row_role::competitor,
       [=](cudaStream_t s) { reflect_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(x, y, n); }},
      {"hand-written, float4 chunk per thread, restrict", row_role::competitor,
       [=](cudaStream_t s) {
         reflect_float4<<<blocks_for(n / 4), block_threads, 0, s>>>(reinterpret_cast<const float4*>(x),
                                                                    reinterpret_cast<float4*>(y), n / 4);
       }},
      {"thrust::transform, par_nosync", row_role::competitor,
       [=](cudaStream_t s) { thrust::transform(thrust::cuda::par_nosync.on(s), x, x + n, y, reflect{}); }},
      {"cub::DeviceTransform", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(x, y, n, reflect{}, s), "cub::DeviceTransform");
       }},
  };
}

std::vector<candidate> mixed_update(const mixed_columns& m) {
  require_float4("mixed-column competitors", m.n, m.a, m.b, m.c, m.d, m.e, m.f, m.g, m.h);
  using coalesce::testing::row_role;
  const auto n = m.n;
  return {
      {"hand-written, one element per thread, restrict", row_role::competitor,
       [=](cudaStream_t s) {
         mix_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(m.a, m.b, m.c, m.d, m.e, m.f, m.g, m.h, n);
       }},
      {"hand-written, 4 per thread, 16-byte vectors, restrict", row_role::competitor,
       [=](cudaStream_t s) {
         mix_vector4<<<blocks_for(n / 4), block_threads, 0, s>>>(
             reinterpret_cast<float4*>(m.a), reinterpret_cast<double2*>(m.b), reinterpret_cast<const int4*>(m.c),
             reinterpret_cast<const short4*>(m.d), reinterpret_cast<const float4*>(m.e),
             reinterpret_cast<const double2*>(m.f), reinterpret_cast<int4*>(m.g), reinterpret_cast<const short4*>(m.h),
             n / 4);
       }},
      {"thrust::for_each, zip of 8 in place, par_nosync", row_role::competitor,
       [=](cudaStream_t s) {
         const auto zip = thrust::make_zip_iterator(m.a, m.b, m.c, m.d, m.e, m.f, m.g, m.h);
         thrust::for_each(thrust::cuda::par_nosync.on(s), zip, zip + n, mix_tuple{});
       }},
      {"cub::DeviceTransform, one call per written column", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(m.a, m.e, m.c), m.a, n, mix_a{}, s), "cub a");
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(m.b, m.f, m.d), m.b, n, mix_b{}, s), "cub b");
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(m.g, m.h), m.g, n, mix_g{}, s), "cub g");
       }},
  };
}

// The competitors of an in-place row operation on `m`, whose row bytes must be a multiple of 16
// and whose pitch it owns (a whole pitched_matrix view).
std::vector<candidate> pitched_in_place(coalesce::pitched_view<float> m) {
  using coalesce::testing::row_role;
  if (m.cols() % 4 != 0 || m.pitch_bytes() % 16 != 0 || reinterpret_cast<std::uintptr_t>(m.data()) % 16 != 0)
    throw std::invalid_argument("pitched competitors: rows must be whole float4s");
  const std::size_t rows = m.rows(), cols = m.cols(), pitch4 = m.pitch_bytes() / 16;
  float4* data = reinterpret_cast<float4*>(m.data());
  float* all = m.data();
  const std::size_t allocation_floats = rows * m.pitch_bytes() / sizeof(float);
  return {
      {"hand-written 2D, 16 x 16 threads", row_role::competitor,
       [=](cudaStream_t s) {
         reflect_2d<<<dim3(unsigned((cols + 15) / 16), unsigned((rows + 15) / 16)), dim3(16, 16), 0, s>>>(m);
       }},
      {"hand-written float4 chunks of the elements", row_role::competitor,
       [=](cudaStream_t s) {
         reflect_rows_float4<<<blocks_for(rows * (cols / 4)), block_threads, 0, s>>>(data, rows, unsigned(cols / 4),
                                                                                     pitch4);
       }},
      {"hand-written float4 over whole rows, elements stored", row_role::competitor,
       [=](cudaStream_t s) {
         reflect_whole_rows_float4<<<blocks_for(rows * pitch4), block_threads, 0, s>>>(data, rows, pitch4,
                                                                                       unsigned(cols / 4));
       }},
      {"cub::DeviceTransform over the whole allocation", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(all, all, allocation_floats, reflect{}, s), "cub::DeviceTransform");
       }},
  };
}

// `p` must be 16-byte aligned and n a multiple of 4 (so every block's run is whole float4s).
std::vector<candidate> structs_in_place(Particle* p, std::size_t n, float dt) {
  require_float4("array-of-structs competitors", n, p);
  using coalesce::testing::row_role;
  return {
      {"hand-written, one struct per thread", row_role::competitor,
       [=](cudaStream_t s) { drift_structs<<<blocks_for(n), block_threads, 0, s>>>(p, n, dt); }},
      {"hand-written, staged through shared memory", row_role::competitor,
       [=](cudaStream_t s) { drift_structs_staged<<<blocks_for(n), block_threads, 0, s>>>(p, n, dt); }},
      {"thrust::for_each(Particle*), par_nosync", row_role::competitor,
       [=](cudaStream_t s) { thrust::for_each(thrust::cuda::par_nosync.on(s), p, p + n, drift_struct{dt}); }},
      {"cub::DeviceTransform(Particle*) in place", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(p, p, n, drifted_struct{dt}, s), "cub::DeviceTransform");
       }},
  };
}

std::vector<candidate> aos_to_soa(const Particle* in, writable_particle_columns c, std::size_t n) {
  using coalesce::testing::row_role;
  return {
      {"hand-written, one struct per thread", row_role::competitor,
       [=](cudaStream_t s) {
         split_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(in, c.x, c.y, c.z, c.vx, c.vy, c.vz, n);
       }},
      {"thrust::transform into a zip of 6, par_nosync", row_role::competitor,
       [=](cudaStream_t s) {
         thrust::transform(thrust::cuda::par_nosync.on(s), in, in + n,
                           thrust::make_zip_iterator(c.x, c.y, c.z, c.vx, c.vy, c.vz), split_particle{});
       }},
      {"cub::DeviceTransform into a zip of 6", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(in, thrust::make_zip_iterator(c.x, c.y, c.z, c.vx, c.vy, c.vz), n,
                                                   split_particle{}, s),
                   "cub::DeviceTransform");
       }},
  };
}

std::vector<candidate> soa_to_aos(const readable_particle_columns& c, Particle* out) {
  using coalesce::testing::row_role;
  const std::size_t n = c.n;
  return {
      {"hand-written, one struct per thread", row_role::competitor,
       [=](cudaStream_t s) {
         join_one_per_thread<<<blocks_for(n), block_threads, 0, s>>>(c.x, c.y, c.z, c.vx, c.vy, c.vz, out, n);
       }},
      {"thrust::transform from a zip of 6, par_nosync", row_role::competitor,
       [=](cudaStream_t s) {
         const auto zip = thrust::make_zip_iterator(c.x, c.y, c.z, c.vx, c.vy, c.vz);
         thrust::transform(thrust::cuda::par_nosync.on(s), zip, zip + n, out, join_tuple{});
       }},
      {"cub::DeviceTransform, 6 inputs", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(c.x, c.y, c.z, c.vx, c.vy, c.vz), out, n,
                                                   join_particle{}, s),
                   "cub::DeviceTransform");
       }},
  };
}

// The competitors of copying `in` to `out`, two whole matrices of one shape and pitch.
std::vector<candidate> pitched_copy(coalesce::pitched_view<const float> in, coalesce::pitched_view<float> out) {
  using coalesce::testing::row_role;
  if (in.pitch_bytes() != out.pitch_bytes() || in.rows() != out.rows() || in.cols() != out.cols() ||
      in.pitch_bytes() % 16 != 0)
    throw std::invalid_argument("pitched copy competitors: two matrices of one shape and a 16-byte pitch");
  const std::size_t rows = in.rows(), pitch4 = in.pitch_bytes() / 16;
  const unsigned element_vectors = unsigned((in.cols() + 3) / 4);
  const auto* from = reinterpret_cast<const float4*>(in.data());
  auto* to = reinterpret_cast<float4*>(out.data());
  return {
      {"cudaMemcpy2DAsync", row_role::competitor,
       [=](cudaStream_t s) {
         coalesce::throw_on_error(cudaMemcpy2DAsync(out.data(), out.pitch_bytes(), in.data(), in.pitch_bytes(),
                                                    in.cols() * sizeof(float), rows, cudaMemcpyDeviceToDevice, s),
                                  "cudaMemcpy2DAsync");
       }},
      {"hand-written float4 over whole rows", row_role::competitor,
       [=](cudaStream_t s) {
         copy_whole_rows_float4<<<blocks_for(rows * pitch4), block_threads, 0, s>>>(from, to, rows, pitch4,
                                                                                    element_vectors);
       }},
  };
}

candidate particle_update_on_structs(Particle* p, std::size_t n, float dt) {
  return {"hand-written AoS (Particle*), one per thread", coalesce::testing::row_role::context,
          [=](cudaStream_t s) { drift_structs<<<blocks_for(n), block_threads, 0, s>>>(p, n, dt); }};
}

candidate column_in_place_with_cub(float* x, std::size_t n, std::string name) {
  return {std::move(name), coalesce::testing::row_role::context, [=](cudaStream_t s) {
            check_cub(cub::DeviceTransform::Transform(x, x, n, reflect{}, s), "cub::DeviceTransform");
          }};
}

std::vector<candidate> column_twice(const float* x, float* out, std::size_t n) {
  require_float4("column competitors", n, x, out);
  using coalesce::testing::row_role;
  return {
      {"hand-written float4 on the x column, restrict", row_role::competitor,
       [=](cudaStream_t s) {
         twice_float4<<<blocks_for(n / 4), block_threads, 0, s>>>(reinterpret_cast<const float4*>(x),
                                                                  reinterpret_cast<float4*>(out), n / 4);
       }},
      {"cub::DeviceTransform on the x column", row_role::competitor,
       [=](cudaStream_t s) {
         check_cub(cub::DeviceTransform::Transform(x, out, n, twice{}, s), "cub::DeviceTransform");
       }},
  };
}

// --- stencils, reads beyond the edge clamped ------------------------------------------------------

namespace {

// Values laid out row-major `stride` apart, seen from (0, 0): what the shapes of stencils.hpp read.
struct offsets_from {
  const float* centre;
  int stride;
  __device__ float operator()(int dr, int dc) const { return centre[dr * stride + dc]; }
};

__device__ inline int clamped(long long i, long long n) { return int(i < 0 ? 0 : i >= n ? n - 1 : i); }

template <class Shape>
__global__ void __launch_bounds__(512) stencil_one_per_thread(const float* __restrict__ in, float* __restrict__ out,
                                                              int rows, int cols, std::size_t pitch) {
  constexpr int R = Shape::radius;
  const int c = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cols) return;
  for (int r = int(blockIdx.y * blockDim.y + threadIdx.y); r < rows; r += int(gridDim.y * blockDim.y)) {
    float v[2 * R + 1][2 * R + 1];
#pragma unroll
    for (int dr = -R; dr <= R; ++dr) {
      const float* row = in + std::size_t(clamped(r + dr, rows)) * pitch;
#pragma unroll
      for (int dc = -R; dc <= R; ++dc) v[R + dr][R + dc] = __ldg(row + clamped(c + dc, cols));
    }
    out[std::size_t(r) * pitch + c] = Shape{}(offsets_from{&v[R][R], 2 * R + 1});
  }
}

template <class Shape>
__global__ void __launch_bounds__(256) stencil_float4_chunks(const float* __restrict__ in, float* __restrict__ out,
                                                             int rows, int cols, std::size_t pitch) {
  constexpr int R = Shape::radius;
  constexpr int width = 4 + 2 * R;
  const int vectors_per_row = cols / 4;
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= std::size_t(rows) * vectors_per_row) return;
  const int r = int(i / vectors_per_row), c = int(i % vectors_per_row) * 4;
  float v[2 * R + 1][width];
#pragma unroll
  for (int dr = -R; dr <= R; ++dr) {
    const float* row = in + std::size_t(clamped(r + dr, rows)) * pitch;
    const float4 mid = __ldg(reinterpret_cast<const float4*>(row + c));
    v[R + dr][R] = mid.x;
    v[R + dr][R + 1] = mid.y;
    v[R + dr][R + 2] = mid.z;
    v[R + dr][R + 3] = mid.w;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      v[R + dr][R - k] = __ldg(row + clamped(c - k, cols));
      v[R + dr][R + 3 + k] = __ldg(row + clamped(c + 3 + k, cols));
    }
  }
  float4 o;
  o.x = Shape{}(offsets_from{&v[R][R], width});
  o.y = Shape{}(offsets_from{&v[R][R + 1], width});
  o.z = Shape{}(offsets_from{&v[R][R + 2], width});
  o.w = Shape{}(offsets_from{&v[R][R + 3], width});
  *reinterpret_cast<float4*>(out + std::size_t(r) * pitch + c) = o;
}

// Bands: a float4 of outputs in each of K consecutive rows per thread, blocks BX vectors across
// and 256 / BX bands down, so that a thread's K rows share their halo rows in registers and
// neighbouring bands' halo rows are L1 hits. The 2R scalars beside each row read read-only.
template <class Shape, int K, int BX>
__global__ void __launch_bounds__(256)
    stencil_float4_bands(const float* __restrict__ in, float* __restrict__ out, int rows, int cols, std::size_t pitch) {
  constexpr int R = Shape::radius;
  constexpr int width = 4 + 2 * R;
  const int vectors_per_row = cols / 4;
  const int vector = int(blockIdx.x) * BX + int(threadIdx.x);
  if (vector >= vectors_per_row) return;
  const int c = vector * 4;
  for (int r0 = (int(blockIdx.y) * int(blockDim.y) + int(threadIdx.y)) * K; r0 < rows;
       r0 += int(gridDim.y * blockDim.y) * K) {
    float v[K + 2 * R][width];
#pragma unroll
    for (int i = 0; i < K + 2 * R; ++i) {
      const float* row = in + std::size_t(clamped(r0 - R + i, rows)) * pitch;
      const float4 mid = __ldg(reinterpret_cast<const float4*>(row + c));
      v[i][R] = mid.x;
      v[i][R + 1] = mid.y;
      v[i][R + 2] = mid.z;
      v[i][R + 3] = mid.w;
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        v[i][R - k] = __ldg(row + clamped(c - k, cols));
        v[i][R + 3 + k] = __ldg(row + clamped(c + 3 + k, cols));
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (r0 + k >= rows) break;
      float4 o;
      o.x = Shape{}(offsets_from{&v[R + k][R], width});
      o.y = Shape{}(offsets_from{&v[R + k][R + 1], width});
      o.z = Shape{}(offsets_from{&v[R + k][R + 2], width});
      o.w = Shape{}(offsets_from{&v[R + k][R + 3], width});
      *reinterpret_cast<float4*>(out + std::size_t(r0 + k) * pitch + c) = o;
    }
  }
}

// The shared tile: 128 x 32 outputs, the elements at tile[R + row][4 + col] so that each row's
// 128 elements are 16-byte aligned for float4 stores; 136 floats a row (544 bytes, a multiple of
// 16) holds the R <= 4 halo columns on either side.
constexpr int tile_cols = 128, tile_rows = 32, tile_stride = 136;

template <class Shape>
__global__ void __launch_bounds__(256)
    stencil_shared_tile(const float* __restrict__ in, float* __restrict__ out, int rows, int cols, std::size_t pitch) {
  constexpr int R = Shape::radius;
  constexpr int halo_rows = tile_rows + 2 * R;
  __shared__ __align__(16) float tile[halo_rows][tile_stride];
  const int first_col = int(blockIdx.x) * tile_cols;
  const int t = int(threadIdx.y * blockDim.x + threadIdx.x);
  for (int first_row = int(blockIdx.y) * tile_rows; first_row < rows; first_row += int(gridDim.y) * tile_rows) {
    for (int k = t; k < halo_rows * (tile_cols / 4); k += 256) {
      const int row = k / (tile_cols / 4), c = first_col + 4 * (k % (tile_cols / 4));
      const float* from = in + std::size_t(clamped(first_row - R + row, rows)) * pitch;
      float4 v;
      if (c + 4 <= cols) {
        v = __ldg(reinterpret_cast<const float4*>(from + c));
      } else {
        v.x = __ldg(from + clamped(c, cols));
        v.y = __ldg(from + clamped(c + 1, cols));
        v.z = __ldg(from + clamped(c + 2, cols));
        v.w = __ldg(from + clamped(c + 3, cols));
      }
      *reinterpret_cast<float4*>(&tile[row][4 + 4 * (k % (tile_cols / 4))]) = v;
    }
    for (int k = t; k < halo_rows * 2 * R; k += 256) {
      const int row = k / (2 * R), side = k % (2 * R);
      const int col = side < R ? first_col - R + side : first_col + tile_cols + side - R;
      const float* from = in + std::size_t(clamped(first_row - R + row, rows)) * pitch;
      tile[row][side < R ? 4 - R + side : 4 + tile_cols + side - R] = __ldg(from + clamped(col, cols));
    }
    __syncthreads();
    const int c = first_col + int(threadIdx.x);
    for (int k = int(threadIdx.y); k < tile_rows; k += int(blockDim.y)) {
      const int r = first_row + k;
      if (r < rows && c < cols)
        out[std::size_t(r) * pitch + c] = Shape{}(offsets_from{&tile[R + k][4 + threadIdx.x], tile_stride});
    }
    __syncthreads();
  }
}

template <class Shape>
std::vector<candidate> stencil_competitors(coalesce::pitched_view<const float> in, coalesce::pitched_view<float> out) {
  using coalesce::testing::row_role;
  const float* from = in.data();
  float* to = out.data();
  const int rows = int(in.rows()), cols = int(in.cols());
  const std::size_t pitch = in.pitch_bytes() / sizeof(float);
  if (out.pitch_bytes() != in.pitch_bytes() || out.rows() != in.rows() || out.cols() != in.cols())
    throw std::invalid_argument("stencil competitors: in and out need one shape and one pitch");
  require_float4("stencil competitors", in.cols(), from, to);
  if (in.pitch_bytes() % 16 != 0) throw std::invalid_argument("stencil competitors: rows must be 16-byte aligned");
  const dim3 tiles(unsigned((cols + tile_cols - 1) / tile_cols),
                   unsigned(std::min((rows + tile_rows - 1) / tile_rows, 65535)));
  const dim3 walk(unsigned((cols + 127) / 128), unsigned(std::min((rows + 3) / 4, 65535)));
  const auto bands_grid = [=](int across, int rows_per_thread) {
    const int bands = (rows + rows_per_thread - 1) / rows_per_thread, down = 256 / across;
    return dim3(unsigned((cols / 4 + across - 1) / across), unsigned(std::min((bands + down - 1) / down, 65535)));
  };
  return {
      {"hand-written shared tile 128 x 32, float4 fill", row_role::competitor,
       [=](cudaStream_t s) { stencil_shared_tile<Shape><<<tiles, dim3(128, 2), 0, s>>>(from, to, rows, cols, pitch); }},
      {"hand-written float4 chunks (stencil_float4_chunks)", row_role::competitor,
       [=](cudaStream_t s) {
         stencil_float4_chunks<Shape>
             <<<blocks_for(std::size_t(rows) * (cols / 4)), block_threads, 0, s>>>(from, to, rows, cols, pitch);
       }},
      {"hand-written float4 bands, 64 x 4 blocks, 2 rows a thread", row_role::competitor,
       [=](cudaStream_t s) {
         stencil_float4_bands<Shape, 2, 64><<<bands_grid(64, 2), dim3(64, 4), 0, s>>>(from, to, rows, cols, pitch);
       }},
      {"hand-written float4 bands, 32 x 8 blocks, 4 rows a thread", row_role::competitor,
       [=](cudaStream_t s) {
         stencil_float4_bands<Shape, 4, 32><<<bands_grid(32, 4), dim3(32, 8), 0, s>>>(from, to, rows, cols, pitch);
       }},
      {"hand-written one element per thread", row_role::competitor,
       [=](cudaStream_t s) {
         stencil_one_per_thread<Shape><<<walk, dim3(128, 4), 0, s>>>(from, to, rows, cols, pitch);
       }},
  };
}

}  // namespace

// --- volume stencils, reads beyond the edge clamped ------------------------------------------------

namespace {

struct volume_offsets_from {
  const float* centre;
  int plane_stride, row_stride;
  __device__ float operator()(int dz, int dy, int dx) const { return centre[dz * plane_stride + dy * row_stride + dx]; }
};

template <class Shape>
__global__ void __launch_bounds__(512)
    volume_stencil_one_per_thread(const float* __restrict__ in, float* __restrict__ out, int depth, int rows, int cols,
                                  std::size_t pitch, std::size_t slice) {
  constexpr int R = Shape::radius, W = 2 * R + 1;
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (x >= cols) return;
  for (int zy = int(blockIdx.y * blockDim.y + threadIdx.y); zy < depth * rows; zy += int(gridDim.y * blockDim.y)) {
    const int z = zy / rows, y = zy % rows;
    float v[W][W][W];
#pragma unroll
    for (int dz = -R; dz <= R; ++dz)
#pragma unroll
      for (int dy = -R; dy <= R; ++dy) {
        const float* row =
            in + std::size_t(clamped(z + dz, depth)) * slice + std::size_t(clamped(y + dy, rows)) * pitch;
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) v[R + dz][R + dy][R + dx] = __ldg(row + clamped(x + dx, cols));
      }
    out[std::size_t(z) * slice + std::size_t(y) * pitch + x] = Shape{}(volume_offsets_from{&v[R][R][R], W * W, W});
  }
}

// A float4 of outputs in each of K consecutive planes per thread, blocks BX vectors across and
// 256 / BX rows down; the loads f never reads are dead code. widths % 4 == 0.
template <class Shape, int K, int BX>
__global__ void __launch_bounds__(256)
    volume_stencil_float4_slabs(const float* __restrict__ in, float* __restrict__ out, int depth, int rows, int cols,
                                std::size_t pitch, std::size_t slice) {
  constexpr int R = Shape::radius, W = 4 + 2 * R, H = 2 * R + 1;
  const int vector = int(blockIdx.x) * BX + int(threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (vector >= cols / 4 || y >= rows) return;
  const int c = vector * 4;
  for (int z0 = int(blockIdx.z) * K; z0 < depth; z0 += int(gridDim.z) * K) {
    float v[K + 2 * R][H][W];
#pragma unroll
    for (int i = 0; i < K + 2 * R; ++i)
#pragma unroll
      for (int dy = -R; dy <= R; ++dy) {
        const float* row =
            in + std::size_t(clamped(z0 - R + i, depth)) * slice + std::size_t(clamped(y + dy, rows)) * pitch;
        const float4 mid = __ldg(reinterpret_cast<const float4*>(row + c));
        v[i][R + dy][R] = mid.x;
        v[i][R + dy][R + 1] = mid.y;
        v[i][R + dy][R + 2] = mid.z;
        v[i][R + dy][R + 3] = mid.w;
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          v[i][R + dy][R - k] = __ldg(row + clamped(c - k, cols));
          v[i][R + dy][R + 3 + k] = __ldg(row + clamped(c + 3 + k, cols));
        }
      }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (z0 + k >= depth) break;
      float4 o;
      o.x = Shape{}(volume_offsets_from{&v[R + k][R][R], H * W, W});
      o.y = Shape{}(volume_offsets_from{&v[R + k][R][R + 1], H * W, W});
      o.z = Shape{}(volume_offsets_from{&v[R + k][R][R + 2], H * W, W});
      o.w = Shape{}(volume_offsets_from{&v[R + k][R][R + 3], H * W, W});
      *reinterpret_cast<float4*>(out + std::size_t(z0 + k) * slice + std::size_t(y) * pitch + c) = o;
    }
  }
}

// The 2.5D scheme of Micikevicius' 3D finite-difference kernels, with L1 for the plane: each
// thread walks z through a block's chunk of planes, a float4 of outputs of its row in each. The
// centre column's 2R + 1 vectors (planes z - R .. z + R) wait in a register queue, one new plane
// loaded per step; the plane's own rows y - R .. y + R and the R elements beside row y are loaded
// each step, the block's other rows loading the same lines (L1 hits). Star shapes only: off the
// plane, f may read (dz, 0, 0) alone.
struct queue_offsets {
  const float* plane;  // the plane's element under the output, rows `row_stride` apart
  int row_stride;
  const float* column;  // the centre column: column[(R + dz) * 4] is plane z + dz
  int radius;
  __device__ float operator()(int dz, int dy, int dx) const {
    return dz == 0 ? plane[dy * row_stride + dx] : column[(radius + dz) * 4];
  }
};

constexpr int queue_planes_per_block = 32;

template <class Shape, int BX>
__global__ void __launch_bounds__(256)
    volume_stencil_float4_queue(const float* __restrict__ in, float* __restrict__ out, int depth, int rows, int cols,
                                std::size_t pitch, std::size_t slice) {
  constexpr int R = Shape::radius, W = 4 + 2 * R, H = 2 * R + 1;
  const int vector = int(blockIdx.x) * BX + int(threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (vector >= cols / 4 || y >= rows) return;
  const int c = vector * 4;
  const int z_begin = int(blockIdx.z) * queue_planes_per_block;
  const int z_end = z_begin + queue_planes_per_block < depth ? z_begin + queue_planes_per_block : depth;
  const auto row_of = [&](int z, int row) {
    return in + std::size_t(clamped(z, depth)) * slice + std::size_t(clamped(row, rows)) * pitch;
  };
  float column[H][4];  // column[R + dz]: the centre vector of plane z + dz
#pragma unroll
  for (int i = 1; i < H; ++i) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(row_of(z_begin - R - 1 + i, y) + c));
    column[i][0] = v.x, column[i][1] = v.y, column[i][2] = v.z, column[i][3] = v.w;
  }
  for (int z = z_begin; z < z_end; ++z) {
#pragma unroll
    for (int i = 0; i + 1 < H; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) column[i][j] = column[i + 1][j];
    const float4 next = __ldg(reinterpret_cast<const float4*>(row_of(z + R, y) + c));
    column[H - 1][0] = next.x, column[H - 1][1] = next.y, column[H - 1][2] = next.z, column[H - 1][3] = next.w;
    float plane[H][W];
#pragma unroll
    for (int dy = -R; dy <= R; ++dy) {
      const float* row = row_of(z, y + dy);
      if (dy == 0) {
#pragma unroll
        for (int j = 0; j < 4; ++j) plane[R][R + j] = column[R][j];
      } else {
        const float4 v = __ldg(reinterpret_cast<const float4*>(row + c));
        plane[R + dy][R] = v.x, plane[R + dy][R + 1] = v.y, plane[R + dy][R + 2] = v.z, plane[R + dy][R + 3] = v.w;
      }
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        plane[R + dy][R - k] = __ldg(row + clamped(c - k, cols));
        plane[R + dy][R + 3 + k] = __ldg(row + clamped(c + 3 + k, cols));
      }
    }
    float4 o;
    o.x = Shape{}(queue_offsets{&plane[R][R], W, &column[0][0], R});
    o.y = Shape{}(queue_offsets{&plane[R][R + 1], W, &column[0][1], R});
    o.z = Shape{}(queue_offsets{&plane[R][R + 2], W, &column[0][2], R});
    o.w = Shape{}(queue_offsets{&plane[R][R + 3], W, &column[0][3], R});
    *reinterpret_cast<float4*>(out + std::size_t(z) * slice + std::size_t(y) * pitch + c) = o;
  }
}

// The same scheme with the plane in shared memory, as Micikevicius wrote it: blocks of BX x BY
// threads, each a float4 of outputs of one row; per plane the block stores its rows' centre
// vectors (from the queue), R rows above and below and R elements either side into a tile, waits,
// and every thread reads its plane neighbours from the tile. Threads past the volume's edge load
// what the clamp gives and store nothing. widths % 4 == 0.
template <class Shape, int BX, int BY>
__global__ void __launch_bounds__(BX* BY)
    volume_stencil_shared_queue(const float* __restrict__ in, float* __restrict__ out, int depth, int rows, int cols,
                                std::size_t pitch, std::size_t slice) {
  constexpr int R = Shape::radius, W = 4 + 2 * R, H = 2 * R + 1, tile_width = 4 * BX + 2 * R;
  __shared__ float tile[BY + 2 * R][tile_width];
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int c = (int(blockIdx.x) * BX + tx) * 4, y = int(blockIdx.y) * BY + ty;
  const bool inside = c < cols && y < rows;
  const int z_begin = int(blockIdx.z) * queue_planes_per_block;
  const int z_end = z_begin + queue_planes_per_block < depth ? z_begin + queue_planes_per_block : depth;
  const auto row_of = [&](int z, int row) {
    return in + std::size_t(clamped(z, depth)) * slice + std::size_t(clamped(row, rows)) * pitch;
  };
  const auto vector_at = [&](const float* row, float (&v)[4]) {  // past the last column: each element clamped
    if (c + 4 <= cols) {
      const float4 f = __ldg(reinterpret_cast<const float4*>(row + c));
      v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
      for (int j = 0; j < 4; ++j) v[j] = __ldg(row + clamped(c + j, cols));
    }
  };
  float column[H][4];  // column[R + dz]: the centre vector of plane z + dz
#pragma unroll
  for (int i = 1; i < H; ++i) vector_at(row_of(z_begin - R - 1 + i, y), column[i]);
  for (int z = z_begin; z < z_end; ++z) {
#pragma unroll
    for (int i = 0; i + 1 < H; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) column[i][j] = column[i + 1][j];
    vector_at(row_of(z + R, y), column[H - 1]);
    __syncthreads();  // the previous plane's reads of the tile are done
#pragma unroll
    for (int j = 0; j < 4; ++j) tile[R + ty][R + 4 * tx + j] = column[R][j];
    if (ty < R) {
      float above[4], below[4];
      vector_at(row_of(z, y - R), above);
      vector_at(row_of(z, int(blockIdx.y) * BY + BY + ty), below);
#pragma unroll
      for (int j = 0; j < 4; ++j) tile[ty][R + 4 * tx + j] = above[j], tile[R + BY + ty][R + 4 * tx + j] = below[j];
    }
    if (tx < R) {
      const float* row = row_of(z, y);
      const int left = int(blockIdx.x) * BX * 4 - R + tx, right = (int(blockIdx.x) + 1) * BX * 4 + tx;
      tile[R + ty][tx] = __ldg(row + clamped(left, cols));
      tile[R + ty][R + 4 * BX + tx] = __ldg(row + clamped(right, cols));
    }
    __syncthreads();
    float plane[H][W];
#pragma unroll
    for (int dy = -R; dy <= R; ++dy)
#pragma unroll
      for (int e = 0; e < W; ++e) plane[R + dy][e] = tile[R + ty + dy][4 * tx + e];
    float4 o;
    o.x = Shape{}(queue_offsets{&plane[R][R], W, &column[0][0], R});
    o.y = Shape{}(queue_offsets{&plane[R][R + 1], W, &column[0][1], R});
    o.z = Shape{}(queue_offsets{&plane[R][R + 2], W, &column[0][2], R});
    o.w = Shape{}(queue_offsets{&plane[R][R + 3], W, &column[0][3], R});
    if (inside) *reinterpret_cast<float4*>(out + std::size_t(z) * slice + std::size_t(y) * pitch + c) = o;
  }
}

template <class Shape>
std::vector<candidate> volume_stencil_competitors(coalesce::pitched_volume_view<const float> in,
                                                  coalesce::pitched_volume_view<float> out) {
  using coalesce::testing::row_role;
  const float* from = in.data();
  float* to = out.data();
  const int depth = int(in.depth()), rows = int(in.height()), cols = int(in.width());
  const std::size_t pitch = in.pitch_bytes() / sizeof(float), slice = in.slice_pitch_bytes() / sizeof(float);
  if (out.pitch_bytes() != in.pitch_bytes() || out.slice_pitch_bytes() != in.slice_pitch_bytes() ||
      out.depth() != in.depth() || out.height() != in.height() || out.width() != in.width())
    throw std::invalid_argument("volume stencil competitors: in and out need one shape and one pitch");
  require_float4("volume stencil competitors", in.width(), from, to);
  if (in.pitch_bytes() % 16 != 0 || in.slice_pitch_bytes() % 16 != 0)
    throw std::invalid_argument("volume stencil competitors: rows must be 16-byte aligned");
  constexpr int K = Shape::radius == 1 ? 2 : 1;
  const dim3 slabs(unsigned((cols / 4 + 63) / 64), unsigned((rows + 3) / 4),
                   unsigned(std::min((depth + K - 1) / K, 65535)));
  const dim3 walk(unsigned((cols + 127) / 128), unsigned(std::min((depth * rows + 3) / 4, 65535)));
  const dim3 queue(unsigned((cols / 4 + 63) / 64), unsigned((rows + 3) / 4),
                   unsigned((depth + queue_planes_per_block - 1) / queue_planes_per_block));
  const dim3 shared(unsigned((cols / 4 + 31) / 32), unsigned((rows + 7) / 8),
                    unsigned((depth + queue_planes_per_block - 1) / queue_planes_per_block));
  return {
      {"hand-written float4 slabs, 64 x 4 blocks, " + std::to_string(K) + " planes a thread", row_role::competitor,
       [=](cudaStream_t s) {
         volume_stencil_float4_slabs<Shape, K, 64>
             <<<slabs, dim3(64, 4), 0, s>>>(from, to, depth, rows, cols, pitch, slice);
       }},
      {"hand-written 2.5D, a register queue along z, 64 x 4 blocks, 32 planes a block", row_role::competitor,
       [=](cudaStream_t s) {
         volume_stencil_float4_queue<Shape, 64>
             <<<queue, dim3(64, 4), 0, s>>>(from, to, depth, rows, cols, pitch, slice);
       }},
      {"hand-written 2.5D, the plane in shared memory, 32 x 8 blocks, 32 planes a block", row_role::competitor,
       [=](cudaStream_t s) {
         volume_stencil_shared_queue<Shape, 32, 8>
             <<<shared, dim3(32, 8), 0, s>>>(from, to, depth, rows, cols, pitch, slice);
       }},
      {"hand-written one element per thread", row_role::competitor,
       [=](cudaStream_t s) {
         volume_stencil_one_per_thread<Shape><<<walk, dim3(128, 4), 0, s>>>(from, to, depth, rows, cols, pitch, slice);
       }},
  };
}

}  // namespace

std::vector<candidate> volume_stencil_clamped(volume_stencil_shape shape, coalesce::pitched_volume_view<const float> in,
                                              coalesce::pitched_volume_view<float> out) {
  switch (shape) {
    case volume_stencil_shape::seven_point: return volume_stencil_competitors<seven_point>(in, out);
    case volume_stencil_shape::twenty_five_point: return volume_stencil_competitors<twenty_five_point>(in, out);
  }
  throw std::invalid_argument("volume stencil competitors: unknown shape");
}

std::vector<candidate> stencil_clamped(stencil_shape shape, coalesce::pitched_view<const float> in,
                                       coalesce::pitched_view<float> out) {
  switch (shape) {
    case stencil_shape::five_point: return stencil_competitors<five_point>(in, out);
    case stencil_shape::nine_point: return stencil_competitors<nine_point>(in, out);
    case stencil_shape::thirteen_point: return stencil_competitors<thirteen_point>(in, out);
  }
  throw std::invalid_argument("stencil competitors: unknown shape");
}

}  // namespace coalesce_test::competitors
