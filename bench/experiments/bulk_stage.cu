// An experiment, built on demand (target coalesce_experiment_bulk_stage, outside ALL, sm_90 only):
// whether the staged walk of an array of structs (for_each(T*, n, f), detail/staged_walk.hpp)
// gains from Hopper's bulk copies. Its threads copy each block's run of structs into shared
// memory and back with 16-byte loads and stores (block_copy); here one thread asks the copy engine
// for the run instead (cp.async.bulk through libcu++'s cuda::device::experimental wrappers, the
// arrival counted on a cuda::barrier), and for its way back. Variants: one run a block (as the
// library), and two runs a block in flight (the next run's copy issued before this one's work).
// Rows: coalesce::for_each(Particle*, n), each bulk variant, and a cudaMemcpy of the same bytes;
// every variant's result is checked against the library's. Issue 36's target: the staged walk at
// >= 0.99 of cudaMemcpy (97.6% on an H200 before).
//
// Measured on an NVIDIA H100 80GB HBM3, CUDA 13.0 (docs/bench/staging-h100/bulk-stage.txt, run
// with the library's kernel also built both ways, commit "The staged walk of structs by Hopper's
// bulk copies"): the library's threads' copy 0.998 of cudaMemcpy, its kernel with bulk copies
// 0.963; one bulk run of 256 a block 0.999, of 512 0.996; striding, 8 blocks an SM 0.945; two runs
// in flight 0.926-0.937. The engine matches the threads at best, so the library keeps the threads.
// Not yet run on an H200, where the threads' copy was 0.976.
#include <coalesce/algorithm.hpp>

#include "competitors.hpp"
#include "median_time.hpp"

#include <cuda/barrier>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using experiments::median_ms;

namespace {

using drift = coalesce_test::competitors::drift_struct;

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
namespace bulk = cuda::device::experimental;

constexpr unsigned threads = 256;

// The run at `first` (count elements, bytes a multiple of 16, both ends 16-byte aligned) into
// `stage`: one thread asks for it, every thread waits for its bytes on `bar`.
__device__ void bulk_load(unsigned char* stage, const Particle* first, unsigned bytes, block_barrier& bar) {
  block_barrier::arrival_token token;
  if (threadIdx.x == 0) {
    bulk::cp_async_bulk_global_to_shared(stage, first, bytes, bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, bytes);
  } else {
    token = bar.arrive();
  }
  bar.wait(std::move(token));
}

// f on each element of the stage, a thread's elements threadIdx.x, + threads, ...; then the
// stage back to `first` by the copy engine, which reads it before the block goes on.
__device__ void update_and_store(unsigned char* stage, Particle* first, unsigned count, const drift& f) {
  auto* elements = reinterpret_cast<Particle*>(stage);
  for (unsigned i = threadIdx.x; i < count; i += threads) {
    Particle p = elements[i];
    f(p);
    elements[i] = p;
  }
  bulk::fence_proxy_async_shared_cta();  // this thread's writes, seen by the copy engine
  __syncthreads();
  if (threadIdx.x == 0) {
    bulk::cp_async_bulk_shared_to_global(first, stage, count * unsigned(sizeof(Particle)));
    bulk::cp_async_bulk_commit_group();
    bulk::cp_async_bulk_wait_group_read<0>();
  }
  __syncthreads();  // the stage is read: it may be written again
}

// One run of `PerBlock` elements a block at a time (n a multiple of PerBlock, PerBlock * 24 a
// multiple of 16).
template <unsigned PerBlock>
__global__ void __launch_bounds__(threads) one_run(Particle* data, std::size_t n, drift f) {
  __shared__ __align__(128) unsigned char stage[PerBlock * sizeof(Particle)];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ block_barrier bar;
  if (threadIdx.x == 0) init(&bar, threads);
  __syncthreads();
  for (std::size_t first = std::size_t(blockIdx.x) * PerBlock; first < n; first += std::size_t(gridDim.x) * PerBlock) {
    bulk_load(stage, data + first, PerBlock * unsigned(sizeof(Particle)), bar);
    update_and_store(stage, data + first, PerBlock, f);
  }
}

// Two stages a block: the copy of its next run is asked for before it works on this one.
template <unsigned PerBlock>
__global__ void __launch_bounds__(threads) two_runs(Particle* data, std::size_t n, drift f) {
  constexpr unsigned bytes = PerBlock * unsigned(sizeof(Particle));
  __shared__ __align__(128) unsigned char stages[2][bytes];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ block_barrier bars[2];
  if (threadIdx.x == 0) {
    init(&bars[0], threads);
    init(&bars[1], threads);
  }
  __syncthreads();
  const std::size_t stride = std::size_t(gridDim.x) * PerBlock;
  std::size_t first = std::size_t(blockIdx.x) * PerBlock;
  block_barrier::arrival_token tokens[2];
  const auto ask = [&](int s, std::size_t at) {
    if (threadIdx.x == 0) {
      bulk::cp_async_bulk_global_to_shared(stages[s], data + at, bytes, bars[s]);
      tokens[s] = cuda::device::barrier_arrive_tx(bars[s], 1, bytes);
    } else {
      tokens[s] = bars[s].arrive();
    }
  };
  if (first < n) ask(0, first);
  for (int s = 0; first < n; first += stride, s ^= 1) {
    if (first + stride < n) ask(s ^ 1, first + stride);
    bars[s].wait(std::move(tokens[s]));
    update_and_store(stages[s], data + first, PerBlock, f);
  }
}

}  // namespace

int main() {
  const std::size_t n = std::size_t(32) << 20;  // a multiple of every PerBlock below
  const std::size_t bytes = n * sizeof(Particle);
  std::vector<Particle> host(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = float(i % 1000);
    host[i] = Particle{v, v + 1, v + 2, 0.5f, -0.25f, 0.125f};
  }
  Particle *data = nullptr, *copy = nullptr;
  cudaMalloc(&data, bytes);
  cudaMalloc(&copy, bytes);
  const drift f{0.01f};
  const int sms = [] {
    int d = 0, s = 0;
    cudaGetDevice(&d);
    cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, d);
    return s;
  }();

  struct row {
    const char* name;
    void (*run)(Particle*, std::size_t, drift, int);
  };
  const row rows[] = {
      {"coalesce::for_each(Particle*, n) [staged, threads copy]",
       [](Particle* d, std::size_t m, drift g, int) { coalesce::for_each(d, m, g); }},
      {"bulk, one run of 256 a block, a block a run",
       [](Particle* d, std::size_t m, drift g, int) { one_run<256><<<unsigned(m / 256), threads>>>(d, m, g); }},
      {"bulk, one run of 512 a block, a block a run",
       [](Particle* d, std::size_t m, drift g, int) { one_run<512><<<unsigned(m / 512), threads>>>(d, m, g); }},
      {"bulk, one run of 256 a block, 8 blocks an SM striding",
       [](Particle* d, std::size_t m, drift g, int s) { one_run<256><<<unsigned(8 * s), threads>>>(d, m, g); }},
      {"bulk, two runs of 256 in flight, 4 blocks an SM striding",
       [](Particle* d, std::size_t m, drift g, int s) { two_runs<256><<<unsigned(4 * s), threads>>>(d, m, g); }},
      {"bulk, two runs of 512 in flight, 4 blocks an SM striding",
       [](Particle* d, std::size_t m, drift g, int s) { two_runs<512><<<unsigned(4 * s), threads>>>(d, m, g); }},
  };

  // The expected result: the library's walk, once, on the host values.
  cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice);
  rows[0].run(data, n, f, sms);
  std::vector<Particle> expected(n), got(n);
  cudaMemcpy(expected.data(), data, bytes, cudaMemcpyDeviceToHost);

  const double copy_ms = median_ms([&] { cudaMemcpyAsync(copy, data, bytes, cudaMemcpyDeviceToDevice); });
  std::printf("32 M 24-byte particles drifted in place (%zu bytes read and written), %d SMs\n", bytes, sms);
  std::printf("%-58s %.4f ms\n", "cudaMemcpy of the same bytes", copy_ms);
  for (const row& r : rows) {
    cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice);
    r.run(data, n, f, sms);
    cudaMemcpy(got.data(), data, bytes, cudaMemcpyDeviceToHost);
    const bool same = std::memcmp(got.data(), expected.data(), bytes) == 0;
    const double ms = median_ms([&] { r.run(data, n, f, sms); });
    std::printf("%-58s %.4f ms  %.3f of the copy  %s\n", r.name, ms, copy_ms / ms, same ? "" : "MISMATCH");
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
