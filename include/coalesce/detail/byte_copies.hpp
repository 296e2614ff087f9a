// coalesce::detail: the byte moves under every container - rows copied or zeroed between spaces
// on a stream, the wait for a device stream, and the size arithmetic that refuses to overflow.
// Host-capable: between two host buffers they are memcpy and memset, with no CUDA call. Users
// never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory_space.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace coalesce::detail {

// a * b, or throws std::length_error naming `what` when the product does not fit in size_t.
inline std::size_t checked_multiply(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > static_cast<std::size_t>(-1) / a)
    throw std::length_error(std::string(what) + ": " + std::to_string(a) + " x " + std::to_string(b) +
                            " bytes overflows std::size_t");
  return a * b;
}

// `value` rounded up to a multiple of the power of two `alignment`, or throws std::length_error.
inline std::size_t checked_round_up(std::size_t value, std::size_t alignment, const char* what) {
  if (value > static_cast<std::size_t>(-1) - (alignment - 1))
    throw std::length_error(std::string(what) + ": " + std::to_string(value) + " bytes rounded up to " +
                            std::to_string(alignment) + " overflows std::size_t");
  return (value + alignment - 1) & ~(alignment - 1);
}

constexpr bool is_power_of_two(std::size_t value) { return value != 0 && (value & (value - 1)) == 0; }

// The cudaMemcpyKind for a copy between two spaces.
template <class DstSpace, class SrcSpace>
constexpr cudaMemcpyKind copy_kind() {
  if constexpr (std::is_same_v<DstSpace, device_space>)
    return std::is_same_v<SrcSpace, device_space> ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  else return std::is_same_v<SrcSpace, device_space> ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
}

// The largest pitch the runtime's 2D and 3D copies take (cudaDevAttrMaxPitch: 2^31 - 1 bytes on
// the GPUs coalesce runs on; a larger one is cudaErrorInvalidPitchValue). Rows pitched further
// apart are few - at most 70 of them fit in an H200's 141 GB - and go one 1D call each.
inline constexpr std::size_t max_copy_pitch = 0x7fffffff;
constexpr bool pitches_fit_2d_copy(std::size_t dst_pitch, std::size_t src_pitch) noexcept {
  return dst_pitch <= max_copy_pitch && src_pitch <= max_copy_pitch;
}

// Copies `rows` rows of `row_bytes` bytes between pitched buffers, ordered on `stream`. A copy
// between two host buffers is plain memcpy and needs no CUDA runtime at all. A copy from pageable
// host memory (a local, a std::vector) returns only once the source has been staged, so the
// caller may release the source at once without synchronizing (CUDA runtime API, "API
// synchronization behavior"); the fills of pitched_matrix and soa_vector rely on this. Between
// device memory and pinned host memory the copy only enqueues, and a stream capture records it
// as a graph's memcpy node. One row is a plain cudaMemcpyAsync: the pitches of a single row
// (soa_vector's columns pass 0) mean nothing, and the 1D copy is the form every CUDA version
// captures.
template <class DstSpace, class SrcSpace>
void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
               std::size_t rows, cudaStream_t stream) {
  if (rows == 0 || row_bytes == 0) return;
  if constexpr (std::is_same_v<DstSpace, host_space> && std::is_same_v<SrcSpace, host_space>) {
    (void)stream;
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, row_bytes);
  } else if (rows == 1 || !pitches_fit_2d_copy(dst_pitch, src_pitch)) {
    throw_if_earlier_error("coalesce's copy (cudaMemcpyAsync)");
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t r = 0; r < rows; ++r)
      throw_on_error(::cudaMemcpyAsync(d + r * dst_pitch, s + r * src_pitch, row_bytes, copy_kind<DstSpace, SrcSpace>(),
                                       stream),
                     "cudaMemcpyAsync");
  } else {
    throw_if_earlier_error("coalesce's copy (cudaMemcpy2DAsync)");
    throw_on_error(::cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, copy_kind<DstSpace, SrcSpace>(),
                                       stream),
                   "cudaMemcpy2DAsync");
  }
}

// Sets `rows` rows of `row_bytes` bytes to zero bytes, ordered on `stream`.
template <class Space>
void zero_rows(void* dst, std::size_t pitch, std::size_t row_bytes, std::size_t rows, cudaStream_t stream) {
  if (rows == 0 || row_bytes == 0) return;
  if constexpr (std::is_same_v<Space, host_space>) {
    (void)stream;
    auto* d = static_cast<unsigned char*>(dst);
    for (std::size_t r = 0; r < rows; ++r) std::memset(d + r * pitch, 0, row_bytes);
  } else if (!pitches_fit_2d_copy(pitch, pitch)) {
    throw_if_earlier_error("coalesce's fill (cudaMemsetAsync)");
    auto* d = static_cast<unsigned char*>(dst);
    for (std::size_t r = 0; r < rows; ++r)
      throw_on_error(::cudaMemsetAsync(d + r * pitch, 0, row_bytes, stream), "cudaMemsetAsync");
  } else {
    throw_if_earlier_error("coalesce's fill (cudaMemset2DAsync)");
    throw_on_error(::cudaMemset2DAsync(dst, pitch, 0, row_bytes, rows, stream), "cudaMemset2DAsync");
  }
}

// The stream a copy between two containers is ordered on: the device side's, so that the copy
// follows the work already queued for the device container (host containers use stream 0).
template <class DstSpace, class SrcSpace>
cudaStream_t device_side_stream(cudaStream_t dst_stream, cudaStream_t src_stream) {
  return std::is_same_v<DstSpace, device_space> ? dst_stream : src_stream;
}

// Waits for the work ordered on `stream` when `Space` is the device; host work is already done.
// A cudaStreamSynchronize: never called by the asynchronous copies or the algorithms, which a
// stream capture must be able to record.
template <class Space>
void wait_for(cudaStream_t stream) {
  if constexpr (std::is_same_v<Space, device_space>) {
    throw_if_earlier_error("coalesce's wait (cudaStreamSynchronize)");
    throw_on_error(::cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } else (void)stream;
}

}  // namespace coalesce::detail
