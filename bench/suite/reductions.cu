// The reductions group of the benchmark: the total kinetic energy of 32 M particles, coalesce's
// transform_reduce on a soa_view against CUB's TransformReduce, Thrust's transform_reduce and the
// best hand-written kernel we know on the same three velocity columns, each in its fastest form
// (CUB and the hand-written kernel with their scratch allocated once outside the timing, Thrust
// with par_nosync, every result but Thrust's left in device memory). Checked against a host sum.
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform_reduce.h>

#include "bench.hpp"
#include "particles.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace bench {
namespace {

using coalesce_test::kinetic_energy;
using coalesce_test::plus;

struct kinetic_energy_of_zip {
  template <class Tuple>
  __host__ __device__ double operator()(const Tuple& v) const {
    const float vx = cuda::std::get<0>(v), vy = cuda::std::get<1>(v), vz = cuda::std::get<2>(v);
    return 0.5 * (double(vx) * vx + double(vy) * vy + double(vz) * vz);
  }
};
// The energy of particle i, read from three raw columns.
struct kinetic_energy_at {
  const float* vx;
  const float* vy;
  const float* vz;
  __host__ __device__ double operator()(std::size_t i) const {
    return 0.5 * (double(vx[i]) * vx[i] + double(vy[i]) * vy[i] + double(vz[i]) * vz[i]);
  }
};

__device__ double kinetic_energy_of(float4 vx, float4 vy, float4 vz) {
  const auto e = [](float x, float y, float z) { return 0.5 * (double(x) * x + double(y) * y + double(z) * z); };
  return e(vx.x, vy.x, vz.x) + e(vx.y, vy.y, vz.y) + e(vx.z, vy.z, vz.z) + e(vx.w, vy.w, vz.w);
}

// The reduction as we would write it by hand for speed: one wave of blocks striding over the
// columns as float4s through the read-only path, two of each in flight per thread, a block sum
// per block, and the last block to arrive (a counter the launch zeroes) sums those. n % 4 == 0.
constexpr unsigned hand_threads = 256;
__global__ void __launch_bounds__(hand_threads)
    kinetic_energy_float4(const float4* __restrict__ vx, const float4* __restrict__ vy, const float4* __restrict__ vz,
                          std::size_t vectors, double* __restrict__ partials, unsigned* arrivals, double* out) {
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double sum = 0.0;
  for (; i + step < vectors; i += 2 * step) {
    const float4 x0 = __ldg(vx + i), y0 = __ldg(vy + i), z0 = __ldg(vz + i);
    const float4 x1 = __ldg(vx + i + step), y1 = __ldg(vy + i + step), z1 = __ldg(vz + i + step);
    sum += kinetic_energy_of(x0, y0, z0) + kinetic_energy_of(x1, y1, z1);
  }
  if (i < vectors) sum += kinetic_energy_of(__ldg(vx + i), __ldg(vy + i), __ldg(vz + i));

  using block_sum = cub::BlockReduce<double, hand_threads>;
  __shared__ typename block_sum::TempStorage temp;
  __shared__ bool last;
  sum = block_sum(temp).Sum(sum);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    __threadfence();
    last = atomicInc(arrivals, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double blocks = 0.0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) blocks += __ldcg(partials + b);
  __syncthreads();
  blocks = block_sum(temp).Sum(blocks);
  if (threadIdx.x == 0) *out = blocks;
}

// Velocities from a hash of the particle's index (and the component), in [-0.5, 0.5): the device
// fills the columns and the host sums the same values, without 3 GB of host data to move.
__host__ __device__ float velocity_of(std::size_t i, unsigned component) {
  std::uint32_t h = std::uint32_t(i) * 2654435761u ^ std::uint32_t(i >> 32) ^ (component + 1) * 0x9e3779b9u;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return float(h & 0xffffu) / 65536.0f - 0.5f;
}

void kinetic_energy_group(runner& r, std::size_t n, const std::string& group, double floor_of_peak) {
  coalesce::soa_vector<Particle> particles(n);
  const auto v = particles.view();
  coalesce::for_each_index(v, [v] __device__(std::size_t i) {
    v[i].vx = velocity_of(i, 0);
    v[i].vy = velocity_of(i, 1);
    v[i].vz = velocity_of(i, 2);
  });
  ct::check_sync("filling the velocity columns");
  double expected = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    Particle p{};
    p.vx = velocity_of(i, 0), p.vy = velocity_of(i, 1), p.vz = velocity_of(i, 2);
    expected += kinetic_energy{}(p);
  }

  const float* vx = v.column<&Particle::vx>();
  const float* vy = v.column<&Particle::vy>();
  const float* vz = v.column<&Particle::vz>();
  ct::device_buffer<double> result(1);
  double* out = result.data();

  const thrust::counting_iterator<std::size_t> first(0);
  std::size_t temp_bytes = 0;
  coalesce::throw_on_error(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, out, n, plus{},
                                                              kinetic_energy_at{vx, vy, vz}, 0.0),
                           "cub::DeviceReduce::TransformReduce (sizing)");
  ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
  unsigned char* temp_storage = temp.data();
  const auto zip = thrust::make_zip_iterator(vx, vy, vz);

  int device = 0, sms = 0, resident = 0;
  coalesce::throw_on_error(cudaGetDevice(&device), "cudaGetDevice");
  coalesce::throw_on_error(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                           "cudaDeviceGetAttribute");
  coalesce::throw_on_error(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kinetic_energy_float4, hand_threads,
                                                                         0),
                           "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  const unsigned hand_blocks = unsigned(sms * resident);
  ct::device_buffer<double> hand_partials(hand_blocks);
  ct::device_buffer<unsigned> hand_arrivals(1);
  double* partials = hand_partials.data();
  unsigned* arrivals = hand_arrivals.data();
  const auto* vx4 = reinterpret_cast<const float4*>(vx);
  const auto* vy4 = reinterpret_cast<const float4*>(vy);
  const auto* vz4 = reinterpret_cast<const float4*>(vz);

  double thrust_sum = -1.0;  // where Thrust's row leaves its sum (on the host)
  std::printf("%s\n", group.c_str());
  const std::vector<candidate> candidates{
      {"cub::DeviceReduce::TransformReduce over the 3 columns", row_role::competitor,
       [=](cudaStream_t s) {
         std::size_t bytes = temp_bytes;
         coalesce::throw_on_error(cub::DeviceReduce::TransformReduce(temp_storage, bytes, first, out, n, plus{},
                                                                     kinetic_energy_at{vx, vy, vz}, 0.0, s),
                                  "cub::DeviceReduce::TransformReduce");
       }},
      {"hand-written, float4 per column, restrict, last block sums", row_role::competitor,
       [=](cudaStream_t s) {
         coalesce::throw_on_error(cudaMemsetAsync(arrivals, 0, sizeof(unsigned), s), "cudaMemsetAsync");
         kinetic_energy_float4<<<hand_blocks, hand_threads, 0, s>>>(vx4, vy4, vz4, n / 4, partials, arrivals, out);
       }},
      {"thrust::transform_reduce, zip of 3, par_nosync", row_role::competitor,
       [=, &thrust_sum](cudaStream_t s) {
         // Thrust returns the sum to the host: its copy-out waits for the stream, par_nosync or not.
         thrust_sum = thrust::transform_reduce(thrust::cuda::par_nosync.on(s), zip, zip + n, kinetic_energy_of_zip{},
                                               0.0, plus{});
       }},
      {"coalesce::transform_reduce(soa_view), result in device memory", row_role::library,
       [=](cudaStream_t s) { coalesce::transform_reduce(v, kinetic_energy{}, 0.0, plus{}, out, s); },
       row_target{targets::versus_best_competitor, floor_of_peak}},
  };
  for (const auto& c : candidates) {
    result.poison();
    thrust_sum = -1.0;
    c.launch(0);
    ct::check_sync(c.name.c_str());
    const double got = thrust_sum >= 0.0 ? thrust_sum : result.download()[0];
    if (!(std::abs(got - expected) <= 1e-9 * std::abs(expected))) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 12.0 * double(n));
}

}  // namespace

// The same work at two sizes: 32 M particles (402 MB read, about 0.1 ms), where a launch's fixed
// costs (start, the blocks' ramp, the last block's sum) are several percent of the time, and
// 256 M (3.2 GB), where they are not and the read bandwidth shows.
void reductions(runner& r) {
  kinetic_energy_group(r, std::size_t(1) << 25,
                       "kinetic energy of 32 M particles (3 float columns read, one double out)",
                       targets::reduction_of_peak_one_launch);
  kinetic_energy_group(r, std::size_t(1) << 28,
                       "kinetic energy of 256 M particles (3 float columns read, one double out)",
                       targets::reduction_of_peak);
}

}  // namespace bench
