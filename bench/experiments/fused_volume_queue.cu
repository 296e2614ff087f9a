// An experiment, built on demand (target coalesce_experiment_fused_volume_queue, outside ALL): how
// fast a pass of k sweeps of the 7-point stencil on 512^3 floats, clamp, can be with AN5D's scheme
// (Matsumura et al., CGO'20), against k single sweeps of the library and against its fused pass
// (coalesce::stencil<1>(k, clamp, u, v, f, fuse{k}), stencil_fused_volume_walk.hpp), which ran
// slower than the single sweeps: 0.854x on an H100 at k = 3.
//
// Why: the library's pass keeps a ring of 2R + 2 whole planes a sweep in shared memory and reads
// all 7 neighbours of every output from there. AN5D keeps the planes along z in registers: a
// thread owns one (y, x) column of the block's region and streams along z; for each sweep s < k
// it holds the queue of planes q - 1, q, q + 1 of its column (sweep 0: the input), and only each
// sweep's newest plane goes to shared memory, where the neighbours in y and x read it. Per output
// of a sweep: 4 LDS (or 2 LDS and 2 shuffles), 1 STS, 8 floating-point operations.
//
// Lag: at step j sweep 0 takes plane a + j, sweep s computes plane a + j - s (a lag of R = 1, not
// the library's R + 1). Its plane q + 1 of sweep s - 1 was computed earlier in the same step, and
// is read from the register queue; plane q of sweep s - 1 (its y and x neighbours) was stored
// into shared memory in the step before. Each sweep's plane has two buffers, one written at even
// steps and one at odd, read the step after: one barrier a step orders both the reads after the
// writes and the next writes after the reads.
//
// What it covers, to keep the kernel simple: interior tiles only. A block's region is its
// threads, BX x BY; after k sweeps its tile is the region less k on each side (blocks whose
// region would leave the volume are not launched). Along z a block takes a chunk of output
// planes and recomputes the k planes below and above it; chunks cover output planes k ..
// depth - k - 1, whose halo stays inside the volume, so no plane index is ever clamped (clamp's
// edge planes would need a different start and end of the walk for each sweep). The pass stores
// 87 to 97% of the volume's outputs, by shape and k (printed for each row): its ratio is printed
// as timed, which flatters it by that much, and per output stored (its time over that fraction).
// Its outputs are compared bit for bit (the same sums in the same order, coalesce_test::seven_point
// through a neighbourhood of registers) with the library's k single sweeps on the positions it
// stores.
//
// Its sm_90 SASS (CUDA 13.0), the step loop (6 steps a trip): 34.0, 48.2 and 60.0 instructions a
// step at k = 2, 3 and 4 with 4 LDS and 1 STS an element-sweep; the rest is the 8 floating-point
// operations, the LDG, STG and barrier of the step and about 5 pointer increments. No local
// memory at up to 64 registers (40 to 48 taken); held to 32, k = 3 keeps 8 bytes of stack, outside
// the loop.
//
// Measured on an NVIDIA H100, CUDA 13.0: docs/bench/iterated-h100/fused-volume-queue.txt (k = 4 at
// 1.87x the library's single sweeps, 32 x 32 threads held to 32 registers). The library's fused
// volume walk has since taken this form (stencil_fused_volume_walk.hpp): its rows here compare the
// two.
#include <coalesce/pitched_volume.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/device.hpp>

#include "median_time.hpp"
#include "stencils.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using experiments::median_ms;

namespace {

constexpr int ahead = 2;  // steps an input plane is loaded before it is used: a DRAM latency is about two steps

// The 7-point neighbourhood of one output, as coalesce_test::seven_point reads it: z from the
// register queue, y and x from the plane in shared memory (or x by shuffle).
struct column_neighbourhood {
  float below, centre, above, north, south, west, east;  // dz = -1, 0, 1; dy = -1, 1; dx = -1, 1
  __device__ __forceinline__ float operator()(int dz, int dy, int dx) const {
    if (dz != 0) return dz < 0 ? below : above;
    if (dy != 0) return dy < 0 ? north : south;
    if (dx != 0) return dx < 0 ? west : east;
    return centre;
  }
};

template <class F, int... J>
__device__ __forceinline__ void for_steps(std::integer_sequence<int, J...>, const F& step) {
  (step(std::integral_constant<int, J>{}), ...);
}

template <int N>
using int_ = std::integral_constant<int, N>;

// One pass of K sweeps. Block (bx, by, bz) takes the region whose corner is (by * (BY - 2K),
// bx * (BX - 2K)) and the Planes output planes from z0 = K + bz * Planes, the last chunk moved
// down to end at depth - K (it recomputes a few planes the one before stores too: the same
// values). A chunk of a fixed length gives the walk a trip count known at compile time: no
// remainder, one counter a 6 steps. Thread (x, y) takes the region's column (y, x). in and out
// have the same pitches (in elements). ShuffleX: x neighbours by shuffle from the queue's centre
// (a warp is a region row: BX = 32). Registers for SMThreads threads an SM: 1024 leaves the
// compiler 64 a thread (it takes 42 to 48), 2048 holds it to 32.
template <int BX, int BY, int K, int Planes, bool ShuffleX, int SMThreads>
__global__ void __launch_bounds__(BX* BY, SMThreads / (BX * BY))
    queue_pass(const float* __restrict__ in, float* __restrict__ out, int depth, std::size_t pitch, std::size_t slice) {
  static_assert(!ShuffleX || BX == 32, "x neighbours by shuffle need a warp to be one row of the region");
  static_assert(Planes % 2 == 0 && Planes >= 2, "the walk takes its steps in pairs");
  constexpr int plane = BX * BY;
  __shared__ float planes[2][K][plane];  // [step parity][sweep 0 .. K - 1]: the sweep's newest plane
  const int x = int(threadIdx.x), y = int(threadIdx.y), own = y * BX + x;
  // The neighbours' places in a plane, kept inside the region: what a thread at the region's
  // edge computes with its own value instead is kept by no later sweep and by no output.
  const int north = y > 0 ? own - BX : own, south = y + 1 < BY ? own + BX : own;
  const int west = x > 0 ? own - 1 : own, east = x + 1 < BX ? own + 1 : own;
  const bool stored = y >= K && y < BY - K && x >= K && x < BX - K;
  const int z0 = K + int(blockIdx.z) * Planes < depth - K - Planes ? K + int(blockIdx.z) * Planes : depth - K - Planes;
  const std::size_t column = (std::size_t(blockIdx.y) * (BY - 2 * K) + std::size_t(y)) * pitch +
                             std::size_t(blockIdx.x) * (BX - 2 * K) + std::size_t(x);
  const float* load = in + std::size_t(z0 - K) * slice + column;  // sweep 0's first plane, a = z0 - K
  float* store = out + std::size_t(z0) * slice + column;
  const coalesce_test::seven_point f;

  float loaded[ahead];  // input planes a + j .. a + j + ahead - 1 at step j
#pragma unroll
  for (int i = 0; i < ahead; ++i, load += slice) loaded[i] = __ldg(load);
  float queue[K][3] = {};  // sweep s's planes q - 1, q, q + 1 of the column (s = 0: the input)

  // Step j: every sweep up to Last takes its next plane; sweep K (when Last is K) stores it.
  // Parity = j % 2 picks the buffers written; the other ones were written in step j - 1.
  const auto step = [&](auto parity, auto last, auto load_ahead) {
    constexpr int b = decltype(parity)::value, Last = decltype(last)::value;
    const float incoming = loaded[0];
#pragma unroll
    for (int i = 0; i + 1 < ahead; ++i) loaded[i] = loaded[i + 1];
    if constexpr (decltype(load_ahead)::value) {
      loaded[ahead - 1] = __ldg(load);
      load += slice;
    }
    queue[0][0] = queue[0][1];
    queue[0][1] = queue[0][2];
    queue[0][2] = incoming;
    planes[b][0][own] = incoming;
#pragma unroll
    for (int s = 1; s <= Last; ++s) {
      const float* const from = planes[b ^ 1][s - 1];  // plane q of sweep s - 1, stored in step j - 1
      const float c = queue[s - 1][1];
      float w, e;
      if constexpr (ShuffleX) {
        w = __shfl_up_sync(0xffffffffu, c, 1);  // lane 0 and 31 get their own: the region's edge
        e = __shfl_down_sync(0xffffffffu, c, 1);
      } else {
        w = from[west];
        e = from[east];
      }
      const float v = f(column_neighbourhood{queue[s - 1][0], c, queue[s - 1][2], from[north], from[south], w, e});
      if (s < K) {
        queue[s][0] = queue[s][1];
        queue[s][1] = queue[s][2];
        queue[s][2] = v;
        planes[b][s][own] = v;
      } else if (stored) {
        *store = v;
      }
    }
    if constexpr (Last == K) store += slice;
    __syncthreads();
  };

  // Steps 0 .. 2K - 1 (planes a .. z0 + K - 1 of the input): sweep s starts at step 2s, the first
  // whose queue of sweep s - 1 holds the first plane it needs; sweep K stores nothing yet.
  for_steps(std::make_integer_sequence<int, 2 * K>{}, [&](auto j) {
    constexpr int J = decltype(j)::value;
    step(int_<J % 2>{}, int_<J / 2>{}, std::true_type{});
  });
  // Steps 2K ..: every sweep, sweep K storing planes z0 .. z0 + Planes - 1; the last `ahead`
  // load nothing. Unrolled by 6 steps, so that the queues (3 planes) and the buffers (2) come back
  // to the same registers and addresses, and no register is moved.
  static_assert(ahead == 2, "the last two steps load nothing");
  const auto pair = [&](auto load_ahead) {
    step(int_<0>{}, int_<K>{}, load_ahead);
    step(int_<1>{}, int_<K>{}, load_ahead);
  };
#pragma unroll 1
  for (int m = 0; m < (Planes - ahead) / 6; ++m) {
    pair(std::true_type{});
    pair(std::true_type{});
    pair(std::true_type{});
  }
  for_steps(std::make_integer_sequence<int, (Planes - ahead) % 6 / 2>{}, [&](auto) { pair(std::true_type{}); });
  pair(std::false_type{});
}

// A hand-written configuration: its kernel, launched on a volume of n^3 floats.
struct hand_pass {
  std::string name;
  int bx, by, k, chunk;
  void (*launch)(const float*, float*, int, std::size_t, std::size_t, dim3);
  cudaFuncAttributes attributes;

  int tile_rows() const { return by - 2 * k; }
  int tile_cols() const { return bx - 2 * k; }
  // Regions inside the volume only; chunks of output planes k .. n - k - 1.
  dim3 grid(int n) const {
    return dim3(unsigned((n - bx) / tile_cols() + 1), unsigned((n - by) / tile_rows() + 1),
                unsigned((n - 2 * k + chunk - 1) / chunk));
  }
};

template <int BX, int BY, int K, int Planes, bool ShuffleX = false, int SMThreads = 1024>
hand_pass make_hand() {
  static_assert(BY > 2 * K && BX > 2 * K, "the tile would be empty");
  constexpr auto kernel = queue_pass<BX, BY, K, Planes, ShuffleX, SMThreads>;
  hand_pass h{std::to_string(BX) + " x " + std::to_string(BY) + " threads" + (ShuffleX ? ", x by shuffle" : "") + ", " +
                  std::to_string(Planes) + " planes a block" + (SMThreads > 1024 ? ", 32 registers" : ""),
              BX,
              BY,
              K,
              Planes,
              [](const float* in, float* out, int depth, std::size_t pitch, std::size_t slice, dim3 grid) {
                kernel<<<grid, dim3(BX, BY)>>>(in, out, depth, pitch, slice);
              },
              {}};
  cudaFuncGetAttributes(&h.attributes, kernel);
  return h;
}

// The rows of one k: block shapes (those 8 rows high only below k = 4, where their tile keeps
// rows), a longer chunk, x by shuffle, and 32 registers a thread (2048 threads an SM).
template <int K>
void add_hand_rows(std::vector<hand_pass>& rows) {
  if constexpr (K < 4) rows.push_back(make_hand<32, 8, K, 64>());
  rows.push_back(make_hand<32, 16, K, 64>());
  rows.push_back(make_hand<32, 32, K, 64>());
  if constexpr (K < 4) rows.push_back(make_hand<64, 8, K, 64>());
  rows.push_back(make_hand<64, 16, K, 64>());
  rows.push_back(make_hand<32, 32, K, 128>());
  rows.push_back(make_hand<32, 16, K, 64, true>());
  rows.push_back(make_hand<32, 32, K, 64, true>());
  rows.push_back(make_hand<32, 16, K, 64, false, 2048>());
  rows.push_back(make_hand<32, 32, K, 64, false, 2048>());
}

}  // namespace

int main() {
  const int n = 512;
  const auto values = coalesce::testing::random_values<float>(std::size_t(n) * n * n);
  coalesce::pitched_volume<float> source(values, n, n, n), u(n, n, n), v(n, n, n), hand(n, n, n);
  const auto source_view = source.const_view();
  const auto hand_view = hand.view();
  if (source_view.pitch_bytes() != hand_view.pitch_bytes() ||
      source_view.slice_pitch_bytes() != hand_view.slice_pitch_bytes())
    return std::printf("the volumes' pitches differ\n"), 1;
  const std::size_t pitch = hand_view.pitch_bytes() / sizeof(float),
                    slice = hand_view.slice_pitch_bytes() / sizeof(float);
  const coalesce_test::seven_point f;
  std::vector<hand_pass> hands;
  add_hand_rows<2>(hands);
  add_hand_rows<3>(hands);
  add_hand_rows<4>(hands);
  std::printf("one pass of k sweeps of the 7-point stencil, 512^3 floats, clamp; ratio: k single sweeps' time / "
              "the row's\n");
  std::size_t all_differ = 0;
  for (const int k : {2, 3, 4}) {
    const auto singles = [&] { coalesce::stencil<1>(k, coalesce::clamp, u, v, f, coalesce::fuse{1}); };
    const auto fused = [&] { coalesce::stencil<1>(k, coalesce::clamp, u, v, f, coalesce::fuse{k}); };
    // The reference: k single sweeps from the values (u after an even k, v after an odd one).
    u.copy_from(source);
    singles();
    const std::vector<float> want = (k % 2 == 0 ? u : v).to_vector();
    u.copy_from(source);
    fused();
    const std::vector<float> fused_got = (k % 2 == 0 ? u : v).to_vector();
    std::size_t fused_differ = 0;
    for (std::size_t i = 0; i < want.size(); ++i) fused_differ += fused_got[i] != want[i];
    const double singles_ms = median_ms(singles), fused_ms = median_ms(fused);
    std::printf("k = %d\n", k);
    std::printf("  %-64s %8.4f ms  %.3fx\n", ("library, " + std::to_string(k) + " single sweeps (fuse{1})").c_str(),
                singles_ms, 1.0);
    std::printf("  %-64s %8.4f ms  %.3fx  %zu of all outputs differ from the single sweeps'\n",
                ("library, fuse{" + std::to_string(k) + "}").c_str(), fused_ms, singles_ms / fused_ms, fused_differ);
    all_differ += fused_differ;
    for (const hand_pass& h : hands) {
      if (h.k != k) continue;
      const dim3 grid = h.grid(n);
      const auto run = [&] { h.launch(source_view.data(), hand_view.data(), n, pitch, slice, grid); };
      cudaMemset(hand_view.data(), 0xff, hand_view.slice_pitch_bytes() * std::size_t(n));  // NaN: unwritten differs
      run();
      const std::vector<float> got = hand.to_vector();
      // The positions stored: planes k .. n - k - 1, and a box of whole tiles in each plane.
      const std::size_t rows_end = std::size_t(k) + grid.y * std::size_t(h.tile_rows()),
                        cols_end = std::size_t(k) + grid.x * std::size_t(h.tile_cols());
      std::size_t compared = 0, differ = 0;
      for (std::size_t z = std::size_t(k); z < std::size_t(n - k); ++z)
        for (std::size_t y = std::size_t(k); y < rows_end; ++y)
          for (std::size_t x = std::size_t(k); x < cols_end; ++x) {
            const std::size_t i = (z * std::size_t(n) + y) * std::size_t(n) + x;
            ++compared;
            differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
          }
      const double ms = median_ms(run), stored = double(compared) / (double(n) * n * n);
      std::printf("  %-64s %8.4f ms  %.3fx  (%.3fx per output stored, %.1f%% stored)  %d registers  %zu B shared  "
                  "%zu B local  %zu differ\n",
                  ("hand-written, " + h.name).c_str(), ms, singles_ms / ms, singles_ms * stored / ms, 100.0 * stored,
                  h.attributes.numRegs, h.attributes.sharedSizeBytes, h.attributes.localSizeBytes, differ);
      all_differ += differ;
    }
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess && all_differ == 0 ? 0 : 1;
}
