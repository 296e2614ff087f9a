// An experiment, built on demand (target coalesce_experiment_aosoa_chunks, outside ALL): where
// the particle update on layout::aosoa<32> loses to columns. The library's for_each on soa and on
// aosoa<32>, <64> and <128> beside hand-written kernels over the same bytes: 16-byte chunks (a
// warp instruction four runs a tile apart on aosoa<32>), one float a thread (a run an
// instruction), and tiles staged through shared memory a warp at a time, each at three grid
// sizes. Its output on an H100 is docs/bench/layouts-split-h100/aosoa-chunks.txt; the chunk size
// the walk takes on tiles (detail/soa_walk.hpp, leaf_runs) comes from it.
#include <algorithm>
#include <coalesce/algorithm.hpp>
#include <coalesce/layout_vector.hpp>
#include <coalesce/soa.hpp>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

struct advance_particle {
  float dt;
  template <class P>
  __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

// hand soa, float4 a thread, grid-stride over chunks
__global__ void soa_hand(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz, size_t n4,
                         float dt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 a = reinterpret_cast<float4*>(x)[i], b = reinterpret_cast<float4*>(y)[i],
           c = reinterpret_cast<float4*>(z)[i];
    float4 u = reinterpret_cast<const float4*>(vx)[i], v = reinterpret_cast<const float4*>(vy)[i],
           w = reinterpret_cast<const float4*>(vz)[i];
    a.x += u.x * dt;
    a.y += u.y * dt;
    a.z += u.z * dt;
    a.w += u.w * dt;
    b.x += v.x * dt;
    b.y += v.y * dt;
    b.z += v.z * dt;
    b.w += v.w * dt;
    c.x += w.x * dt;
    c.y += w.y * dt;
    c.z += w.z * dt;
    c.w += w.w * dt;
    reinterpret_cast<float4*>(x)[i] = a;
    reinterpret_cast<float4*>(y)[i] = b;
    reinterpret_cast<float4*>(z)[i] = c;
  }
}
// hand aosoa<L>, float4 a thread: chunk i -> tile i/(L/4), q = i%(L/4)
template <int L>
__global__ void tile_vec(float* base, size_t n4, float dt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    size_t tile = i / (L / 4);
    unsigned q = i % (L / 4);
    float4* t = reinterpret_cast<float4*>(base + tile * 6 * L) + q;
    float4 a = t[0], b = t[L / 4], c = t[2 * L / 4], u = t[3 * L / 4], v = t[4 * L / 4], w = t[5 * L / 4];
    a.x += u.x * dt;
    a.y += u.y * dt;
    a.z += u.z * dt;
    a.w += u.w * dt;
    b.x += v.x * dt;
    b.y += v.y * dt;
    b.z += v.z * dt;
    b.w += v.w * dt;
    c.x += w.x * dt;
    c.y += w.y * dt;
    c.z += w.z * dt;
    c.w += w.w * dt;
    t[0] = a;
    t[L / 4] = b;
    t[2 * L / 4] = c;
  }
}
// hand aosoa<32>, a float a thread: a warp is one tile
__global__ void tile_scalar(float* base, size_t n, float dt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float* t = base + (i / 32) * 192 + (i % 32);
    float a = t[0], b = t[32], c = t[64], u = t[96], v = t[128], w = t[160];
    t[0] = a + u * dt;
    t[32] = b + v * dt;
    t[64] = c + w * dt;
  }
}
// hand aosoa<32>: a warp takes 4 tiles as 6 contiguous 512-byte loads into registers via shuffles-free
// shared staging: lanes load consecutive float4 of the 3072-byte block, write to smem, read own chunks.
__global__ void tile_staged(float* base, size_t tiles, float dt) {
  __shared__ float4 s[8][6 * 32];  // 8 warps, 4 tiles x 192 floats = 768 floats = 192 float4
  const unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  for (size_t g = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / 32; g * 4 < tiles;
       g += size_t(gridDim.x) * blockDim.x / 32) {
    float4* blk = reinterpret_cast<float4*>(base + g * 4 * 192);
#pragma unroll
    for (int k = 0; k < 6; ++k) s[w][k * 32 + lane] = blk[k * 32 + lane];
    __syncwarp();
    // lane -> tile lane/8, q lane%8; leaf L float4 at tile*48 + L*8 + q
    const unsigned tb = (lane / 8) * 48 + lane % 8;
    float4 a = s[w][tb], b = s[w][tb + 8], c = s[w][tb + 16], u = s[w][tb + 24], v = s[w][tb + 32], ww = s[w][tb + 40];
    a.x += u.x * dt;
    a.y += u.y * dt;
    a.z += u.z * dt;
    a.w += u.w * dt;
    b.x += v.x * dt;
    b.y += v.y * dt;
    b.z += v.z * dt;
    b.w += v.w * dt;
    c.x += ww.x * dt;
    c.y += ww.y * dt;
    c.z += ww.z * dt;
    c.w += ww.w * dt;
    float4* t = blk + tb;
    t[0] = a;
    t[8] = b;
    t[16] = c;
    __syncwarp();
  }
}

template <class F>
float time_ms(F&& f, int reps = 20) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

int main() {
  using namespace coalesce;
  const size_t n = size_t(32) << 20;
  std::vector<Particle> h(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& p : h) p = {d(rng), d(rng), d(rng), d(rng), d(rng), d(rng)};
  coalesce::vector<Particle> soa(h);
  coalesce::vector<Particle, layout::aosoa<32>> t32(h);
  coalesce::vector<Particle, layout::aosoa<64>> t64(h);
  coalesce::vector<Particle, layout::aosoa<128>> t128(h);
  const advance_particle f{0.01f};
  float *raw_soa[6], *raw_t32, *raw_t64, *raw_t128, *cpy_a, *cpy_b;
  for (auto& p : raw_soa) cudaMalloc(&p, n * 4);
  cudaMalloc(&raw_t32, n * 24);
  cudaMalloc(&raw_t64, n * 24);
  cudaMalloc(&raw_t128, n * 24);
  cudaMalloc(&cpy_a, n * 36);
  cudaMalloc(&cpy_b, n * 36);
  cudaMemset(raw_t32, 0, n * 24);
  cudaMemset(raw_t64, 0, n * 24);
  cudaMemset(raw_t128, 0, n * 24);
  for (auto& p : raw_soa) cudaMemset(p, 0, n * 4);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const double bytes = double(n) * 36;
  struct row {
    std::string name;
    std::function<void()> f;
    double best = 1e9;
  };
  std::vector<row> rows;
  rows.push_back(
      {"cudaMemcpy 36 B/particle / 2", [&] { cudaMemcpyAsync(cpy_b, cpy_a, n * 18, cudaMemcpyDeviceToDevice); }});
  rows.push_back({"lib soa", [&] { for_each(soa.view(), f); }});
  rows.push_back({"lib aosoa<32>", [&] { for_each(t32.view(), f); }});
  rows.push_back({"lib aosoa<64>", [&] { for_each(t64.view(), f); }});
  rows.push_back({"lib aosoa<128>", [&] { for_each(t128.view(), f); }});
  for (int per : {1, 4, 16}) {
    int blocks = per == 1 ? int(n / 4 / 256) : sms * 8 * 16 / per;
    std::string nm = "hand soa float4 grid " + std::to_string(blocks);
    rows.push_back({nm, [&, blocks] {
                      soa_hand<<<blocks, 256>>>(raw_soa[0], raw_soa[1], raw_soa[2], raw_soa[3], raw_soa[4], raw_soa[5],
                                                n / 4, 0.01f);
                    }});
    nm = "hand aosoa<32> float4 grid " + std::to_string(blocks);
    rows.push_back({nm, [&, blocks] { tile_vec<32><<<blocks, 256>>>(raw_t32, n / 4, 0.01f); }});
    nm = "hand aosoa<64> float4 grid " + std::to_string(blocks);
    rows.push_back({nm, [&, blocks] { tile_vec<64><<<blocks, 256>>>(raw_t64, n / 4, 0.01f); }});
    nm = "hand aosoa<128> float4 grid " + std::to_string(blocks);
    rows.push_back({nm, [&, blocks] { tile_vec<128><<<blocks, 256>>>(raw_t128, n / 4, 0.01f); }});
    int sb = per == 1 ? int(n / 256) : sms * 8 * 16 * 4 / per;
    nm = "hand aosoa<32> scalar grid " + std::to_string(sb);
    rows.push_back({nm, [&, sb] { tile_scalar<<<sb, 256>>>(raw_t32, n, 0.01f); }});
    int gb = per == 1 ? int(n / 128 / 8) : sms * 8 * 4 / per;
    nm = "hand aosoa<32> warp-staged grid " + std::to_string(gb);
    rows.push_back({nm, [&, gb] { tile_staged<<<gb, 256>>>(raw_t32, n / 32, 0.01f); }});
  }
  for (int round = 0; round < 3; ++round)
    for (auto& r : rows) {
      r.f();
      cudaDeviceSynchronize();
      r.best = std::min(r.best, double(time_ms(r.f)));
    }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  const double copy = rows[0].best, lsoa = rows[1].best;
  for (auto& r : rows)
    std::printf("%-40s %.4f ms  %.3f of memcpy  %.3f of lib soa  %.0f GB/s\n", r.name.c_str(), r.best, copy / r.best,
                lsoa / r.best, bytes / r.best / 1e6);
}
