// coalesce: array-of-structs <-> structure-of-arrays conversion on the device, at copy speed.
// Reading a struct per thread straight from AoS memory strides by sizeof(T); instead each block
// reads a contiguous chunk of structs with 16-byte loads into shared memory, then each thread
// writes its element's fields to the columns (consecutive threads, consecutive elements: every
// column write is coalesced). The reverse direction mirrors it. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/soa.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coalesce {
namespace detail {

inline constexpr unsigned convert_threads = 256;

// Elements per block-chunk: 256, or fewer for large structs so a chunk stays within 24 KiB of
// shared memory. A multiple of 16, so a chunk of any T is a whole number of 16-byte vectors.
template <class T>
inline constexpr unsigned convert_chunk = sizeof(T) * 256 <= 24576 ? 256u : unsigned(24576 / sizeof(T)) / 16u * 16u;

template <class T>
struct alignas(16) convert_staging {
  unsigned char bytes[convert_chunk<T> * sizeof(T)];
};

// Copies `bytes` bytes between global memory and shared memory, block-cooperatively, as 16-byte
// vectors when both ends allow (every thread issues all its loads before its stores), else as
// single bytes.
template <unsigned MaxVectorsPerThread, bool ToShared>
__device__ void move_chunk(unsigned char* shared, unsigned char* global, std::size_t bytes) {
  const bool vectors = reinterpret_cast<std::uintptr_t>(global) % 16 == 0 && bytes % 16 == 0;
  if (vectors) {
    const unsigned count = unsigned(bytes / 16);
    uint4 v[MaxVectorsPerThread];
#pragma unroll
    for (unsigned k = 0; k < MaxVectorsPerThread; ++k) {
      const unsigned i = threadIdx.x + k * blockDim.x;
      if (i < count) v[k] = reinterpret_cast<const uint4*>(ToShared ? global : shared)[i];
    }
#pragma unroll
    for (unsigned k = 0; k < MaxVectorsPerThread; ++k) {
      const unsigned i = threadIdx.x + k * blockDim.x;
      if (i < count) reinterpret_cast<uint4*>(ToShared ? shared : global)[i] = v[k];
    }
    return;
  }
  for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    if (ToShared) shared[i] = global[i];
    else global[i] = shared[i];
  }
}

template <class T, std::size_t... I>
__device__ void scatter_fields(const T& element, const soa_view<T>& soa, std::size_t index, std::index_sequence<I...>) {
  ((soa.template column<I>()[index] = get_leaf<I>(tie_fields(element))), ...);
}
template <class T, std::size_t... I>
__device__ void gather_fields(T& element, const soa_view<const T>& soa, std::size_t index, std::index_sequence<I...>) {
  ((get_leaf<I>(tie_fields(element)) = soa.template column<I>()[index]), ...);
}

template <class T>
__global__ void __launch_bounds__(convert_threads) aos_to_soa_kernel(const T* aos, soa_view<T> soa) {
  __shared__ convert_staging<T> staging;
  constexpr unsigned chunk = convert_chunk<T>;
  constexpr unsigned vectors_per_thread = (chunk * sizeof(T) / 16 + convert_threads - 1) / convert_threads;
  const std::size_t n = soa.size();
  for (std::size_t first = std::size_t(blockIdx.x) * chunk; first < n; first += std::size_t(gridDim.x) * chunk) {
    const std::size_t count = n - first < chunk ? n - first : chunk;
    move_chunk<vectors_per_thread, true>(staging.bytes,
                                         const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(aos + first)),
                                         count * sizeof(T));
    __syncthreads();
    const T* elements = reinterpret_cast<const T*>(staging.bytes);
    for (unsigned e = threadIdx.x; e < count; e += blockDim.x)
      scatter_fields(elements[e], soa, first + e, std::make_index_sequence<field_count_v<T>>{});
    __syncthreads();  // the next chunk overwrites the staging buffer
  }
}

template <class T>
__global__ void __launch_bounds__(convert_threads) soa_to_aos_kernel(soa_view<const T> soa, T* aos) {
  __shared__ convert_staging<T> staging;
  constexpr unsigned chunk = convert_chunk<T>;
  constexpr unsigned vectors_per_thread = (chunk * sizeof(T) / 16 + convert_threads - 1) / convert_threads;
  const std::size_t n = soa.size();
  for (std::size_t first = std::size_t(blockIdx.x) * chunk; first < n; first += std::size_t(gridDim.x) * chunk) {
    const std::size_t count = n - first < chunk ? n - first : chunk;
    T* elements = reinterpret_cast<T*>(staging.bytes);
    for (unsigned e = threadIdx.x; e < count; e += blockDim.x)
      gather_fields(elements[e], soa, first + e, std::make_index_sequence<field_count_v<T>>{});
    __syncthreads();
    move_chunk<vectors_per_thread, false>(staging.bytes, reinterpret_cast<unsigned char*>(aos + first), count * sizeof(T));
    __syncthreads();
  }
}

}  // namespace detail

// soa[i] = aos[i] for i < soa.size(), on `stream`. `aos` is device memory holding soa.size()
// elements (16-byte aligned for the fast path, as cudaMalloc and thrust::device_vector give).
template <class T>
void copy_aos_to_soa(const T* aos, soa_view<T> soa, cudaStream_t stream = 0) {
  if (soa.empty()) return;
  const unsigned grid = detail::one_wave_grid(detail::aos_to_soa_kernel<T>, detail::convert_threads,
                                              (soa.size() + detail::convert_chunk<T> - 1) / detail::convert_chunk<T>);
  detail::aos_to_soa_kernel<T><<<grid, detail::convert_threads, 0, stream>>>(aos, soa);
  throw_on_error(::cudaGetLastError(), "coalesce::copy_aos_to_soa kernel launch");
}

// aos[i] = soa[i] for i < soa.size(), on `stream`.
template <class T>
void copy_soa_to_aos(soa_view<const T> soa, T* aos, cudaStream_t stream = 0) {
  if (soa.empty()) return;
  const unsigned grid = detail::one_wave_grid(detail::soa_to_aos_kernel<T>, detail::convert_threads,
                                              (soa.size() + detail::convert_chunk<T> - 1) / detail::convert_chunk<T>);
  detail::soa_to_aos_kernel<T><<<grid, detail::convert_threads, 0, stream>>>(soa, aos);
  throw_on_error(::cudaGetLastError(), "coalesce::copy_soa_to_aos kernel launch");
}
template <class T>
void copy_soa_to_aos(soa_view<T> soa, T* aos, cudaStream_t stream = 0) {
  copy_soa_to_aos(soa_view<const T>(soa), aos, stream);
}

// A device soa_vector holding the `count` structs at device address `aos`.
template <class T, class Resource = device_resource>
soa_vector<T, device_space, Resource> to_soa(const T* aos, std::size_t count, const Resource& resource = Resource()) {
  soa_vector<T, device_space, Resource> soa(resource);
  soa.resize_for_overwrite(count);
  copy_aos_to_soa(aos, soa.view(), soa.stream());
  return soa;
}

}  // namespace coalesce
