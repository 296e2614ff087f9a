// coalesce: array-of-structs <-> structure-of-arrays conversion on the device, at copy speed.
// Reading a struct per thread straight from AoS memory strides by sizeof(T); instead each block
// reads a contiguous chunk of structs with 16-byte loads into shared memory, then each thread
// writes its element's fields to the columns (consecutive threads, consecutive elements: every
// column write is coalesced). The reverse direction mirrors it. One chunk per block, as many
// blocks as chunks: measured on an NVIDIA H200, CUDA 13.0, for 33.5 M 24-byte particles, as a
// share of cudaMemcpy, AoS -> SoA 0.962 and SoA -> AoS 0.982, against 0.894 and 0.903 for one wave
// of blocks looping over the chunks (and 0.961 for cub::DeviceTransform into a zip of the columns;
// docs/bench/coalesce-bench.txt and coalesce-bench-before.txt).
// Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/soa_convert.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/block_copy.hpp>
#  include <coalesce/detail/container_capture.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>

namespace coalesce {
namespace detail {

inline constexpr unsigned convert_threads = 256;

// The fewest elements whose bytes are a multiple of 16: chunks of a multiple of them all start
// where the first does modulo 16.
template <class T>
inline constexpr unsigned convert_step = sizeof(T) % 16 == 0  ? 1u
                                         : sizeof(T) % 8 == 0 ? 2u
                                         : sizeof(T) % 4 == 0 ? 4u
                                         : sizeof(T) % 2 == 0 ? 8u
                                                              : 16u;

// Elements per block-chunk: 256, or fewer for large structs so a chunk stays within 24 KiB of
// shared memory; a multiple of convert_step. Zero for structs too large for one step to fit (more
// than 1536 bytes of odd size, 24 KiB of a multiple of 16): those convert element by element.
template <class T>
inline constexpr unsigned convert_chunk =
    sizeof(T) * 256 <= 24576 ? 256u : unsigned(24576 / sizeof(T)) / convert_step<T> * convert_step<T>;

// A chunk's shared-memory copy, and 15 bytes more: a source off 16-byte alignment is staged at the
// same address modulo 16 (staging_offset), so that it still moves in 16-byte words. Its accesses
// are those of a staged walk's stage (detail::stage_certificate: block_copy's words, and each
// thread's element a word at a time).
template <class T>
struct alignas(16) convert_staging {
  static constexpr std::size_t chunk_bytes = convert_chunk<T> * sizeof(T);
  unsigned char bytes[chunk_bytes + 15];
};

// One element's leaves into the columns, and back. Columns is a soa_view, or a layout_view of
// tiles (coalesce::convert): any view with leaf_pointer<L>(i).
template <class T, class Columns, std::size_t... L>
__device__ void scatter_fields(const T& element, const Columns& soa, std::size_t index, std::index_sequence<L...>) {
  ((*soa.template leaf_pointer<L>(index) = struct_leaf<L>(element)), ...);
}
template <class T, class Columns, std::size_t... L>
__device__ void gather_fields(T& element, const Columns& soa, std::size_t index, std::index_sequence<L...>) {
  ((struct_leaf<L>(element) = *soa.template leaf_pointer<L>(index)), ...);
}

// Calls body(first, count) for each chunk of the n elements that is this block's: one chunk per
// block; the loop takes more only past 2^31 - 1 blocks' worth. Aligned16: the array of structs
// is 16-byte aligned (the launch checks). Either way every chunk starts where the first does
// modulo 16 (a chunk is a multiple of 16 elements), so one staging offset serves them all, and
// the copies move 16-byte words; body gets the block's stage at that offset.
template <class T, bool Aligned16, class Body>
__device__ void for_each_block_chunk(const T* aos, std::size_t n, Body&& body) {
  __shared__ convert_staging<T> staging;
  constexpr unsigned chunk = convert_chunk<T>;
  unsigned char* stage = staging.bytes + (Aligned16 ? 0 : staging_offset(aos));
  for (std::size_t first = std::size_t(blockIdx.x) * chunk; first < n; first += std::size_t(gridDim.x) * chunk)
    body(stage, first, n - first < chunk ? n - first : std::size_t(chunk));
}

template <class T, bool Aligned16, class Columns = soa_view<T>>
__global__ void __launch_bounds__(convert_threads) aos_to_soa_kernel(const T* aos, Columns soa) {
  for_each_block_chunk<T, Aligned16>(aos, soa.size(), [&](unsigned char* stage, std::size_t first, std::size_t count) {
    block_copy<convert_threads, convert_staging<T>::chunk_bytes, Aligned16>(
        stage, reinterpret_cast<const unsigned char*>(aos + first), count * sizeof(T));
    __syncthreads();
    const T* elements = reinterpret_cast<const T*>(stage);
    for (unsigned e = threadIdx.x; e < count; e += blockDim.x)
      scatter_fields(elements[e], soa, first + e, std::make_index_sequence<leaf_count_v<T>>{});
    __syncthreads();  // the next chunk overwrites the stage
  });
}

template <class T, bool Aligned16, class Columns = soa_view<const T>>
__global__ void __launch_bounds__(convert_threads) soa_to_aos_kernel(Columns soa, T* aos) {
  for_each_block_chunk<T, Aligned16>(
      static_cast<const T*>(aos), soa.size(), [&](unsigned char* stage, std::size_t first, std::size_t count) {
        T* elements = reinterpret_cast<T*>(stage);
        for (unsigned e = threadIdx.x; e < count; e += blockDim.x)
          gather_fields(elements[e], soa, first + e, std::make_index_sequence<leaf_count_v<T>>{});
        __syncthreads();
        block_copy<convert_threads, convert_staging<T>::chunk_bytes, Aligned16>(
            reinterpret_cast<unsigned char*>(aos + first), stage, count * sizeof(T));
        __syncthreads();  // the next chunk overwrites the stage
      });
}

// Structs too large to stage (convert_chunk<T> == 0): each thread moves its own element a field
// at a time. The column accesses stay coalesced; the struct's are not, and need not be fast.
template <class T, class Columns = soa_view<T>>
__global__ void __launch_bounds__(convert_threads) aos_to_soa_by_element_kernel(const T* aos, Columns soa) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < soa.size();
       i += std::size_t(gridDim.x) * blockDim.x)
    scatter_fields(aos[i], soa, i, std::make_index_sequence<leaf_count_v<T>>{});
}
template <class T, class Columns = soa_view<const T>>
__global__ void __launch_bounds__(convert_threads) soa_to_aos_by_element_kernel(Columns soa, T* aos) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < soa.size();
       i += std::size_t(gridDim.x) * blockDim.x)
    gather_fields(aos[i], soa, i, std::make_index_sequence<leaf_count_v<T>>{});
}

// Launches `aligned` (for an array of structs at a 16-byte-aligned address) or `unaligned`, one
// chunk of `count` elements per block, and reports a failed launch as `what`.
template <class T, class Kernel, class... Args>
void launch_conversion(const T* aos, std::size_t count, Kernel aligned, Kernel unaligned, cudaStream_t stream,
                       const char* what, const Args&... args) {
  throw_if_earlier_error(what);
  constexpr std::size_t per_block = convert_chunk<T> > 0 ? convert_chunk<T> : convert_threads;
  const unsigned grid = grid_for_all((count + per_block - 1) / per_block);
  const Kernel kernel = reinterpret_cast<std::uintptr_t>(aos) % 16 == 0 ? aligned : unaligned;
  kernel<<<grid, convert_threads, 0, stream>>>(args...);
  throw_if_launch_failed(what);
}

// columns[i] = aos[i] for i < columns.size(), columns a soa_view or a layout_view of tiles.
template <class T, class Columns>
void copy_records_to_columns(const T* aos, const Columns& columns, cudaStream_t stream, const char* what) {
  if (columns.empty()) return;
  if constexpr (convert_chunk<T> > 0)
    launch_conversion(aos, columns.size(), aos_to_soa_kernel<T, true, Columns>, aos_to_soa_kernel<T, false, Columns>,
                      stream, what, aos, columns);
  else
    launch_conversion(aos, columns.size(), aos_to_soa_by_element_kernel<T, Columns>,
                      aos_to_soa_by_element_kernel<T, Columns>, stream, what, aos, columns);
}
// aos[i] = columns[i], columns read-only.
template <class T, class Columns>
void copy_columns_to_records(const Columns& columns, T* aos, cudaStream_t stream, const char* what) {
  if (columns.empty()) return;
  if constexpr (convert_chunk<T> > 0)
    launch_conversion(static_cast<const T*>(aos), columns.size(), soa_to_aos_kernel<T, true, Columns>,
                      soa_to_aos_kernel<T, false, Columns>, stream, what, columns, aos);
  else
    launch_conversion(static_cast<const T*>(aos), columns.size(), soa_to_aos_by_element_kernel<T, Columns>,
                      soa_to_aos_by_element_kernel<T, Columns>, stream, what, columns, aos);
}
}  // namespace detail

/// soa[i] = aos[i] for i < soa.size(), on `stream`. `aos` is device memory holding soa.size()
/// elements (16-byte aligned for the fast path, as cudaMalloc and thrust::device_vector give).
template <class T>
void copy_aos_to_soa(const T* aos, soa_view<T> soa, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_aos_to_soa");
  detail::copy_records_to_columns(aos, soa, stream, "coalesce::copy_aos_to_soa kernel launch");
}

/// aos[i] = soa[i] for i < soa.size(), on `stream`.
template <class T>
void copy_soa_to_aos(soa_view<const T> soa, T* aos, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_soa_to_aos");
  detail::copy_columns_to_records(soa, aos, stream, "coalesce::copy_soa_to_aos kernel launch");
}
template <class T>
void copy_soa_to_aos(soa_view<T> soa, T* aos, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_soa_to_aos");
  copy_soa_to_aos(soa_view<const T>(soa), aos, stream);
}

/// A device soa_vector holding the `count` structs at device address `aos`. It allocates, so it
/// refuses (std::logic_error) while the resource's stream is being captured into a CUDA graph: make
/// the vector before the capture, and let the capture record copy_aos_to_soa into it.
template <class T, class Resource = default_resource_t<device_space>>
soa_vector<T, device_space, Resource> to_soa(const T* aos, std::size_t count, const Resource& resource = Resource()) {
  detail::refuse_capture_of<device_space, Resource>(
      detail::uncapturable::allocates, resource.stream(), "coalesce::to_soa",
      "make the soa_vector before the capture begins and let the capture record copy_aos_to_soa into its view()");
  soa_vector<T, device_space, Resource> soa(resource);
  soa.resize_for_overwrite(count);
  copy_aos_to_soa(aos, soa.view(), soa.stream());
  return soa;
}

}  // namespace coalesce

#endif  // __CUDACC__
