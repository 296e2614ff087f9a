// An experiment, built on demand (target coalesce_experiment_star_plane, outside ALL): what the
// 25-point star (radius 4) on 512^3 floats, clamp, gains from a 2.5D walk whose plane sits in
// shared memory and is read a float4 at a time, against coalesce::stencil<4> of today (the plane's
// rows read through L1: 49.8% of cudaMemcpy on an H200, L2 serving 3.77 sectors to L1 per output
// sector). Issue 36's target: >= 70% of cudaMemcpy.
//
// Each thread takes a float4 of outputs in KY rows (BY rows apart) and walks a block's chunk of
// planes. Along z each row keeps the queue of its centre vectors of planes z - 4 .. z + 4 in
// registers, the next plane's vector loaded one step ahead. Per plane the block stores its centre
// vectors, the 4 rows above and below and a float4 either side of each row into a tile (two
// tiles, one written while the other may still be read, so one barrier a plane); the halo of the
// next plane is loaded a step ahead too. A thread then reads its x neighbours as two float4 and
// its y neighbours as eight, conflict-free (a warp reads consecutive float4s of a tile row).
// Every variant's output is compared with coalesce::stencil<4>'s, bit for bit. Beside them, the
// library's own kernel in other block shapes, with two rows a thread, and with float2 vectors or
// single floats (fewer registers: 102 and 64 against 128). (Held to 3 or 4 blocks an SM through a
// bound on the kernel's registers, it spilled and ran at 0.753 and 0.569 of its speed, float2s at
// 3 blocks 0.792: docs/bench/star-h100/star-plane-third.txt; the bound was taken out.)
//
// Measured on an NVIDIA H100 80GB HBM3, CUDA 13.0 (docs/bench/star-h100): the library 0.5388 ms,
// 67.3% of cudaMemcpy there; the best shared-memory plane (16 x 16 threads, 32 planes) 0.5377 ms,
// 0.52-0.86x for the other shapes. The library's kernel took about as long on an H200 (0.504 ms,
// docs/bench/coalesce-bench.txt), with 1.4x the bandwidth: DRAM is not what holds it. It has 128
// registers: 2 blocks (16
// warps) an SM, 25% theoretical occupancy. Nsight Compute ran only on a variant since taken out (a
// warp-splitting copy of the walk, see stencil_volume_walk.hpp; docs/bench/star-h100/
// ncu-divergent-walk.txt): no eligible warp 52% of the cycles. The second file's rows of the
// library kernel ran that variant too, so only its shared-plane rows stand.
// The float2 and single-float rows have not run yet.
#include <coalesce/pitched_volume.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/device.hpp>

#include "median_time.hpp"
#include "stencils.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using experiments::median_ms;

namespace {

constexpr int R = 4, H = 2 * R + 1;

__device__ __forceinline__ int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

// The float4 of row `row` at columns col .. col + 3 (col a multiple of 4), clamped: a vector
// left of the volume is four copies of column 0, right of it four of the last column.
__device__ __forceinline__ float4 vector_at(const float* row, int col, int cols) {
  if (col < 0) {
    const float v = __ldg(row);
    return make_float4(v, v, v, v);
  }
  if (col >= cols) {
    const float v = __ldg(row + cols - 1);
    return make_float4(v, v, v, v);
  }
  return __ldg(reinterpret_cast<const float4*>(row + col));
}

__device__ __forceinline__ float element(const float4& v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

// The neighbourhood of output element j of a thread's vector: z from the queue, y from the eight
// tile vectors above and below, x from the row's three vectors (left, centre, right).
struct star_neighbourhood {
  const float4* queue;   // queue[R + dz]
  const float4* column;  // column[R + dy], dy != 0
  const float4* row;     // row[0] left, row[1] centre, row[2] right
  int j;
  __device__ __forceinline__ float operator()(int dz, int dy, int dx) const {
    if (dz != 0) return element(queue[R + dz], j);
    if (dy != 0) return element(column[R + dy], j);
    const int e = 4 + j + dx;  // 0 .. 11 over row[0..2]
    return element(row[e / 4], e % 4);
  }
};

template <int BX, int BY, int KY, int Planes>
__global__ void __launch_bounds__(BX* BY)
    star_shared_plane(const float* __restrict__ in, float* __restrict__ out, int depth, int rows, int cols,
                      std::size_t pitch, std::size_t slice) {
  constexpr int TY = BY * KY, TW = 4 * BX + 2 * R, TH = TY + 2 * R, threads = BX * BY;
  constexpr int row_items = 2 * R * BX, items = row_items + 2 * TY, per_thread = (items + threads - 1) / threads;
  __shared__ __align__(16) float tile[2][TH][TW];
  const int tx = int(threadIdx.x), ty = int(threadIdx.y), t = ty * BX + tx;
  const int bc = int(blockIdx.x) * BX * 4, by0 = int(blockIdx.y) * TY, c = bc + 4 * tx;
  const int z_begin = int(blockIdx.z) * Planes, z_end = z_begin + Planes < depth ? z_begin + Planes : depth;
  const auto row_of = [&](int z, int y) {
    return in + std::size_t(clamp_index(z, depth)) * slice + std::size_t(clamp_index(y, rows)) * pitch;
  };
  // Halo item i: where it lies in the tile and in the plane.
  const auto halo_place = [&](int i, int& tile_row, int& tile_col, int& y, int& col) {
    if (i < row_items) {
      const int h = i / BX, v = i % BX;
      tile_row = h < R ? h : TY + h;
      tile_col = R + 4 * v;
      col = bc + 4 * v;
    } else {
      const int j = i - row_items, side = j % 2;
      tile_row = R + j / 2;
      tile_col = side ? R + 4 * BX : 0;
      col = side ? bc + 4 * BX : bc - 4;
    }
    y = by0 - R + tile_row;
  };
  // visit(k, tile_row, tile_col, y, col) for each halo item k of this thread.
  const auto for_each_halo_item = [&](const auto& visit) {
#pragma unroll
    for (int k = 0; k < per_thread; ++k) {
      const int i = t + k * threads;
      if (items % threads == 0 || i < items) {
        int tr, tc, y, col;
        halo_place(i, tr, tc, y, col);
        visit(k, tr, tc, y, col);
      }
    }
  };
  float4 halo[per_thread];
  const auto load_halo = [&](int z) {
    for_each_halo_item([&](int k, int, int, int y, int col) { halo[k] = vector_at(row_of(z, y), col, cols); });
  };
  float4 queue[KY][H], next[KY];
#pragma unroll
  for (int k = 0; k < KY; ++k) {
    const int y = by0 + ty + k * BY;
#pragma unroll
    for (int i = 1; i < H; ++i) queue[k][i] = vector_at(row_of(z_begin - R - 1 + i, y), c, cols);
    next[k] = vector_at(row_of(z_begin + R, y), c, cols);
  }
  load_halo(z_begin);
  for (int z = z_begin; z < z_end; ++z) {
    const int b = z & 1;
#pragma unroll
    for (int k = 0; k < KY; ++k) {
#pragma unroll
      for (int i = 0; i + 1 < H; ++i) queue[k][i] = queue[k][i + 1];
      queue[k][H - 1] = next[k];
      next[k] = vector_at(row_of(z + R + 1, by0 + ty + k * BY), c, cols);
      *reinterpret_cast<float4*>(&tile[b][R + ty + k * BY][R + 4 * tx]) = queue[k][R];
    }
    for_each_halo_item(
        [&](int k, int tr, int tc, int, int) { *reinterpret_cast<float4*>(&tile[b][tr][tc]) = halo[k]; });
    load_halo(z + 1);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < KY; ++k) {
      const int ty_k = R + ty + k * BY, y = by0 + ty + k * BY;
      float4 column[H], row[3];
#pragma unroll
      for (int dy = -R; dy <= R; ++dy)
        if (dy != 0) column[R + dy] = *reinterpret_cast<const float4*>(&tile[b][ty_k + dy][R + 4 * tx]);
      row[0] = *reinterpret_cast<const float4*>(&tile[b][ty_k][4 * tx]);
      row[1] = queue[k][R];
      row[2] = *reinterpret_cast<const float4*>(&tile[b][ty_k][2 * R + 4 * tx]);
      const coalesce_test::twenty_five_point f;
      float4 o;
      o.x = f(star_neighbourhood{queue[k], column, row, 0});
      o.y = f(star_neighbourhood{queue[k], column, row, 1});
      o.z = f(star_neighbourhood{queue[k], column, row, 2});
      o.w = f(star_neighbourhood{queue[k], column, row, 3});
      if (y < rows) *reinterpret_cast<float4*>(out + std::size_t(z) * slice + std::size_t(y) * pitch + c) = o;
    }
  }
}

// The shape as coalesce::stencil takes it, one type for the library's call and its kernel below.
struct star {
  template <class N>
  __device__ float operator()(const N& n) const {
    return coalesce_test::twenty_five_point{}(n);
  }
};

// The library's 2.5D kernel (detail::stencil_queue_kernel, the plane's rows read through L1)
// launched with other block shapes and chunks than detail::queue_shape's 64 x 4 and 32 planes.
template <int KY, int V = 4>
void library_shape(coalesce::pitched_volume_view<const float> in, coalesce::pitched_volume_view<float> out, dim3 block,
                   int planes) {
  namespace cd = coalesce::detail;
  const int vectors = int(out.width() / V);
  const dim3 grid(unsigned((vectors + int(block.x) - 1) / int(block.x)),
                  unsigned((int(out.height()) / KY + int(block.y) - 1) / int(block.y)),
                  unsigned((int(out.depth()) + planes - 1) / planes));
  cd::stencil_queue_kernel<4, V, KY, int, coalesce::clamp_t, float, star, float>
      <<<grid, block>>>(coalesce::clamp, cuda::std::make_tuple(in), out, star{}, vectors, true, planes);
}

struct variant {
  std::string name;
  void (*launch)(const float*, float*, int, int, int, std::size_t, std::size_t);
};

template <int BX, int BY, int KY, int Planes>
variant make_variant() {
  return {std::to_string(BX) + " x " + std::to_string(BY) + " threads, " + std::to_string(KY) + " row(s) each, " +
              std::to_string(Planes) + " planes a block",
          [](const float* i, float* o, int d, int r, int c, std::size_t p, std::size_t s) {
            const dim3 grid(unsigned(c / (4 * BX)), unsigned((r + BY * KY - 1) / (BY * KY)),
                            unsigned((d + Planes - 1) / Planes));
            star_shared_plane<BX, BY, KY, Planes><<<grid, dim3(BX, BY)>>>(i, o, d, r, c, p, s);
          }};
}

}  // namespace

int main() {
  const int n = 512;
  const auto values = coalesce::testing::random_values<float>(std::size_t(n) * n * n);
  coalesce::pitched_volume<float> in(values, n, n, n), expected(n, n, n), out(n, n, n);
  const auto in_view = in.const_view();
  const auto expected_view = expected.view();
  const auto out_view = out.view();
  if (in.view().pitch_bytes() != out_view.pitch_bytes() ||
      in.view().slice_pitch_bytes() != out_view.slice_pitch_bytes())
    return std::printf("the volumes' pitches differ\n"), 1;
  const std::size_t pitch = out_view.pitch_bytes() / sizeof(float),
                    slice = out_view.slice_pitch_bytes() / sizeof(float);
  const auto library = [&] { coalesce::stencil<4>(coalesce::clamp, in_view, expected_view, star{}); };
  library();
  const std::vector<float> want = expected.to_vector();
  float* copy_to = out_view.data();
  const float* copy_from = in_view.data();
  const std::size_t bytes = std::size_t(n) * n * n * sizeof(float);
  const double copy_ms = median_ms([&] { cudaMemcpyAsync(copy_to, copy_from, bytes, cudaMemcpyDeviceToDevice); });
  const double library_ms = median_ms(library);
  std::printf("25-point star, clamp, 512^3 floats (one read and one write of %zu bytes)\n", bytes);
  std::printf("%-52s %.4f ms\n", "cudaMemcpy of the same bytes", copy_ms);
  std::printf("%-52s %.4f ms  %.1f%% of the copy\n", "coalesce::stencil<4> (L1 plane)", library_ms,
              100.0 * copy_ms / library_ms);
  const variant variants[] = {
      make_variant<32, 8, 1, 32>(),  make_variant<32, 8, 1, 64>(),  make_variant<32, 16, 1, 32>(),
      make_variant<32, 16, 1, 64>(), make_variant<32, 8, 2, 32>(),  make_variant<32, 8, 2, 64>(),
      make_variant<16, 16, 1, 32>(), make_variant<16, 16, 1, 64>(), make_variant<32, 4, 4, 64>(),
  };
  const float* from = in_view.data();
  float* to = out_view.data();
  // Each row: checked against the library's output, then timed.
  const auto report = [&](const char* name, const auto& run) {
    cudaMemset(to, 0, out_view.slice_pitch_bytes() * n);
    run();
    const bool same = out.to_vector() == want;
    const double ms = median_ms(run);
    std::printf("%-52s %.4f ms  %.1f%% of the copy  %.3fx the library  %s\n", name, ms, 100.0 * copy_ms / ms,
                library_ms / ms, same ? "" : "MISMATCH");
  };
  using volume_in = coalesce::pitched_volume_view<const float>;
  using volume_out = coalesce::pitched_volume_view<float>;
  struct library_variant {
    const char* name;
    void (*launch)(volume_in, volume_out, dim3, int);  // library_shape<rows a thread, V>
    dim3 block;
    int planes;
  };
  const library_variant shapes[] = {
      {"library kernel, 64 x 4 blocks, 32 planes (its own)", library_shape<1>, dim3(64, 4), 32},
      {"library kernel, 32 x 8 blocks, 32 planes", library_shape<1>, dim3(32, 8), 32},
      {"library kernel, 16 x 16 blocks, 32 planes", library_shape<1>, dim3(16, 16), 32},
      {"library kernel, 8 x 32 blocks, 32 planes", library_shape<1>, dim3(8, 32), 32},
      {"library kernel, 32 x 8 blocks, 64 planes", library_shape<1>, dim3(32, 8), 64},
      {"library kernel, 16 x 16 blocks, 64 planes", library_shape<1>, dim3(16, 16), 64},
      {"library kernel, 32 x 8 blocks, 16 planes", library_shape<1>, dim3(32, 8), 16},
      {"library kernel, 32 x 8 blocks, 2 rows a thread", library_shape<2>, dim3(32, 8), 32},
      {"library kernel, 16 x 16 blocks, 2 rows a thread", library_shape<2>, dim3(16, 16), 32},
      {"library kernel, float2 vectors, 64 x 4 blocks", library_shape<1, 2>, dim3(64, 4), 32},
      {"library kernel, float2 vectors, 128 x 2 blocks", library_shape<1, 2>, dim3(128, 2), 32},
      {"library kernel, float2 vectors, 32 x 8 blocks", library_shape<1, 2>, dim3(32, 8), 32},
      {"library kernel, single floats, 128 x 2 blocks", library_shape<1, 1>, dim3(128, 2), 32},
      {"library kernel, single floats, 64 x 4 blocks", library_shape<1, 1>, dim3(64, 4), 32},
  };
  for (const library_variant& v : shapes) report(v.name, [&] { v.launch(in_view, out_view, v.block, v.planes); });
  for (const variant& v : variants) report(v.name.c_str(), [&] { v.launch(from, to, n, n, n, pitch, slice); });
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
