// coalesce::detail: grid sizing for kernels that stride over their work. Users never include it.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace coalesce::detail {

// Called right after a launch that throw_if_earlier_error (error.hpp) preceded: the launch's own
// error, collected, since the exception reports it.
inline void throw_if_launch_failed(const char* what) { throw_on_error(::cudaGetLastError(), what); }

// Attribute `Attribute` of `device`, asked of the runtime once per device (the first 64 devices;
// others are asked every time): a launch helper runs on every algorithm call.
template <cudaDeviceAttr Attribute>
int device_attribute(int device) {
  constexpr int cached_devices = 64;
  static std::atomic<int> cached[cached_devices];  // zero: not asked yet (every attribute asked is positive)
  if (device >= 0 && device < cached_devices) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int value = 0;
  throw_on_error(::cudaDeviceGetAttribute(&value, Attribute, device), "cudaDeviceGetAttribute");
  if (device >= 0 && device < cached_devices) cached[device].store(value, std::memory_order_relaxed);
  return value;
}

// The streaming multiprocessors of `device`.
inline int multiprocessor_count(int device) { return device_attribute<cudaDevAttrMultiProcessorCount>(device); }

// The most shared memory one block may have on `device` once it opts in
// (cudaFuncAttributeMaxDynamicSharedMemorySize): 227 KiB on sm_90, 163 KiB on sm_80, 99 KiB on
// sm_86 and sm_89, 64 KiB on sm_75.
inline std::size_t opt_in_shared_bytes(int device) {
  return std::size_t(device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(device));
}

// The current device.
inline int current_device() {
  int device = 0;
  throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

// How many blocks of `Kernel` with `threads_per_block` threads (and no dynamic shared memory) fit
// on one multiprocessor of `device`: asked of the runtime once per kernel, device and block size
// (the last size asked is kept, for the first 64 devices), since an algorithm call launches its
// kernel every time, and an occupancy query is a driver call.
template <auto Kernel>
int resident_blocks(int device, unsigned threads_per_block) {
  constexpr int cached_devices = 64;
  static std::atomic<std::uint64_t> cached[cached_devices];  // block size << 32 | blocks; zero: not asked yet
  const bool cacheable = device >= 0 && device < cached_devices;
  if (cacheable) {
    const std::uint64_t known = cached[device].load(std::memory_order_relaxed);
    if (known != 0 && std::uint32_t(known >> 32) == threads_per_block) return int(std::uint32_t(known));
  }
  int blocks = 0;
  throw_on_error(::cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, int(threads_per_block), 0),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (blocks < 1) blocks = 1;
  if (cacheable)
    cached[device].store(std::uint64_t(threads_per_block) << 32 | std::uint32_t(blocks), std::memory_order_relaxed);
  return blocks;
}

// The blocks to launch of `Kernel` (with `threads_per_block` threads and no dynamic shared memory)
// when it strides over `blocks_wanted` blocks' worth of work: one full wave of resident blocks on
// the current device - enough loads in flight to cover DRAM latency, no tail of half-empty waves -
// or fewer when the work is smaller. At least 1.
template <auto Kernel>
unsigned one_wave_grid(unsigned threads_per_block, std::size_t blocks_wanted) {
  const int device = current_device();
  const std::size_t wave =
      std::size_t(multiprocessor_count(device)) * std::size_t(resident_blocks<Kernel>(device, threads_per_block));
  const std::size_t grid = blocks_wanted < wave ? blocks_wanted : wave;
  return unsigned(grid > 0 ? grid : 1);
}

// The blocks to launch when every block takes its own share of the work once (no grid-stride
// loop): `blocks_wanted`, capped at the grid's limit (kernels then stride over the rest). At least 1.
inline unsigned grid_for_all(std::size_t blocks_wanted) {
  constexpr std::size_t max_blocks = 0x7fffffff;
  return unsigned(blocks_wanted == 0 ? 1 : blocks_wanted < max_blocks ? blocks_wanted : max_blocks);
}

// A grid of x by y blocks for kernels that stride over tiles in both directions: each side at
// most 65535 blocks (CUDA's limit for y; the kernels stride over the rest) and at least 1.
inline dim3 strided_grid_2d(std::size_t x, std::size_t y) {
  constexpr std::size_t most = 65535;
  const auto side = [](std::size_t n) { return unsigned(n == 0 ? 1 : n < most ? n : most); };
  return dim3(side(x), side(y));
}

}  // namespace coalesce::detail
