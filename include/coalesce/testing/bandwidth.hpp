// coalesce::testing: effective bandwidth of a launch as a ratio to cudaMemcpy device-to-device,
// both measured in this process on this device. Absolute times vary with clocks, drivers and
// neighbours; a ratio to the copy engine measured seconds earlier does not (much), so tests
// assert ratios and benchmarks report both.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/testing/device.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace coalesce::testing {

// The median of `samples` (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

struct timing_options {
  int warmup = 3;       // launches before timing starts: module load, caches, clocks
  int repetitions = 20; // timed launches; the median is reported
  cudaStream_t stream = nullptr;
};

// Times `launch(stream)` (which enqueues work on `stream`) with CUDA events, one event pair per
// repetition, after warm-up. Returns every sample in milliseconds.
template <class Launch>
std::vector<double> time_launches_ms(Launch&& launch, const timing_options& options = {}) {
  if (options.repetitions < 1) throw std::invalid_argument("coalesce::testing::time_launches_ms: repetitions < 1");
  cudaEvent_t start = nullptr, stop = nullptr;
  throw_on_error(::cudaEventCreate(&start), "cudaEventCreate");
  if (cudaError_t e = ::cudaEventCreate(&stop); e != cudaSuccess) {
    (void)::cudaEventDestroy(start);
    throw cuda_error(e, "cudaEventCreate");
  }
  struct event_guard {
    cudaEvent_t a, b;
    ~event_guard() {
      (void)::cudaEventDestroy(a);
      (void)::cudaEventDestroy(b);
    }
  } guard{start, stop};

  for (int i = 0; i < options.warmup; ++i) launch(options.stream);
  throw_on_error(::cudaGetLastError(), "warm-up launch");
  throw_on_error(::cudaStreamSynchronize(options.stream), "warm-up");

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(options.repetitions));
  for (int i = 0; i < options.repetitions; ++i) {
    throw_on_error(::cudaEventRecord(start, options.stream), "cudaEventRecord");
    launch(options.stream);
    throw_on_error(::cudaGetLastError(), "timed launch");
    throw_on_error(::cudaEventRecord(stop, options.stream), "cudaEventRecord");
    throw_on_error(::cudaEventSynchronize(stop), "timed launch");
    float ms = 0.0f;
    throw_on_error(::cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    samples.push_back(static_cast<double>(ms));
  }
  return samples;
}

// One measured launch: its median time, the bytes it had to move, and what that makes.
struct bandwidth_result {
  double median_ms = 0.0;
  double bytes_moved = 0.0;       // bytes read + bytes written by the work, as the caller counts
  double gigabytes_per_s = 0.0;   // bytes_moved / median time, 1 GB = 1e9 B
  double ratio_to_memcpy = 0.0;   // gigabytes_per_s over the reference copy's, same counting
};

// Measures launches against a cudaMemcpy device-to-device reference taken when the meter is
// made. The reference copies a buffer of `reference_bytes` (default: 4x the device's L2, at
// least 256 MiB, so it streams from DRAM) and counts its bytes read plus written.
class bandwidth_meter {
 public:
  explicit bandwidth_meter(std::size_t reference_bytes = default_reference_bytes(),
                           timing_options options = {})
      : options_(options), reference_bytes_(reference_bytes) {
    device_buffer<unsigned char> src(reference_bytes), dst(reference_bytes);
    throw_on_error(::cudaMemset(src.data(), 0x5A, reference_bytes), "cudaMemset (reference source)");
    const auto samples = time_launches_ms(
        [&](cudaStream_t s) {
          throw_on_error(::cudaMemcpyAsync(dst.data(), src.data(), reference_bytes, cudaMemcpyDeviceToDevice, s),
                         "cudaMemcpyAsync (reference copy)");
        },
        options_);
    memcpy_ms_ = median(samples);
    memcpy_gbps_ = 2.0 * static_cast<double>(reference_bytes) / (memcpy_ms_ * 1e6);
  }

  static std::size_t default_reference_bytes() {
    const std::size_t l2 = static_cast<std::size_t>(current_device_properties().l2CacheSize);
    return std::max<std::size_t>(4 * l2, std::size_t(256) << 20);
  }

  double memcpy_gigabytes_per_s() const noexcept { return memcpy_gbps_; }
  double memcpy_median_ms() const noexcept { return memcpy_ms_; }
  std::size_t reference_bytes() const noexcept { return reference_bytes_; }
  const timing_options& options() const noexcept { return options_; }

  // Times `launch(stream)`; `bytes_moved` is what the work must read plus write.
  template <class Launch>
  bandwidth_result measure(Launch&& launch, double bytes_moved) const {
    bandwidth_result r;
    r.median_ms = median(time_launches_ms(std::forward<Launch>(launch), options_));
    r.bytes_moved = bytes_moved;
    r.gigabytes_per_s = bytes_moved / (r.median_ms * 1e6);
    r.ratio_to_memcpy = r.gigabytes_per_s / memcpy_gbps_;
    return r;
  }

 private:
  timing_options options_;
  std::size_t reference_bytes_;
  double memcpy_ms_ = 0.0;
  double memcpy_gbps_ = 0.0;
};

}  // namespace coalesce::testing
