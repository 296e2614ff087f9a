// The test harness measured against kernels whose costs are known: if these numbers are wrong,
// every efficiency assertion in coalesce is wrong.
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace ct = coalesce::testing;

namespace {

using coalesce_test::profiler;

template <class T>
__global__ void copy_one_per_thread(const T* __restrict__ in, T* __restrict__ out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// float4 copy with four independent 16-byte loads in flight per thread, each coalesced.
__global__ void copy_float4_unrolled(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  constexpr int per_thread = 4;
  const std::size_t first = blockIdx.x * std::size_t(blockDim.x) * per_thread + threadIdx.x;
  float4 v[per_thread];
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    const std::size_t i = first + std::size_t(k) * blockDim.x;
    if (i < n) v[k] = in[i];
  }
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    const std::size_t i = first + std::size_t(k) * blockDim.x;
    if (i < n) out[i] = v[k];
  }
}

__global__ void read_stride(const float* __restrict__ in, float* __restrict__ out, std::size_t n, unsigned stride) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
}

// The textbook 32x32 tiled transpose, blocks of 32x8 threads; Pad = 0 is the bank-conflicted one.
template <int Pad>
__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[32][32 + Pad];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[std::size_t(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) out[std::size_t(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

std::size_t elements_for(std::size_t bytes, std::size_t elem) {
  return ct::small_problems() ? (std::size_t(1) << 20) / elem : bytes / elem;
}

unsigned blocks_for(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace

TEST_CASE("a coalesced float copy measures 4.0 load and store sectors per request") {
  const std::size_t n = elements_for(std::size_t(64) << 20, sizeof(float));
  ct::device_buffer<float> in(ct::random_values<float>(n)), out(n);
  out.poison();
  auto launch = [&] {
    copy_one_per_thread<<<blocks_for(n, 256), 256>>>(in.data(), out.data(), n);
    ct::check_launch();
  };
  launch();
  ct::check_sync();
  REQUIRE(out.download() == in.download());
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure(launch);
  std::printf("coalesced float copy: %.0f load sectors / %.0f requests = %.3f; stores %.3f\n", m.global_load_sectors(),
              m.global_load_requests(), m.load_sectors_per_request(), m.store_sectors_per_request());
  REQUIRE(m.kernels() == 1);
  REQUIRE(m.global_load_requests() == Approx(double(n) / 32));
  REQUIRE(m.load_sectors_per_request() == Approx(4.0));
  REQUIRE(m.store_sectors_per_request() == Approx(4.0));
}

TEST_CASE("a stride-8-float read measures 32 load sectors per request") {
  const unsigned stride = 8;
  const std::size_t n = elements_for(std::size_t(16) << 20, sizeof(float));
  ct::device_buffer<float> in(ct::random_values<float>(n * stride)), out(n);
  out.poison();
  auto launch = [&] {
    read_stride<<<blocks_for(n, 256), 256>>>(in.data(), out.data(), n, stride);
    ct::check_launch();
  };
  launch();
  ct::check_sync();
  const auto host_in = in.download();
  const auto host_out = out.download();
  for (std::size_t i = 0; i < n; i += 4097) REQUIRE(host_out[i] == host_in[i * stride]);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure(launch);
  std::printf("stride-8 float read: %.3f load sectors per request\n", m.load_sectors_per_request());
  REQUIRE(m.load_sectors_per_request() == Approx(32.0));
  REQUIRE(m.store_sectors_per_request() == Approx(4.0));
}

TEST_CASE("the reference copy runs under the DRAM peak, and a copy measured through the meter lands on it") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t bytes = ct::small_problems() ? std::size_t(1) << 20 : std::size_t(1) << 30;
  ct::device_buffer<unsigned char> src(bytes), dst(bytes);
  COALESCE_CUDA_CHECK(cudaMemset(src.data(), 0x3C, bytes));
  auto copy = [&](cudaStream_t s) {
    COALESCE_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s));
  };
  copy(0);
  ct::check_sync();
  REQUIRE(dst.download() == src.download());
  COALESCE_REQUIRE_TIMING();
  ct::bandwidth_meter meter;
  const auto peak = meter.dram_peak_gigabytes_per_s();
  std::printf("reference: %zu MiB copied %d times back to back, best of %d samples: %.1f GB/s; DRAM peak %.1f GB/s "
              "(2 x %.0f MHz x %d bits): the copy reaches %.1f%% of it\n",
              meter.reference().copy_bytes >> 20, meter.reference().copies_per_sample, meter.reference().samples,
              meter.memcpy_gigabytes_per_s(), peak, meter.peak().memory_clock_khz / 1e3, meter.peak().bus_width_bits,
              100.0 * meter.memcpy_gigabytes_per_s() / peak);
  REQUIRE(meter.reference().copy_bytes >= std::size_t(1) << 30);
  REQUIRE(meter.memcpy_gigabytes_per_s() < peak);
  REQUIRE(meter.memcpy_gigabytes_per_s() > 0.5 * peak);
  // One copy per timed launch, the median: at most the best of back-to-back samples, and close.
  const auto measured = meter.measure(copy, 2.0 * double(bytes));
  std::printf("the same copy through bandwidth_meter::measure: %.3f of the reference\n", measured.ratio_to_memcpy);
  CHECK(measured.ratio_to_memcpy <= 1.02);
  CHECK(measured.ratio_to_memcpy >= 0.90);
  // Work that moves more than the reference copy makes the meter take a larger reference.
  const auto larger = meter.measure(copy, 6.0 * double(std::size_t(1) << 30));
  CHECK(meter.reference().copy_bytes >= std::size_t(3) << 30);
  CHECK(larger.memcpy_gigabytes_per_s == meter.memcpy_gigabytes_per_s());
}

TEST_CASE("a float4 copy measures 16 sectors per request and reaches 90 percent of cudaMemcpy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t bytes = ct::small_problems() ? std::size_t(1) << 20 : std::size_t(1) << 30;
  const std::size_t n = bytes / sizeof(float4);
  ct::device_buffer<float> in_floats(ct::random_values<float>(n * 4));
  ct::device_buffer<float4> out(n);
  out.poison();
  const auto* in = reinterpret_cast<const float4*>(in_floats.data());
  const unsigned threads = 256;
  const unsigned blocks = unsigned((n + threads * 4 - 1) / (threads * 4));
  auto launch = [&](cudaStream_t s = nullptr) { copy_float4_unrolled<<<blocks, threads, 0, s>>>(in, out.data(), n); };
  launch();
  ct::check_launch();
  ct::check_sync();
  {
    const auto a = in_floats.download();
    const auto b = out.download();
    REQUIRE(std::memcmp(a.data(), b.data(), n * sizeof(float4)) == 0);
  }
  COALESCE_REQUIRE_COUNTERS(profiler());
  ct::bandwidth_meter meter;
  const auto bw = meter.measure(launch, 2.0 * double(n * sizeof(float4)));
  std::printf("float4 copy: %.1f GB/s, cudaMemcpy %.1f GB/s, ratio %.3f, %.1f%% of the DRAM peak\n", bw.gigabytes_per_s,
              meter.memcpy_gigabytes_per_s(), bw.ratio_to_memcpy, 100.0 * bw.fraction_of_dram_peak);
  REQUIRE(bw.ratio_to_memcpy >= 0.90);
  const auto m = profiler().measure([&] { launch(); });
  std::printf("float4 copy: %.3f load sectors per request\n", m.load_sectors_per_request());
  REQUIRE(m.load_sectors_per_request() == Approx(16.0));
  REQUIRE(m.store_sectors_per_request() == Approx(16.0));
}

TEST_CASE("a 32x32 shared transpose conflicts 32 ways unpadded and is conflict-free padded to 33") {
  const int n = ct::small_problems() ? 256 : 4096;
  const std::size_t count = std::size_t(n) * n;
  ct::device_buffer<float> in(ct::random_values<float>(count)), out(count);
  const dim3 grid(n / 32, n / 32), block(32, 8);
  auto run = [&](auto kernel) {
    out.poison();
    kernel<<<grid, block>>>(in.data(), out.data(), n);
    ct::check_launch();
    ct::check_sync();
    const auto a = in.download();
    const auto b = out.download();
    for (int r = 0; r < n; r += 37)
      for (int c = 0; c < n; c += 41) REQUIRE(b[std::size_t(c) * n + r] == a[std::size_t(r) * n + c]);
  };
  run(transpose_tile<0>);
  run(transpose_tile<1>);
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto unpadded = profiler().measure([&] { transpose_tile<0><<<grid, block>>>(in.data(), out.data(), n); });
  const auto padded = profiler().measure([&] { transpose_tile<1><<<grid, block>>>(in.data(), out.data(), n); });
  std::printf("transpose [32][32]: %.3f shared wavefronts per load instruction; [32][33]: %.3f\n",
              unpadded.shared_load_wavefronts_per_instruction(), padded.shared_load_wavefronts_per_instruction());
  REQUIRE(unpadded.shared_load_wavefronts_per_instruction() == Approx(32.0).epsilon(0.05));
  REQUIRE(padded.shared_load_wavefronts_per_instruction() <= 1.1);
  // Row-wise stores into the tile are conflict-free in both layouts.
  REQUIRE(unpadded.shared_store_wavefronts_per_instruction() <= 1.1);
}
