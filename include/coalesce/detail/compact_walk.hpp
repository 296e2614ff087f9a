// coalesce::detail: the kernels behind erase_if and copy_if. Users never include this header.
// Needs a CUDA compiler.
//
// A stable compaction of a soa_view in two passes over tiles (reorder_plan.hpp: 8 rounds of a
// 256-thread block, 2048 elements). The first pass reads the columns the predicate uses and
// writes one count per tile; CUB scans the tiles' counts into each tile's first destination and
// the total, which the host reads to size the output. The second pass reads every column once,
// tests the predicate again on the values in registers (it must be a pure function of the
// element), ranks each round's kept elements with a block scan (in element order: stable), and
// writes them. What moves, for n elements of B bytes of which k are kept, the predicate reading
// P bytes of each:
//     n P (counting) + n B (moving, read) + k B (moving, written) + a few 8-byte words a tile,
// against n (P + B) + k B + n bytes for a keep flag per element written and read once more, or
// n (P + B) + k B + 8 n for a destination index per element, or, for cub::DeviceSelect::Flagged
// per column, n bytes of flags read once per column and the count read back per column.
// Reads are coalesced (a warp reads 32 neighbouring elements of each column a round); a round's
// kept elements go to one contiguous run of each output column, so the stores are coalesced too,
// a run's two ends in partial sectors that L2 merges with the neighbouring rounds' before DRAM.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/reorder_plan.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa_view.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace coalesce::detail {

// Which elements a compaction keeps: those for which pred(element) == KeepWhen (false for
// erase_if, true for copy_if).
template <class Pred, bool KeepWhen>
struct keep_when {
  Pred pred;
  template <class T>
  COALESCE_DEVICE COALESCE_FORCEINLINE bool operator()(const T& v) const {
    return static_cast<bool>(pred(element_proxy(v))) == KeepWhen;
  }
};

// The tile's elements of `in` into registers, round r at tile_first + r * compact_threads + lane.
template <class In, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_tile(const In& in, std::size_t mine_first, T (&v)[compact_rounds]) {
#pragma unroll
  for (unsigned r = 0; r < compact_rounds; ++r) {
    const std::size_t i = mine_first + std::size_t(r) * compact_threads;
    if (i < in.size()) load_element(in, i, v[r]);
  }
}

template <class T, class Keep, class In>
__global__ void __launch_bounds__(compact_threads) count_kept_kernel(In in, Keep keep, std::size_t* counts) {
  const std::size_t mine_first = std::size_t(blockIdx.x) * compact_tile + threadIdx.x;
  T v[compact_rounds];
  load_tile(in, mine_first, v);
  unsigned mine = 0;
#pragma unroll
  for (unsigned r = 0; r < compact_rounds; ++r) {
    const std::size_t i = mine_first + std::size_t(r) * compact_threads;
    if (i < in.size() && keep(v[r])) ++mine;
  }
  using block_sum = cub::BlockReduce<unsigned, compact_threads>;
  __shared__ typename block_sum::TempStorage temp;
  const unsigned kept = block_sum(temp).Sum(mine);
  if (threadIdx.x == 0) counts[blockIdx.x] = kept;
}

template <class T, class Keep, class In, class Out>
__global__ void __launch_bounds__(compact_threads)
    move_kept_kernel(In in, Keep keep, const std::size_t* firsts, Out out) {
  const std::size_t mine_first = std::size_t(blockIdx.x) * compact_tile + threadIdx.x;
  T v[compact_rounds];
  load_tile(in, mine_first, v);
  using block_scan = cub::BlockScan<unsigned, compact_threads>;
  __shared__ typename block_scan::TempStorage temp;
  std::size_t at = firsts[blockIdx.x];
#pragma unroll
  for (unsigned r = 0; r < compact_rounds; ++r) {
    const std::size_t i = mine_first + std::size_t(r) * compact_threads;
    const unsigned flag = i < in.size() && keep(v[r]) ? 1u : 0u;
    unsigned rank = 0, round_kept = 0;
    block_scan(temp).ExclusiveSum(flag, rank, round_kept);
    if (flag != 0) store_element(out, at + rank, v[r]);
    at += round_kept;
    __syncthreads();  // temp is reused by the next round's scan
  }
}

// One compaction of `in`: constructing it counts what `keep` keeps (on `stream`) and waits for
// that count, which the host needs to size the output; move_into then fills an output of that
// size, asynchronously on the same stream. The tiles' destinations live in coalesce's pool until
// the compaction is destroyed (freed in stream order, after the move). In is a soa_view<const T>
// or a layout_view<const T, Layout>; the output of move_into a writable view of any layout.
template <class T, class Keep, class In = soa_view<const T>>
class compaction {
 public:
  compaction(const In& in, const Keep& keep, cudaStream_t stream, const char* what)
      : in_(in), keep_(keep), stream_(stream), what_(what) {
    if (in.size() == 0) return;
    tiles_ = blocks_for(in.size(), compact_tile, what);
    throw_if_earlier_error(what);
    const pool_resource pool(stream);
    // One count per tile and one more, zero, so that the exclusive scan's last entry is the total.
    owned_bytes<pool_resource>(pool, (std::size_t(tiles_) + 1) * sizeof(std::size_t), allocation_alignment)
        .swap(firsts_);
    auto* firsts = static_cast<std::size_t*>(firsts_.get());
    throw_on_error(::cudaMemsetAsync(firsts + tiles_, 0, sizeof(std::size_t), stream), what);
    count_kept_kernel<T, Keep, In><<<tiles_, compact_threads, 0, stream>>>(in, keep, firsts);
    throw_if_launch_failed(what);

    std::size_t temp_bytes = 0;
    throw_on_error(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, firsts, std::size_t(tiles_) + 1, stream), what);
    const owned_bytes<pool_resource> temp(pool, temp_bytes, allocation_alignment);
    throw_on_error(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, firsts, std::size_t(tiles_) + 1, stream),
                   what);
    // The one wait: the host allocates the output by this count.
    throw_on_error(::cudaMemcpyAsync(&kept_, firsts + tiles_, sizeof kept_, cudaMemcpyDeviceToHost, stream), what);
    throw_on_error(::cudaStreamSynchronize(stream), what);
  }

  std::size_t kept() const noexcept { return kept_; }

  // Writes the kept elements, in order, to `out` (kept() elements, not overlapping the input).
  template <class Out>
  void move_into(const Out& out) const {
    if (kept_ == 0) return;
    throw_if_earlier_error(what_);
    move_kept_kernel<T, Keep, In, Out>
        <<<tiles_, compact_threads, 0, stream_>>>(in_, keep_, static_cast<const std::size_t*>(firsts_.get()), out);
    throw_if_launch_failed(what_);
  }

 private:
  In in_;
  Keep keep_;
  cudaStream_t stream_;
  const char* what_;
  unsigned tiles_ = 0;
  std::size_t kept_ = 0;
  owned_bytes<pool_resource> firsts_;
};

}  // namespace coalesce::detail
