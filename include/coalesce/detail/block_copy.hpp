// coalesce::detail: the cooperative copies between global and shared memory: a block's, which
// staged walks and AoS <-> SoA conversion share, and a warp's, for columns staged a warp at a time. Users never include this header. Needs a CUDA compiler.
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

// Where a shared-memory buffer must start for its copy of the global bytes at `global`: the same
// address modulo 16, so that both sides of block_copy move in the same 16-byte words. A buffer
// for unaligned data is 15 bytes larger and starts `staging_offset` bytes in. The offset is a
// multiple of the alignment of whatever the global bytes hold (their address is), so the staged
// elements are as aligned in shared memory as they were in global memory.
COALESCE_HOST_DEVICE inline unsigned staging_offset(const void* global) {
  return unsigned(reinterpret_cast<std::uintptr_t>(global) % 16);
}

// Copies `bytes` bytes from `from` to `to` (one of them in shared memory), the block's `Threads`
// threads together: thread t moves 16-byte words t, t + Threads, ... so that every warp
// instruction covers 32 consecutive words. Each thread issues a batch of up to 8 16-byte loads
// before the batch's stores, so that they are in flight together (a loop of load-store pairs
// keeps one, since the compiler cannot tell that the two sides do not overlap).
//
// Aligned16: both sides are 16-byte aligned (the caller's host code knows). Otherwise they are at
// the same address modulo 16 (see staging_offset), and the bytes before the first whole word go
// one per thread, as do those after the last in both cases: an AoS source 4 bytes off alignment
// moves as fast as an aligned one. The two are separate kernels' code on purpose: every path's
// registers count against a kernel's occupancy, and a byte-loop fallback compiled into the same
// kernel took AoS -> SoA conversion from 32 to 48 registers, and from 0.96 to 0.91 of
// cudaMemcpy, and staged for_each from 22 to 40 registers, 0.98 to 0.96, on an NVIDIA H200.
template <unsigned Threads, std::size_t MaxBytes, bool Aligned16>
COALESCE_DEVICE COALESCE_FORCEINLINE void block_copy(unsigned char* to, const unsigned char* from, std::size_t bytes) {
  static_assert(Threads >= 16, "block_copy: a head of up to 15 bytes goes one byte per thread");
  std::size_t head = 0;
  if constexpr (!Aligned16) {
    head = (16 - staging_offset(from)) % 16;
    if (head > bytes) head = bytes;
    if (threadIdx.x < head) to[threadIdx.x] = from[threadIdx.x];
  }
  // 16-byte words per thread for the largest copy: all in one batch where that is at most 8
  // (6 KiB over 256 threads is 2), else batches of 8.
  constexpr unsigned per_thread = unsigned((MaxBytes / 16 + Threads - 1) / Threads);
  const unsigned words = unsigned((bytes - head) / 16);
  auto* target = reinterpret_cast<uint4*>(to + head);
  const auto* source = reinterpret_cast<const uint4*>(from + head);
  if constexpr (per_thread <= 8) {
    copy_batch<Threads, (per_thread > 0 ? per_thread : 1)>(target, source, 0, words);
  } else {
    for (unsigned first = 0; first < words; first += 8 * Threads) copy_batch<Threads, 8>(target, source, first, words);
  }
  for (std::size_t b = head + std::size_t(words) * 16 + threadIdx.x; b < bytes; b += Threads) to[b] = from[b];
}

// The same copy by the `count` low lanes of a warp, PerLane 16-byte words each: word
// lane + k x count for k < PerLane, so every instruction covers consecutive words; all loads
// before the stores, so that they are in flight together. ReadOnly loads take the non-coherent
// path.
template <unsigned PerLane, bool ReadOnly>
COALESCE_DEVICE COALESCE_FORCEINLINE void warp_copy(uint4* to, const uint4* from, unsigned lane, unsigned count) {
  uint4 w[PerLane];
#pragma unroll
  for (unsigned k = 0; k < PerLane; ++k) w[k] = load_chunk<ReadOnly>(from + lane + k * count);
#pragma unroll
  for (unsigned k = 0; k < PerLane; ++k) to[lane + k * count] = w[k];
}

}  // namespace coalesce::detail
