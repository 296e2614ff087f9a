// coalesce::detail: grid sizing for kernels that stride over their work. Users never include it.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace coalesce::detail {

// The blocks to launch of `kernel` (with `threads_per_block` threads and no dynamic shared memory)
// when it strides over `blocks_wanted` blocks' worth of work: one full wave of resident blocks on
// the current device - enough loads in flight to cover DRAM latency, no tail of half-empty waves -
// or fewer when the work is smaller. At least 1.
template <class Kernel>
unsigned one_wave_grid(Kernel kernel, unsigned threads_per_block, std::size_t blocks_wanted) {
  int device = 0, sms = 0, resident = 0;
  throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");
  throw_on_error(::cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  throw_on_error(::cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, int(threads_per_block), 0),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  const std::size_t wave = std::size_t(sms) * std::size_t(resident > 0 ? resident : 1);
  const std::size_t grid = blocks_wanted < wave ? blocks_wanted : wave;
  return unsigned(grid > 0 ? grid : 1);
}

// The blocks to launch when every block takes its own share of the work once (no grid-stride
// loop): `blocks_wanted`, capped at the grid's limit (kernels then stride over the rest). At least 1.
inline unsigned grid_for_all(std::size_t blocks_wanted) {
  constexpr std::size_t max_blocks = 0x7fffffff;
  return unsigned(blocks_wanted == 0 ? 1 : blocks_wanted < max_blocks ? blocks_wanted : max_blocks);
}

}  // namespace coalesce::detail
