// coalesce::testing: effective bandwidth of a launch as a ratio to cudaMemcpy device-to-device
// and as a fraction of the DRAM peak, both measured in this process on this device. Absolute
// times vary with clocks, drivers and neighbours; a ratio to the copy engine measured seconds
// earlier does not (much), so tests assert ratios and benchmarks report both.
//
// The reference is made hard to beat on purpose: the best of several samples, each several
// back-to-back copies of a buffer of at least 1 GiB and at least half the bytes the measured work
// moves (a copy reads and writes its buffer). A short copy is a weak reference: on an NVIDIA H200
// (CUDA 13.0) one 256 MiB copy ran at 4011 GB/s, a 1 GiB one at 4183 GB/s and ten 2 GiB copies
// back to back at 4244 GB/s.
#pragma once
/// @file

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

/// The median of `samples` (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

/// How time_launches_ms, and a bandwidth_meter's measurements, time a launch.
struct timing_options {
  int warmup = 3;       ///< launches before timing starts: module load, caches, clocks
  int repetitions = 20; ///< timed launches; the median is reported
  cudaStream_t stream = nullptr;  ///< where the launches are enqueued and timed (the null stream)
};

/// Times `launch(stream)` (which enqueues work on `stream`) with CUDA events, one event pair per
/// repetition, after warm-up. Returns every sample in milliseconds.
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

/// The DRAM peak of a device from its attributes: two transfers per memory clock (double data
/// rate) across the whole bus. What no kernel can exceed, whatever its mix of reads and writes.
struct dram_peak {
  double memory_clock_khz = 0.0;  ///< the memory clock, in kHz (cudaDevAttrMemoryClockRate)
  int bus_width_bits = 0;         ///< the memory bus's width, in bits

  /// 2 x clock x bus width, in GB/s (1 GB = 1e9 B).
  double gigabytes_per_s() const noexcept { return 2.0 * memory_clock_khz * 1e3 * double(bus_width_bits) / 8.0 / 1e9; }
};

/// The current device's DRAM peak (cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth).
inline dram_peak current_dram_peak() {
  int device = 0, clock_khz = 0, bus_bits = 0;
  throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");
  throw_on_error(::cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device),
                 "cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate)");
  throw_on_error(::cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device),
                 "cudaDeviceGetAttribute(cudaDevAttrGlobalMemoryBusWidth)");
  return {double(clock_khz), bus_bits};
}

/// How the reference copy is taken.
struct reference_options {
  std::size_t minimum_copy_bytes = std::size_t(1) << 30;  ///< each copy reads and writes at least this much
  int copies_per_sample = 4;                              ///< back to back between one pair of events
  int samples = 10;                                       ///< the best one is the reference
};

/// The reference copy as measured: cudaMemcpyAsync device-to-device of `copy_bytes`, counting
/// bytes read plus written, the best of `samples` samples of `copies_per_sample` copies each.
struct reference_copy {
  std::size_t copy_bytes = 0;    ///< the bytes each copy reads (and writes as many)
  int copies_per_sample = 0;     ///< copies back to back between one pair of events
  int samples = 0;               ///< samples taken; the best one is kept
  double gigabytes_per_s = 0.0;  ///< bytes read + written per second in that sample, 1 GB = 1e9 B
};

/// Measures `options.samples` samples of `options.copies_per_sample` back-to-back copies of
/// `copy_bytes` and returns the best.
inline reference_copy measure_reference_copy(std::size_t copy_bytes, const reference_options& options,
                                             cudaStream_t stream = nullptr) {
  if (copy_bytes == 0 || options.copies_per_sample < 1 || options.samples < 1)
    throw std::invalid_argument("coalesce::testing::measure_reference_copy: nothing to copy");
  device_buffer<unsigned char> src(copy_bytes), dst(copy_bytes);
  throw_on_error(::cudaMemset(src.data(), 0x5A, copy_bytes), "cudaMemset (reference source)");
  timing_options timing;
  timing.warmup = 1;
  timing.repetitions = options.samples;
  timing.stream = stream;
  const auto samples = time_launches_ms(
      [&](cudaStream_t s) {
        for (int i = 0; i < options.copies_per_sample; ++i)
          throw_on_error(::cudaMemcpyAsync(dst.data(), src.data(), copy_bytes, cudaMemcpyDeviceToDevice, s),
                         "cudaMemcpyAsync (reference copy)");
      },
      timing);
  const double best_ms = *std::min_element(samples.begin(), samples.end());
  const double moved = 2.0 * double(copy_bytes) * double(options.copies_per_sample);
  return {copy_bytes, options.copies_per_sample, options.samples, moved / (best_ms * 1e6)};
}

/// One measured launch: its median time, the bytes it had to move, and what that makes against
/// the reference copy and against the DRAM peak.
struct bandwidth_result {
  double median_ms = 0.0;               ///< the median of the timed launches, in milliseconds
  double bytes_moved = 0.0;             ///< bytes read + bytes written by the work, as the caller counts
  double gigabytes_per_s = 0.0;         ///< bytes_moved / median time, 1 GB = 1e9 B
  double ratio_to_memcpy = 0.0;         ///< gigabytes_per_s over the reference copy's, same counting
  double fraction_of_dram_peak = 0.0;   ///< gigabytes_per_s over the device's DRAM peak
  double memcpy_gigabytes_per_s = 0.0;  ///< the reference this result was set against
};

/// Measures launches against a cudaMemcpy device-to-device reference (see the top of this file)
/// and the DRAM peak. The reference is taken when the meter is made, and taken again, larger,
/// when a launch must move more bytes than the reference copy does.
class bandwidth_meter {
 public:
  /// Reads the device's DRAM peak and measures the reference copy on options.stream (two device
  /// buffers of reference.minimum_copy_bytes, 1 GiB each by default, held while it runs). Throws
  /// coalesce::cuda_error if a CUDA call fails.
  explicit bandwidth_meter(timing_options options = {}, reference_options reference = {})
      : options_(options), reference_options_(reference), peak_(current_dram_peak()) {
    reference_ = measure_reference_copy(reference.minimum_copy_bytes, reference_options_, options_.stream);
    covered_bytes_ = 2.0 * double(reference_.copy_bytes);
  }

  /// The reference copy's GB/s, which ratio_to_memcpy divides by.
  double memcpy_gigabytes_per_s() const noexcept { return reference_.gigabytes_per_s; }
  /// The reference copy as last measured: it is taken again, larger, for a launch that moves more.
  const reference_copy& reference() const noexcept { return reference_; }
  const dram_peak& peak() const noexcept { return peak_; }                               ///< read when made
  double dram_peak_gigabytes_per_s() const noexcept { return peak_.gigabytes_per_s(); }  ///< peak() in GB/s
  const timing_options& options() const noexcept { return options_; }  ///< how every launch is timed

  /// Times `launch(stream)`; `bytes_moved` is what the work must read plus write.
  template <class Launch>
  bandwidth_result measure(Launch&& launch, double bytes_moved) {
    cover(bytes_moved);
    bandwidth_result r;
    r.median_ms = median(time_launches_ms(std::forward<Launch>(launch), options_));
    r.bytes_moved = bytes_moved;
    r.gigabytes_per_s = bytes_moved / (r.median_ms * 1e6);
    r.memcpy_gigabytes_per_s = reference_.gigabytes_per_s;
    r.ratio_to_memcpy = r.gigabytes_per_s / reference_.gigabytes_per_s;
    r.fraction_of_dram_peak = r.gigabytes_per_s / peak_.gigabytes_per_s();
    return r;
  }

 private:
  // Makes the reference copy move at least `bytes_moved` (read + written), in 2 MiB steps: one
  // copy of that size while its two buffers take at most a quarter of the free memory (4 GiB at
  // most), else more copies back to back of buffers that size (100 sweeps of a 512^3 volume move
  // 107 GB: one copy of them would not fit an 80 GB device). Past the L2, a copy's speed does not
  // depend on its size.
  void cover(double bytes_moved) {
    constexpr std::size_t step = std::size_t(2) << 20;
    if (bytes_moved <= covered_bytes_) return;
    std::size_t free_bytes = 0, total_bytes = 0;
    throw_on_error(::cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo (reference copy)");
    const std::size_t largest = std::min(free_bytes / 8, std::size_t(4) << 30) / step * step;
    const auto half = static_cast<std::size_t>(bytes_moved / 2.0) + 1;
    const std::size_t wanted = (half + step - 1) / step * step;
    reference_options options = reference_options_;
    std::size_t copy_bytes = wanted, copies = 1;
    if (largest >= reference_options_.minimum_copy_bytes && wanted > largest) {
      copy_bytes = largest;
      copies = (half + largest - 1) / largest;
      options.copies_per_sample = std::max(options.copies_per_sample, int(copies));
    }
    reference_ = measure_reference_copy(copy_bytes, options, options_.stream);
    covered_bytes_ = 2.0 * double(copy_bytes) * double(copies);
  }

  timing_options options_;
  reference_options reference_options_;
  dram_peak peak_;
  reference_copy reference_;
  double covered_bytes_ = 0.0;  // the most a launch may move against the reference as it is
};

}  // namespace coalesce::testing
