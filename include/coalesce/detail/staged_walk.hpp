// coalesce::detail: for_each over an array of structs that coalesce may not re-lay out. A block
// copies a contiguous run of elements into shared memory with 16-byte loads (every warp
// instruction reads 512 consecutive bytes, whatever sizeof(T) is), each thread then runs f on
// its elements there, and the block writes the run back with 16-byte stores - only if f changed
// something. This is the idea behind cub::BlockLoad's transposing loads, on whole structs.
// Users never include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce::detail {

inline constexpr unsigned staged_threads = 256;

// Elements per thread: about 24 KiB of shared memory per block, so 8 blocks (192 KiB of loads)
// are resident per SM - enough bytes in flight for HBM3e - and at most 8. Each block stages one
// run (a block per run, as for the chunk walk).
template <class T>
inline constexpr unsigned staged_items = sizeof(T) * staged_threads >= 24576 ? 1u
                                         : 24576 / (sizeof(T) * staged_threads) > 8 ? 8u
                                         : unsigned(24576 / (sizeof(T) * staged_threads));

template <class T>
inline constexpr std::size_t staged_bytes = std::size_t(staged_items<T>) * staged_threads * sizeof(T);

// Copies `bytes` bytes between global and shared memory, the block's threads together, in
// Word-sized accesses (both ends Word-aligned) and single bytes for the rest.
template <class Word>
COALESCE_DEVICE COALESCE_FORCEINLINE void block_copy(unsigned char* to, const unsigned char* from, std::size_t bytes) {
  const std::size_t words = bytes / sizeof(Word);
  auto* to_words = reinterpret_cast<Word*>(to);
  const auto* from_words = reinterpret_cast<const Word*>(from);
  for (std::size_t w = threadIdx.x; w < words; w += blockDim.x) to_words[w] = from_words[w];
  for (std::size_t b = words * sizeof(Word) + threadIdx.x; b < bytes; b += blockDim.x) to[b] = from[b];
}

// The copy with the widest access that the global address allows (shared is 16-byte aligned).
COALESCE_DEVICE COALESCE_FORCEINLINE void block_copy(unsigned char* to, const unsigned char* from, std::size_t bytes,
                                                     unsigned global_alignment) {
  switch (global_alignment) {
    case 16: block_copy<uint4>(to, from, bytes); break;
    case 8: block_copy<uint2>(to, from, bytes); break;
    case 4: block_copy<unsigned>(to, from, bytes); break;
    default: block_copy<unsigned char>(to, from, bytes); break;
  }
}

template <class T, class F>
__global__ void __launch_bounds__(staged_threads) staged_for_each_kernel(T* data, std::size_t n, F f) {
  constexpr unsigned items = staged_items<T>;
  constexpr std::size_t per_block = std::size_t(items) * staged_threads;
  extern __shared__ uint4 stage_words[];
  auto* stage = reinterpret_cast<unsigned char*>(stage_words);
  T* elements = reinterpret_cast<T*>(stage_words);

  for (std::size_t first = std::size_t(blockIdx.x) * per_block; first < n; first += std::size_t(gridDim.x) * per_block) {
    const std::size_t count = n - first < per_block ? n - first : per_block;
    auto* global = reinterpret_cast<unsigned char*>(data + first);
    const unsigned alignment = unsigned(access_alignment(reinterpret_cast<std::uintptr_t>(global)));
    block_copy(stage, global, count * sizeof(T), alignment);
    __syncthreads();

    // Thread t takes elements t, t + 256, ...: neighbouring threads read neighbouring structs.
    bool changed = false;
#pragma unroll
    for (unsigned k = 0; k < items; ++k) {
      const std::size_t i = std::size_t(k) * staged_threads + threadIdx.x;
      if (i >= count) break;
      T value = elements[i];
      const T before = value;
      f(value);
      if (!same_bits(value, before)) {
        elements[i] = value;
        changed = true;
      }
    }
    if (__syncthreads_or(changed)) block_copy(global, stage, count * sizeof(T), alignment);
    __syncthreads();  // the next run overwrites the stage
  }
}

template <class T, class F>
void launch_staged_for_each(T* data, std::size_t n, const F& f, cudaStream_t stream) {
  static_assert(staged_bytes<T> <= 200 * 1024,
                "coalesce::for_each: an element of a contiguous range must be at most 800 bytes; store larger "
                "records in a soa_vector");
  if (n == 0) return;
  const auto kernel = staged_for_each_kernel<T, F>;
  constexpr std::size_t shared = staged_bytes<T>;
  if constexpr (shared > 48 * 1024)
    throw_on_error(::cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                   "coalesce::for_each: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  constexpr std::size_t per_block = std::size_t(staged_items<T>) * staged_threads;
  kernel<<<grid_for_all((n + per_block - 1) / per_block), staged_threads, shared, stream>>>(data, n, f);
  throw_on_error(::cudaGetLastError(), "coalesce::for_each kernel launch");
}

}  // namespace coalesce::detail
