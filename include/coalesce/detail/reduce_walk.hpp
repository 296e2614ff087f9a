// coalesce::detail: the kernel behind transform_reduce. Users never include it.
//
// A reduction reads every byte once and writes one value, so it is a race to keep DRAM busy. The
// walk is the chunk walk's (detail/chunk_walk.hpp): every column in 16-byte read-only accesses,
// a warp's loads one contiguous span per column, heads and tails one element per thread. What
// differs is the grid: one wave of resident blocks striding over the chunks, each thread with
// `reduce_unroll` chunks in flight before it adds any, its partial kept in registers. Each block
// then reduces its threads' partials (cub::BlockReduce) and writes one, and the last block to
// finish - it learns that from a counter - reduces those and writes the result. One kernel and a
// 4-byte memset: no second launch, nothing for the host to wait on.
//
// CUB's own TransformReduce over the same columns (through an index iterator, as
// cub::DeviceReduce sees a soa_view) reads each column 4 bytes a thread: 4 sectors per request
// against 16 here.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/thread/thread_load.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

namespace coalesce::detail {

inline constexpr unsigned reduce_threads = 256;
// Chunks a thread loads before it adds the first: with 3 float columns, 6 16-byte loads in flight.
inline constexpr unsigned reduce_unroll = 2;

// What one thread folds in: f of each element (what f receives in for_each and transform, read
// only), as T, combined with op. A chunk's values are combined among themselves first, and the
// thread's partial takes the result, so that the chunk's combinations do not wait on the partial.
template <class Columns, class F, class T, class Op>
struct fold_elements {
  Columns columns;
  F f;
  Op op;
  using value_type = typename Columns::value_type;

  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE T of(const value_type& v) const {
    return static_cast<T>(call_on_element<Columns>(f, v));
  }
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE T of_chunk(const value_type (&v)[N]) const {
    T x = of(v[0]);
#pragma unroll
    for (unsigned k = 1; k < N; ++k) x = op(x, of(v[k]));
    return x;
  }
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE T of_edge_at(const chunk_grid<N>& grid, std::size_t e) const {
    value_type v;
    columns.load_one(grid.edge_position(e), v);
    return of(v);
  }
};

// Thread t of the grid takes chunks t, t + step, ... and edges t, t + step, ... (step: the grid's
// threads), so the threads that have any element are the first `work` of the grid, a prefix of
// every block: each starts its partial from its first element, and the block's reduction takes
// only those threads (cub::BlockReduce with a valid count). No identity of op is needed (op need
// not have one; init is applied once, at the end), and no "seen anything yet?" flag travels with
// the partials: carrying one cost 1.8% of a 32 M-particle reduction on an NVIDIA H200, CUDA 13.0
// (docs/bench/reduction-partials). The grid has at most one block per reduce_threads elements of
// work, so every block has some.
template <unsigned N, class Fold, class T, class Op>
__global__ void __launch_bounds__(reduce_threads)
    reduce_kernel(chunk_grid<N> grid, Fold fold, T init, T* partials, unsigned* arrivals, T* result) {
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t chunks = grid.chunks();
  const std::size_t edges = grid.edges();
  const std::size_t work = chunks > edges ? chunks : edges;
  if (work == 0) {  // nothing to fold: one block, which writes init
    if (threadIdx.x == 0) *result = init;
    return;
  }
  using value_type = typename Fold::value_type;
  T mine{};  // meaningful where first < work
  if constexpr (decltype(fold.columns)::template warp_staged<N>) {
    // Columns staged a warp at a time (chunks of several 16-byte words): whole warps in step.
    const unsigned lane = threadIdx.x % 32;
    for (std::size_t warp_first = first - lane; warp_first < chunks; warp_first += step) {
      const std::size_t c = warp_first + lane;
      const unsigned lanes = __ballot_sync(0xffffffffu, c < chunks);
      if (c < chunks) {
        value_type v[N];
        fold.columns.template load<N, true>(grid.chunk_position(c), v, lanes);
        const T x = fold.of_chunk(v);
        mine = c == first ? x : fold.op(mine, x);
      }
    }
  } else {
    std::size_t c = first;
    if (c < chunks) {
      value_type v[N];
      fold.columns.template load<N, true>(grid.chunk_position(c), v, 0u);
      mine = fold.of_chunk(v);
      c += step;
    }
    for (; c + (reduce_unroll - 1) * step < chunks; c += reduce_unroll * step) {
      value_type v[reduce_unroll][N];  // every chunk's loads in flight before any is folded
#pragma unroll
      for (unsigned u = 0; u < reduce_unroll; ++u)
        fold.columns.template load<N, true>(grid.chunk_position(c + u * step), v[u], 0u);
      T x = fold.of_chunk(v[0]);
#pragma unroll
      for (unsigned u = 1; u < reduce_unroll; ++u) x = fold.op(x, fold.of_chunk(v[u]));
      mine = fold.op(mine, x);
    }
    for (; c < chunks; c += step) {
      value_type v[N];
      fold.columns.template load<N, true>(grid.chunk_position(c), v, 0u);
      mine = fold.op(mine, fold.of_chunk(v));
    }
  }
  std::size_t e = first;
  if (first >= chunks && e < edges) {  // no chunk: the partial starts at the first edge
    mine = fold.of_edge_at(grid, e);
    e += step;
  }
  for (; e < edges; e += step) mine = fold.op(mine, fold.of_edge_at(grid, e));

  using block_reduce = cub::BlockReduce<T, reduce_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  __shared__ bool last_block;
  const std::size_t block_first = std::size_t(blockIdx.x) * blockDim.x;
  const int valid = work - block_first < reduce_threads ? int(work - block_first) : int(reduce_threads);
  const T block = block_reduce(temp).Reduce(mine, fold.op, valid);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    __threadfence();  // the partial is visible device-wide before the arrival is counted
    // atomicInc wraps to 0 after gridDim.x - 1: the counter is ready for the next launch.
    last_block = atomicInc(arrivals, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();  // every other block's partial was written before its arrival was counted
  // Other blocks' partials are read past this multiprocessor's L1, which does not see their stores.
  T blocks{};
  if (threadIdx.x < gridDim.x) {
    blocks = cub::ThreadLoad<cub::LOAD_CG>(partials + threadIdx.x);
    for (unsigned b = threadIdx.x + blockDim.x; b < gridDim.x; b += blockDim.x)
      blocks = fold.op(blocks, cub::ThreadLoad<cub::LOAD_CG>(partials + b));
  }
  __syncthreads();  // temp is reused
  const T total =
      block_reduce(temp).Reduce(blocks, fold.op, gridDim.x < reduce_threads ? int(gridDim.x) : int(reduce_threads));
  if (threadIdx.x == 0) *result = fold.op(init, total);
}

// Reduces `rows` x `cols` elements of `columns` into *result, on `stream`: in chunks of N where
// every column allows it at the same element, else element by element. The blocks' partials and
// the arrival counter come from coalesce's pool on the stream.
template <unsigned N, class Columns, class F, class T, class Op>
void reduce_columns(const Columns& columns, std::size_t rows, std::size_t cols, const F& f, T init, const Op& op,
                    T* result, cudaStream_t stream) {
  constexpr const char* what = "coalesce::transform_reduce";
  throw_if_earlier_error(what);
  using fold_type = fold_elements<Columns, F, T, Op>;
  constexpr auto kernel = reduce_kernel<N, fold_type, T, Op>;
  std::size_t head = columns.template head<N>();
  if (head >= N || !columns.template aligned_at<N>(head, rows) || head > cols) head = cols;  // no chunks: all edges
  const chunk_grid<N> grid{rows, cols, head};
  const std::size_t work = grid.chunks() > grid.edges() ? grid.chunks() : grid.edges();
  const unsigned blocks = one_wave_grid<kernel>(reduce_threads, (work + reduce_threads - 1) / reduce_threads);

  const pool_resource pool(stream);
  const std::size_t counter_offset = (blocks * sizeof(T) + 15) / 16 * 16;
  const owned_bytes<pool_resource> temp(pool, counter_offset + sizeof(unsigned), allocation_alignment);
  auto* partials = static_cast<T*>(temp.get());
  auto* arrivals = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(temp.get()) + counter_offset);
  throw_on_error(::cudaMemsetAsync(arrivals, 0, sizeof(unsigned), stream),
                 "coalesce::transform_reduce: cudaMemsetAsync");
  kernel<<<blocks, reduce_threads, 0, stream>>>(grid, fold_type{columns, f, op}, init, partials, arrivals, result);
  throw_if_launch_failed(what);
}

}  // namespace coalesce::detail
