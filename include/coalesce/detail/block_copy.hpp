// coalesce::detail: the block-cooperative copy between global and shared memory that staged walks
// and AoS <-> SoA conversion share. Users never include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>

#include <cstddef>
#include <cstdint>

namespace coalesce::detail {

// Moves 16-byte words `first` + thread + k x Threads for k < Batch: all loads, then all stores.
template <unsigned Threads, unsigned Batch>
COALESCE_DEVICE COALESCE_FORCEINLINE void copy_batch(uint4* to, const uint4* from, unsigned first, unsigned words) {
  uint4 w[Batch];
#pragma unroll
  for (unsigned k = 0; k < Batch; ++k) {
    const unsigned i = first + threadIdx.x + k * Threads;
    if (i < words) w[k] = from[i];
  }
#pragma unroll
  for (unsigned k = 0; k < Batch; ++k) {
    const unsigned i = first + threadIdx.x + k * Threads;
    if (i < words) to[i] = w[k];
  }
}

// Copies `bytes` bytes from `from` to `to` (one of them in shared memory, 16-byte aligned), the
// block's `Threads` threads together: thread t moves words t, t + Threads, ... so that every warp
// instruction covers 32 consecutive words.
//
// Aligned16 (the global side is 16-byte aligned; the caller's host code knows): each thread issues
// a batch of up to 8 16-byte loads before the batch's stores, so that they are in flight together
// (a loop of load-store pairs keeps one, since the compiler cannot tell that the two sides do not
// overlap); bytes past the last whole word go one per thread. Otherwise 4-byte words where the
// address allows, else bytes, in a plain loop. The two are separate kernels' code on purpose:
// every path's registers count against a kernel's occupancy, and a fallback compiled into the
// same kernel took AoS -> SoA conversion from 32 to 48 registers, and from 0.96 to 0.91 of
// cudaMemcpy, and staged for_each from 22 to 40 registers, 0.98 to 0.96, on an NVIDIA H200.
template <unsigned Threads, std::size_t MaxBytes, bool Aligned16>
COALESCE_DEVICE COALESCE_FORCEINLINE void block_copy(unsigned char* to, const unsigned char* from, std::size_t bytes) {
  if constexpr (Aligned16) {
    // 16-byte words per thread for the largest copy: all in one batch where that is at most 8
    // (6 KiB over 256 threads is 2), else batches of 8.
    constexpr unsigned per_thread = unsigned((MaxBytes / 16 + Threads - 1) / Threads);
    const unsigned words = unsigned(bytes / 16);
    auto* target = reinterpret_cast<uint4*>(to);
    const auto* source = reinterpret_cast<const uint4*>(from);
    if constexpr (per_thread <= 8) {
      copy_batch<Threads, (per_thread > 0 ? per_thread : 1)>(target, source, 0, words);
    } else {
      for (unsigned first = 0; first < words; first += 8 * Threads) copy_batch<Threads, 8>(target, source, first, words);
    }
    if (bytes % 16 != 0)
      for (std::size_t b = std::size_t(words) * 16 + threadIdx.x; b < bytes; b += Threads) to[b] = from[b];
  } else {
    std::size_t done = 0;
    if ((reinterpret_cast<std::uintptr_t>(to) | reinterpret_cast<std::uintptr_t>(from)) % 4 == 0) {
      const std::size_t words = bytes / 4;
      for (std::size_t i = threadIdx.x; i < words; i += Threads)
        reinterpret_cast<unsigned*>(to)[i] = reinterpret_cast<const unsigned*>(from)[i];
      done = words * 4;
    }
    for (std::size_t b = done + threadIdx.x; b < bytes; b += Threads) to[b] = from[b];
  }
}

}  // namespace coalesce::detail
