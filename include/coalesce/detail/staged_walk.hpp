// coalesce::detail: for_each over an array of structs that coalesce may not re-lay out. A block
// copies a contiguous run of elements into shared memory with 16-byte loads (every warp
// instruction reads 512 consecutive bytes, whatever sizeof(T) is), each thread then runs f on
// its elements there, and the block writes the run back with 16-byte stores - only if f changed
// something. This is the idea behind cub::BlockLoad's transposing loads, on whole structs.
// Users never include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/block_copy.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace coalesce::detail {

inline constexpr unsigned staged_threads = 256;

// Elements per thread: a block stages about 6 KiB (256 structs of 24 bytes), at most 8 per thread,
// and takes one run; as many blocks as runs. Measured on an NVIDIA H200, CUDA 13.0, 32 M 24-byte
// particles updated in place, as a share of cudaMemcpy: one struct per thread (6 KiB a block)
// 0.984, two 0.953, four (24 KiB) 0.930, eight 0.937; a hand-written kernel staging 256 structs
// per block 0.983.
template <class T>
inline constexpr unsigned staged_items = sizeof(T) * staged_threads >= 6144 ? 1u
                                         : 6144 / (sizeof(T) * staged_threads) > 8
                                             ? 8u
                                             : unsigned(6144 / (sizeof(T) * staged_threads));

template <class T>
inline constexpr std::size_t staged_bytes = std::size_t(staged_items<T>) * staged_threads * sizeof(T);

// The stage's shared accesses - block_copy's words and each thread's element, a word at a time -
// and what they cost are certified by detail::stage_certificate<T> (stage_certificate.hpp, kept
// out of this header: the access model it runs on includes libcu++, which would double the
// compile time of every for_each unit; the tests hold the certificate and the counters to it).
//
// Aligned16: every run starts 16-byte aligned (the launch checks). Otherwise each run starts where
// the first does modulo 16 (a run is a multiple of 16 elements) and is staged at that offset, so
// the copies still move 16-byte words.
template <class T, class F, bool Aligned16>
__global__ void __launch_bounds__(staged_threads) staged_for_each_kernel(T* data, std::size_t n, F f) {
  constexpr unsigned items = staged_items<T>;
  constexpr std::size_t per_block = std::size_t(items) * staged_threads;
  extern __shared__ uint4 stage_words[];
  auto* stage = reinterpret_cast<unsigned char*>(stage_words) + (Aligned16 ? 0 : staging_offset(data));
  T* elements = reinterpret_cast<T*>(stage);

  for (std::size_t first = std::size_t(blockIdx.x) * per_block; first < n;
       first += std::size_t(gridDim.x) * per_block) {
    const std::size_t count = n - first < per_block ? n - first : per_block;
    auto* global = reinterpret_cast<unsigned char*>(data + first);
    block_copy<staged_threads, staged_bytes<T>, Aligned16>(stage, global, count * sizeof(T));
    __syncthreads();

    // Thread t takes elements t, t + 256, ...: neighbouring threads read neighbouring structs.
    bool changed = false;
#pragma unroll
    for (unsigned k = 0; k < items; ++k) {
      const std::size_t i = std::size_t(k) * staged_threads + threadIdx.x;
      if (i >= count) break;
      // f runs on a copy in registers, as in every walk, and only its value bytes go back:
      // padding is never compared and stays as it came (chunk_walk.hpp, "padding").
      auto bytes = load_image<alignof(T)>(&elements[i]);
      if (update_image<T, 1>(bytes, [&](unsigned, T& value) {
            if constexpr (takes_element<F, T&>()) f(value);
          })) {
        store_image<alignof(T)>(&elements[i], bytes);
        changed = true;
      }
    }
    if (__syncthreads_or(changed))
      block_copy<staged_threads, staged_bytes<T>, Aligned16>(global, stage, count * sizeof(T));
    __syncthreads();  // the next run overwrites the stage
  }
}

// A block's stage of T, and 15 bytes for a run off 16-byte alignment: what the kernel asks for.
template <class T>
inline constexpr std::size_t staged_shared_bytes = staged_bytes<T> + 15;

// The most shared memory a block may opt in to on any device coalesce runs on (sm_90's 227 KiB):
// larger stages are never compiled.
inline constexpr std::size_t most_opt_in_shared_bytes = 227 * 1024;

// Launches the staged walk of the n elements at `data` and returns true, or returns false having
// launched nothing where the current device cannot give a block the stage (structs of more than
// about 400 bytes on sm_86, 900 on sm_90): the caller then walks them without staging.
template <class T, class F>
bool launch_staged_for_each(T* data, std::size_t n, const F& f, cudaStream_t stream) {
  if constexpr (staged_shared_bytes<T> > most_opt_in_shared_bytes) {
    (void)data, (void)n, (void)f, (void)stream;
    return false;
  } else {
    if (n == 0) return true;
    // Before the device query below: an error left pending is the caller's, not this query's.
    throw_if_earlier_error("coalesce::for_each");
    constexpr std::size_t per_block = std::size_t(staged_items<T>) * staged_threads;
    static_assert(per_block % 16 == 0, "every run must start where the first does, modulo 16 bytes");
    const bool aligned16 = reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
    const std::size_t shared = staged_bytes<T> + (aligned16 ? 0 : 15);
    if (shared > opt_in_shared_bytes(current_device())) return false;
    const auto kernel = aligned16 ? staged_for_each_kernel<T, F, true> : staged_for_each_kernel<T, F, false>;
    if (shared > 48 * 1024)
      throw_on_error(::cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                     "coalesce::for_each: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    kernel<<<grid_for_all((n + per_block - 1) / per_block), staged_threads, shared, stream>>>(data, n, f);
    throw_if_launch_failed("coalesce::for_each kernel launch");
    return true;
  }
}

}  // namespace coalesce::detail
