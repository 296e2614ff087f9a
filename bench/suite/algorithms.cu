// The algorithm groups of the benchmark: for each piece of work, the hand-written kernels a user
// would write (naive and best), Thrust and CUB, and coalesce, on the same buffers. Every
// implementation is checked once against the host before it is timed.
#include "bench.hpp"

#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_transform.cuh>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>

#include "mixed.hpp"
#include "particles.hpp"

#include <cstdint>
#include <vector>

namespace bench {
namespace {

// dt is a power of two, so v * dt is exact and the device's fused multiply-add rounds as the host does.
constexpr float dt = 0.5f;

using coalesce_test::random_particles;

std::vector<Particle> drifted(std::vector<Particle> p) {
  for (auto& q : p) {
    q.x += q.vx * dt;
    q.y += q.vy * dt;
    q.z += q.vz * dt;
  }
  return p;
}

bool same_particles(const std::vector<Particle>& a, const std::vector<Particle>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!coalesce_test::same(a[i], b[i])) return false;
  return true;
}

unsigned blocks_for(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

// --- particle update -------------------------------------------------------------------------

struct drift {
  template <class P>
  __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

__global__ void drift_soa_naive(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz,
                                std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

// The best a careful user writes by hand: float4 columns, a grid-stride loop sized to one wave,
// __restrict__ so the velocities take the read-only path.
__global__ void drift_soa_float4(float4* __restrict__ x, float4* __restrict__ y, float4* __restrict__ z,
                                 const float4* __restrict__ vx, const float4* __restrict__ vy,
                                 const float4* __restrict__ vz, std::size_t n4) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += std::size_t(gridDim.x) * blockDim.x) {
    float4 px = x[i], py = y[i], pz = z[i];
    const float4 vxi = vx[i], vyi = vy[i], vzi = vz[i];
    px.x += vxi.x * dt; px.y += vxi.y * dt; px.z += vxi.z * dt; px.w += vxi.w * dt;
    py.x += vyi.x * dt; py.y += vyi.y * dt; py.z += vyi.z * dt; py.w += vyi.w * dt;
    pz.x += vzi.x * dt; pz.y += vzi.y * dt; pz.z += vzi.z * dt; pz.w += vzi.w * dt;
    x[i] = px;
    y[i] = py;
    z[i] = pz;
  }
}

__global__ void drift_aos_naive(Particle* p, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) drift{}(p[i]);
}

struct drift_tuple {
  template <class Tuple>
  __device__ void operator()(Tuple t) const {
    thrust::get<0>(t) += thrust::get<3>(t) * dt;
    thrust::get<1>(t) += thrust::get<4>(t) * dt;
    thrust::get<2>(t) += thrust::get<5>(t) * dt;
  }
};

struct drifted_position {
  template <class Tuple>
  __device__ thrust::tuple<float, float, float> operator()(const Tuple& t) const {
    return {thrust::get<0>(t) + thrust::get<3>(t) * dt, thrust::get<1>(t) + thrust::get<4>(t) * dt,
            thrust::get<2>(t) + thrust::get<5>(t) * dt};
  }
};

unsigned one_wave(const void* kernel, unsigned threads) {
  int sms = 0, resident = 0, device = 0;
  coalesce::throw_on_error(cudaGetDevice(&device), "cudaGetDevice");
  coalesce::throw_on_error(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
  coalesce::throw_on_error(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, int(threads), 0), "occupancy");
  return unsigned(sms * resident);
}

}  // namespace

void particle_update(runner& r) {
  const std::string group = "particle update in place (6 float columns, 3 written)";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = random_particles(n);
  const auto expected = drifted(initial);
  const coalesce::soa_vector<Particle, coalesce::host_space> initial_columns(initial);
  coalesce::soa_vector<Particle> soa(initial);
  ct::device_buffer<Particle> aos(initial);
  const auto v = soa.view();
  float *x = v.column<&Particle::x>(), *y = v.column<&Particle::y>(), *z = v.column<&Particle::z>();
  float *vx = v.column<&Particle::vx>(), *vy = v.column<&Particle::vy>(), *vz = v.column<&Particle::vz>();
  const auto zip_all = thrust::make_zip_iterator(x, y, z, vx, vy, vz);
  const auto zip_positions = thrust::make_zip_iterator(x, y, z);
  const unsigned float4_blocks = one_wave(reinterpret_cast<const void*>(drift_soa_float4), 256);

  struct candidate {
    std::string name;
    bool aos;
    std::function<void(cudaStream_t)> launch;
  };
  const std::vector<candidate> candidates = {
      {"hand-written SoA, one element per thread", false,
       [=](cudaStream_t s) { drift_soa_naive<<<blocks_for(n, 256), 256, 0, s>>>(x, y, z, vx, vy, vz, n); }},
      {"hand-written AoS (Particle*), one per thread", true,
       [&, n](cudaStream_t s) { drift_aos_naive<<<blocks_for(n, 256), 256, 0, s>>>(aos.data(), n); }},
      {"hand-written SoA, float4 + grid-stride + restrict", false,
       [=](cudaStream_t s) {
         drift_soa_float4<<<float4_blocks, 256, 0, s>>>(reinterpret_cast<float4*>(x), reinterpret_cast<float4*>(y),
                                                        reinterpret_cast<float4*>(z), reinterpret_cast<const float4*>(vx),
                                                        reinterpret_cast<const float4*>(vy),
                                                        reinterpret_cast<const float4*>(vz), n / 4);
       }},
      {"thrust::transform, zip of 6 columns into 3", false,
       [=](cudaStream_t s) { thrust::transform(thrust::cuda::par.on(s), zip_all, zip_all + n, zip_positions, drifted_position{}); }},
      {"thrust::for_each, zip in place", false,
       [=](cudaStream_t s) { thrust::for_each(thrust::cuda::par.on(s), zip_all, zip_all + n, drift_tuple{}); }},
      {"coalesce::for_each(soa_view)", false, [=](cudaStream_t s) { coalesce::for_each(v, drift{}, s); }},
  };
  for (const auto& c : candidates) {
    if (c.aos) {
      aos.upload(initial);
    } else {
      soa.assign(initial_columns);
    }
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(c.aos ? aos.download() : soa.to_vector(), expected)) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 36.0 * double(n), c.launch);
  }
}

// --- one column ------------------------------------------------------------------------------

namespace {

// x -> 0.25 - x: every launch changes every value (a map that converged would let coalesce skip
// its stores after a few launches and flatter it), and host and device round it the same way.
struct reflect {
  __device__ float operator()(float x) const { return 0.25f - x; }
};
struct reflect_in_place {
  __device__ void operator()(float& x) const { x = 0.25f - x; }
};

__global__ void column_naive(float* x, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = 0.25f - x[i];
}

__global__ void column_float4(float4* __restrict__ x, std::size_t n4) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4; i += std::size_t(gridDim.x) * blockDim.x) {
    float4 v = x[i];
    v.x = 0.25f - v.x;
    v.y = 0.25f - v.y;
    v.z = 0.25f - v.z;
    v.w = 0.25f - v.w;
    x[i] = v;
  }
}

}  // namespace

void one_column(runner& r) {
  const std::string group = "one float column, read-modify-write";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 28;
  const auto initial = ct::random_values<float>(n);
  std::vector<float> expected(initial);
  for (auto& e : expected) e = 0.25f - e;
  ct::device_buffer<float> data(initial), out(n);
  float* x = data.data();
  float* y = out.data();
  const unsigned float4_blocks = one_wave(reinterpret_cast<const void*>(column_float4), 256);

  struct candidate {
    std::string name;
    bool out_of_place;
    std::function<void(cudaStream_t)> launch;
  };
  const std::vector<candidate> candidates = {
      {"hand-written, one element per thread", false,
       [=](cudaStream_t s) { column_naive<<<blocks_for(n, 256), 256, 0, s>>>(x, n); }},
      {"hand-written, float4 + grid-stride", false,
       [=](cudaStream_t s) { column_float4<<<float4_blocks, 256, 0, s>>>(reinterpret_cast<float4*>(x), n / 4); }},
      {"thrust::transform in place", false,
       [=](cudaStream_t s) { thrust::transform(thrust::cuda::par.on(s), x, x + n, x, reflect{}); }},
      {"cub::DeviceTransform in place", false,
       [=](cudaStream_t s) {
         coalesce::throw_on_error(cub::DeviceTransform::Transform(x, x, n, reflect{}, s), "cub::DeviceTransform");
       }},
      {"coalesce::for_each(span)", false,
       [=](cudaStream_t s) { coalesce::for_each(cuda::std::span<float>(x, n), reflect_in_place{}, s); }},
      {"cub::DeviceTransform, into another column", true,
       [=](cudaStream_t s) {
         coalesce::throw_on_error(cub::DeviceTransform::Transform(x, y, n, reflect{}, s), "cub::DeviceTransform");
       }},
      {"coalesce::transform, into another column", true,
       [=](cudaStream_t s) {
         coalesce::transform(cuda::std::span<const float>(x, n), cuda::std::span<float>(y, n), reflect{}, s);
       }},
  };
  for (const auto& c : candidates) {
    data.upload(initial);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if ((c.out_of_place ? out.download() : data.download()) != expected) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 8.0 * double(n), c.launch);
  }
}

// --- eight mixed columns -----------------------------------------------------------------------

namespace {

// Reads all eight columns, writes a, b and g; no column converges, so every launch stores all three.
struct mix {
  template <class M>
  __host__ __device__ void operator()(M&& m) const {
    coalesce::get<0>(m) += coalesce::get<4>(m) * float(coalesce::get<2>(m) & 7);
    coalesce::get<1>(m) = coalesce::get<5>(m) * double(coalesce::get<3>(m)) - coalesce::get<1>(m);
    coalesce::get<6>(m) += std::int32_t(coalesce::get<7>(m));
  }
};

struct mix_tuple {
  template <class Tuple>
  __device__ void operator()(Tuple t) const {
    thrust::get<0>(t) += thrust::get<4>(t) * float(thrust::get<2>(t) & 7);
    thrust::get<1>(t) = thrust::get<5>(t) * double(thrust::get<3>(t)) - thrust::get<1>(t);
    thrust::get<6>(t) += std::int32_t(thrust::get<7>(t));
  }
};

__global__ void mix_naive(float* __restrict__ a, double* __restrict__ b, const std::int32_t* __restrict__ c,
                          const std::int16_t* __restrict__ d, const float* __restrict__ e, const double* __restrict__ f,
                          std::int32_t* __restrict__ g, const std::int16_t* __restrict__ h, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    a[i] += e[i] * float(c[i] & 7);
    b[i] = f[i] * double(d[i]) - b[i];
    g[i] += std::int32_t(h[i]);
  }
}

std::vector<Mixed> random_mixed(std::size_t n) {
  const auto r = ct::random_values<float>(2 * n);
  std::vector<Mixed> m(n);
  for (std::size_t i = 0; i < n; ++i)
    // e and f hold few significant bits, so every product is exact and the device's fused
    // multiply-adds round as the host's separate operations do.
    m[i] = {r[2 * i], double(r[2 * i + 1]), std::int32_t(i * 7919u), std::int16_t(i % 1000), float(i % 1024) * 0.5f,
            double(i % 4096), std::int32_t(i), std::int16_t(i % 77)};
  return m;
}

bool same_mixed(const std::vector<Mixed>& x, const std::vector<Mixed>& y) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].a != y[i].a || x[i].b != y[i].b || x[i].c != y[i].c || x[i].d != y[i].d || x[i].e != y[i].e ||
        x[i].f != y[i].f || x[i].g != y[i].g || x[i].h != y[i].h)
      return false;
  return x.size() == y.size();
}

}  // namespace

void mixed_columns(runner& r) {
  const std::string group = "8 mixed columns (float, double, int, short), 3 written";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 24;
  const auto initial = random_mixed(n);
  auto expected = initial;
  for (auto& m : expected) mix{}(m);
  const coalesce::soa_vector<Mixed, coalesce::host_space> initial_columns(initial);
  coalesce::soa_vector<Mixed> soa(initial);
  const auto v = soa.view();

  const std::vector<candidate> candidates = {
      {"hand-written, one element per thread, restrict",
       [=](cudaStream_t s) {
         mix_naive<<<blocks_for(n, 256), 256, 0, s>>>(v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(),
                                                      v.column<4>(), v.column<5>(), v.column<6>(), v.column<7>(), n);
       }},
      {"thrust::for_each, zip of 8 columns in place",
       [=](cudaStream_t s) {
         const auto zip = thrust::make_zip_iterator(v.column<0>(), v.column<1>(), v.column<2>(), v.column<3>(),
                                                    v.column<4>(), v.column<5>(), v.column<6>(), v.column<7>());
         thrust::for_each(thrust::cuda::par.on(s), zip, zip + n, mix_tuple{});
       }},
      {"coalesce::for_each(soa_view)", [=](cudaStream_t s) { coalesce::for_each(v, mix{}, s); }},
  };
  // Bytes the work must move: all 8 columns read (36 B), a, b, g written (16 B).
  for (const auto& c : candidates) {
    soa.assign(initial_columns);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_mixed(soa.to_vector(), expected)) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 52.0 * double(n), c.launch);
  }
}

// --- pitched rows --------------------------------------------------------------------------------

namespace {

struct reflect_at {
  coalesce::pitched_view<float> v;
  __device__ void operator()(std::size_t i, std::size_t j) const { v(i, j) = 0.25f - v(i, j); }
};

__global__ void rows_2d_naive(coalesce::pitched_view<float> m) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t r = blockIdx.y * std::size_t(blockDim.y) + threadIdx.y;
  if (r < m.rows() && c < m.cols()) m(r, c) = 0.25f - m(r, c);
}

// float4 along each row (rows start on 128-byte boundaries), the rows' vectors walked as one
// grid-stride range.
__global__ void rows_float4(float* __restrict__ data, std::size_t rows, std::size_t vectors_per_row, std::size_t pitch4) {
  const std::size_t total = rows * vectors_per_row;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t r = unsigned(i) / unsigned(vectors_per_row), k = unsigned(i) % unsigned(vectors_per_row);
    float4* p = reinterpret_cast<float4*>(data) + r * pitch4 + k;
    float4 v = *p;
    v.x = 0.25f - v.x;
    v.y = 0.25f - v.y;
    v.z = 0.25f - v.z;
    v.w = 0.25f - v.w;
    *p = v;
  }
}

}  // namespace

void pitched_rows(runner& r) {
  const std::string group = "row operation, pitched 200000 x 1000 floats";
  std::printf("%s\n", group.c_str());
  const std::size_t rows = 200000, cols = 1000;
  const auto initial = ct::random_values<float>(rows * cols);
  std::vector<float> expected(initial);
  for (auto& e : expected) e = 0.25f - e;
  coalesce::pitched_matrix<float> m(initial, rows, cols);
  ct::device_buffer<float> dense(initial);
  const auto v = m.view();
  const unsigned float4_blocks = one_wave(reinterpret_cast<const void*>(rows_float4), 256);

  struct candidate {
    std::string name;
    bool dense;
    std::function<void(cudaStream_t)> launch;
  };
  const std::vector<candidate> candidates = {
      {"hand-written 2D, 16 x 16 threads", false,
       [=](cudaStream_t s) {
         rows_2d_naive<<<dim3(unsigned((cols + 15) / 16), unsigned((rows + 15) / 16)), dim3(16, 16), 0, s>>>(v);
       }},
      {"coalesce::for_each_index(r, c), 128 x 4 walk", false,
       [=](cudaStream_t s) {
         coalesce::for_each_index(v, reflect_at{v}, s);
       }},
      {"hand-written float4 rows, grid-stride", false,
       [=](cudaStream_t s) {
         rows_float4<<<float4_blocks, 256, 0, s>>>(v.data(), rows, cols / 4, v.pitch_bytes() / sizeof(float4));
       }},
      {"coalesce::for_each(pitched_view)", false,
       [=](cudaStream_t s) { coalesce::for_each(v, reflect_in_place{}, s); }},
      {"cub::DeviceTransform, same floats dense", true,
       [&dense, n = rows * cols](cudaStream_t s) {
         coalesce::throw_on_error(cub::DeviceTransform::Transform(dense.data(), dense.data(), n, reflect{}, s),
                                  "cub::DeviceTransform");
       }},
  };
  for (const auto& c : candidates) {
    if (c.dense) {
      dense.upload(initial);
    } else {
      m.copy_from(initial);
    }
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if ((c.dense ? dense.download() : m.to_vector()) != expected) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 8.0 * double(rows * cols), c.launch);
  }
}

// --- array of structs ------------------------------------------------------------------------------

void array_of_structs(runner& r) {
  const std::string group = "array of structs (Particle*, 24 B), whole structs read and written";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = random_particles(n);
  const auto expected = drifted(initial);
  ct::device_buffer<Particle> aos(initial);
  Particle* p = aos.data();

  const std::vector<candidate> candidates = {
      {"hand-written, one Particle per thread",
       [=](cudaStream_t s) { drift_aos_naive<<<blocks_for(n, 256), 256, 0, s>>>(p, n); }},
      {"thrust::for_each(Particle*)",
       [=](cudaStream_t s) {
         thrust::for_each(thrust::cuda::par.on(s), p, p + n, drift{});
       }},
      {"coalesce::for_each(Particle*, n), staged", [=](cudaStream_t s) { coalesce::for_each(p, n, drift{}, s); }},
  };
  for (const auto& c : candidates) {
    aos.upload(initial);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(aos.download(), expected)) r.mismatch(group + ": " + c.name);
    r.run(group, c.name, 48.0 * double(n), c.launch);
  }
}

}  // namespace bench
