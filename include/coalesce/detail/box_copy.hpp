// coalesce::detail: copies between boxes of pitched memory and dense buffers, for the halo
// exchanges that must send what is not contiguous: a matrix's column strips, a volume's faces
// across rows or columns. Users never include this header. Needs a CUDA compiler.
//
// The dense buffer holds the box row by row (x fastest, then y, then z), and thread i of the
// grid moves element i: consecutive threads take consecutive elements of a row of the box, then
// of the next row. So each warp's buffer side is one contiguous run, and its pitched side touches
// the sectors of the box's rows and no others: for a strip narrower than a sector, one or two
// sectors a row, which no staging can lower. A shared-memory tile, as the transpose uses, pays
// off where the two sides run along different axes; here both run along x, so there is none.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace coalesce::detail {

// A box of a pitched volume and the dense buffer of its elements; an empty box moves nothing.
template <class T>
struct box_and_buffer {
  pitched_volume_view<T> box;
  T* buffer = nullptr;
};

enum class box_direction { to_buffer, from_buffer };

inline constexpr unsigned box_copy_threads = 256;

// blockIdx.y picks one of the two jobs, so the two sides of a halo exchange share one launch.
// Index is 32-bit where every box has fewer than 2^31 elements (so that the grid stride cannot
// wrap it): the two divisions per element cost a quarter of 64-bit ones.
template <class T, class Index, box_direction Direction>
__global__ void __launch_bounds__(box_copy_threads) box_copy_kernel(box_and_buffer<T> first, box_and_buffer<T> second) {
  const box_and_buffer<T>& job = blockIdx.y == 0 ? first : second;
  const Index width = Index(job.box.width()), height = Index(job.box.height());
  const Index total = Index(job.box.depth()) * height * width;
  for (Index i = Index(blockIdx.x) * box_copy_threads + threadIdx.x; i < total;
       i += Index(gridDim.x) * box_copy_threads) {
    const Index row = i / width, x = i - row * width;
    const Index z = row / height, y = row - z * height;
    T* element = job.box.row(z, y) + x;
    if constexpr (Direction == box_direction::to_buffer) job.buffer[i] = *element;
    else *element = job.buffer[i];
  }
}

template <class T, class Index, box_direction Direction>
void launch_box_copy(const box_and_buffer<T>& first, const box_and_buffer<T>& second, std::size_t most,
                     cudaStream_t stream, const char* what) {
  throw_if_earlier_error(what);  // before one_wave_grid's device queries
  constexpr auto kernel = box_copy_kernel<T, Index, Direction>;
  const unsigned blocks = one_wave_grid<kernel>(box_copy_threads, (most + box_copy_threads - 1) / box_copy_threads);
  kernel<<<dim3(blocks, 2), box_copy_threads, 0, stream>>>(first, second);
  throw_if_launch_failed(what);
}

// Copies the two boxes to (or from) their buffers in one launch on `stream`, with the current
// device the one that holds them. Throws coalesce::cuda_error if the launch fails.
template <box_direction Direction, class T>
void copy_boxes(const box_and_buffer<T>& first, const box_and_buffer<T>& second, cudaStream_t stream,
                const char* what) {
  static_assert(std::is_trivially_copyable_v<T>,
                "coalesce: halo elements are copied as they are: T must be trivially copyable");
  const std::size_t most = first.box.size() > second.box.size() ? first.box.size() : second.box.size();
  if (most == 0) return;
  if (most <= std::numeric_limits<std::uint32_t>::max() / 2)
    launch_box_copy<T, std::uint32_t, Direction>(first, second, most, stream, what);
  else launch_box_copy<T, std::size_t, Direction>(first, second, most, stream, what);
}

}  // namespace coalesce::detail
