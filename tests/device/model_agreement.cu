// The access model against the hardware: for every warp access pattern in patterns() the model's
// load sectors per request must equal the counters' exactly (global memory), and the hardware's
// shared wavefronts per instruction must lie 0 to 4% above the model's, never below (its own
// overhead, seen on conflict-free code too); DRAM bytes read must be within 3% of the model's.
#include <coalesce/model.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace m = coalesce::model;
namespace ct = coalesce::testing;

namespace {

// A warp access pattern, passed to kernels by value (param space: reading it is no global load).
struct pattern {
  unsigned offset[32];  // bytes from the warp's base
  unsigned active;      // lanes that take part
};

struct named_pattern {
  std::string name;
  bool shared;
  unsigned width;
  pattern p;
};

template <unsigned Width>
struct word;
template <>
struct word<1> {
  using type = unsigned char;
};
template <>
struct word<2> {
  using type = unsigned short;
};
template <>
struct word<4> {
  using type = unsigned;
};
template <>
struct word<8> {
  using type = uint2;
};
template <>
struct word<16> {
  using type = uint4;
};

__device__ unsigned fold(unsigned char v) { return v; }
__device__ unsigned fold(unsigned short v) { return v; }
__device__ unsigned fold(unsigned v) { return v; }
__device__ unsigned fold(uint2 v) { return v.x ^ v.y; }
__device__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

constexpr unsigned global_window = 16384;  // bytes each warp may address; a multiple of 128
constexpr unsigned shared_window = 32768;  // bytes of shared memory a block addresses

// Each warp performs exactly one load of the pattern, from its own 16 KiB window of `data`.
template <class T>
__global__ void global_pattern_load(const unsigned char* __restrict__ data, unsigned* __restrict__ out, pattern p) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t warp = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  unsigned v = 0;
  if ((p.active >> lane) & 1u) v = fold(*reinterpret_cast<const T*>(data + warp * global_window + p.offset[lane]));
  out[blockIdx.x * std::size_t(blockDim.x) + threadIdx.x] = v;
}

// Each warp performs exactly one shared load of the pattern after the block fills its window.
template <class T>
__global__ void shared_pattern_load(unsigned* __restrict__ out, pattern p) {
  extern __shared__ unsigned smem[];
  for (unsigned i = threadIdx.x; i < shared_window / 4; i += blockDim.x) smem[i] = i * 2654435761u;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  unsigned v = 0;
  if ((p.active >> lane) & 1u)
    v = fold(*reinterpret_cast<const T*>(reinterpret_cast<const unsigned char*>(smem) + p.offset[lane]));
  out[blockIdx.x * std::size_t(blockDim.x) + threadIdx.x] = v;
}

pattern make(unsigned base, unsigned stride, unsigned active = 0xFFFFFFFFu) {
  pattern p{};
  for (unsigned t = 0; t < 32; ++t) p.offset[t] = base + t * stride;
  p.active = active;
  return p;
}

template <class F>
pattern make_with(F offset_of, unsigned active = 0xFFFFFFFFu) {
  pattern p{};
  for (unsigned t = 0; t < 32; ++t) p.offset[t] = offset_of(t);
  p.active = active;
  return p;
}

std::vector<named_pattern> patterns() {
  std::mt19937 rng(1234);
  std::vector<named_pattern> v;
  auto g = [&](std::string name, unsigned width, pattern p) { v.push_back({std::move(name), false, width, p}); };
  auto s = [&](std::string name, unsigned width, pattern p) { v.push_back({std::move(name), true, width, p}); };
  // Global memory.
  g("float stride 4 B (coalesced)", 4, make(0, 4));
  g("float stride 8 B", 4, make(0, 8));
  g("float stride 16 B", 4, make(0, 16));
  g("float stride 32 B", 4, make(0, 32));
  g("float stride 64 B", 4, make(0, 64));
  g("float stride 128 B", 4, make(0, 128));
  g("float contiguous from +64 B", 4, make(64, 4));
  g("float contiguous from +4 B", 4, make(4, 4));
  g("Vec3 .x (stride 12 B)", 4, make(0, 12));
  g("char contiguous", 1, make(0, 1));
  g("short contiguous", 2, make(0, 2));
  g("double contiguous", 8, make(0, 8));
  g("float4 contiguous", 16, make(0, 16));
  g("float4 stride 32 B", 16, make(0, 32));
  g("double contiguous from +8 B", 8, make(8, 8));
  g("float random gather in 4 KiB", 4, make_with([&](unsigned) { return (rng() % 1024) * 4; }));
  g("float4 random gather in 16 KiB", 16, make_with([&](unsigned) { return (rng() % 1024) * 16; }));
  g("float broadcast", 4, make(256, 0));
  g("float half warp active", 4, make(0, 4, 0x0000FFFFu));
  g("float every other lane active", 4, make(0, 4, 0x55555555u));
  g("float lanes reversed", 4, make_with([](unsigned t) { return (31 - t) * 4; }));
  g("char stride 128 B", 1, make(0, 128));
  g("double stride 24 B (AoS of 3 doubles)", 8, make(0, 24));
  // Shared memory.
  s("shared float row", 4, make(0, 4));
  s("shared float broadcast", 4, make(64, 0));
  s("shared [32][32] float column", 4, make(0, 128));
  s("shared [32][33] float column", 4, make(0, 132));
  s("shared swizzled float column (c ^ r)", 4, make_with([](unsigned t) { return t * 128 + ((0 ^ t) % 32) * 4; }));
  s("shared float stride 2 words", 4, make(0, 8));
  s("shared float stride 3 words", 4, make(0, 12));
  s("shared double row", 8, make(0, 8));
  s("shared float4 row", 16, make(0, 16));
  s("shared double broadcast", 8, make(0, 0));
  s("shared float4 broadcast", 16, make(0, 0));
  s("shared double, both half-warps on one 128 B", 8, make_with([](unsigned t) { return (t % 16) * 8; }));
  s("shared float4 column of 512 B rows", 16, make(0, 512));
  s("shared float4 128B-swizzled column", 16, make_with([](unsigned t) { return t * 128 + ((0 ^ (t % 8)) * 16); }));
  s("shared char row", 1, make(0, 1));
  s("shared short row", 2, make(0, 2));
  s("shared float column, 8 lanes active", 4, make(0, 128, 0x000000FFu));
  s("shared double stride 16 B", 8, make(0, 16));
  s("shared double, one address per half-warp", 8, make_with([](unsigned t) { return t < 16 ? 0u : 256u; }));
  s("shared float4, quarters 0-1 one address, 2-3 another", 16,
    make_with([](unsigned t) { return t < 16 ? 0u : 512u; }));
  s("shared float4, quarters on one 128 B", 16, make_with([](unsigned t) { return (t % 8) * 16; }));
  s("shared float4 broadcast, 8 lanes active", 16, make(32, 0, 0x000000FFu));
  return v;
}

void launch_pattern(const named_pattern& np, const unsigned char* data, unsigned* out, unsigned blocks,
                    unsigned threads) {
  auto go = [&](auto kernel_tag) {
    using T = typename decltype(kernel_tag)::type;
    if (np.shared) shared_pattern_load<T><<<blocks, threads, shared_window>>>(out, np.p);
    else global_pattern_load<T><<<blocks, threads>>>(data, out, np.p);
  };
  switch (np.width) {
    case 1: go(word<1>{}); break;
    case 2: go(word<2>{}); break;
    case 4: go(word<4>{}); break;
    case 8: go(word<8>{}); break;
    default: go(word<16>{}); break;
  }
  ct::check_launch();
}

std::uint64_t offset_of(const pattern& p, unsigned lane) { return p.offset[lane]; }

}  // namespace

TEST_CASE("the model's sectors and wavefronts match the hardware's on every access pattern") {
  const auto all = patterns();
  REQUIRE(all.size() >= 30);
  const auto shared_count = std::count_if(all.begin(), all.end(), [](const named_pattern& p) { return p.shared; });
  std::printf("%zu access patterns: %zu global, %zu shared\n", all.size(), all.size() - std::size_t(shared_count),
              std::size_t(shared_count));
  const unsigned threads = 128;
  const unsigned blocks = ct::small_problems() ? 8 : 2048;
  const std::size_t warps = std::size_t(blocks) * threads / 32;
  ct::device_buffer<unsigned char> data(warps * global_window);
  COALESCE_CUDA_CHECK(cudaMemset(data.data(), 0x3C, data.size_bytes()));
  ct::device_buffer<unsigned> out(std::size_t(blocks) * threads);

  // Every pattern runs (and is checked by the sanitizers) even where counters are unavailable.
  for (const auto& np : all) launch_pattern(np, data.data(), out.data(), blocks, threads);
  ct::check_sync();
  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  auto& profiler = coalesce_test::profiler();

  std::printf("%-46s %5s | %9s %9s | %s\n", "pattern", "width", "model", "measured", "");
  int disagreements = 0;
  for (const auto& np : all) {
    const auto lane = [&](unsigned l) { return offset_of(np.p, l); };
    const auto counters = profiler.measure([&] { launch_pattern(np, data.data(), out.data(), blocks, threads); });
    double model = 0, measured = 0;
    bool agree = false;
    if (np.shared) {
      model = m::warp_shared_access(lane, np.width, np.p.active).wavefronts;
      measured = counters.shared_load_wavefronts_per_instruction();
      agree = measured >= model && measured <= 1.04 * model;
    } else {
      model = m::warp_global_access(lane, np.width, np.p.active).sectors_per_request();
      measured = counters.load_sectors_per_request();
      agree = measured == model;
    }
    disagreements += agree ? 0 : 1;
    std::printf("%-46s %3u B | %9.3f %9.3f | %s%s\n", np.name.c_str(), np.width, model, measured,
                np.shared ? "wavefronts/inst" : "sectors/req", agree ? "" : "   <-- DIFFERS");
    CHECK(agree);
  }
  REQUIRE(disagreements == 0);
}

TEST_CASE("DRAM bytes read match the model's 64-byte granularity for strided float reads") {
  // Footprint 512 MiB, many times the L2, so every read comes from DRAM (1 MiB under a sanitizer).
  const std::size_t footprint = ct::small_problems() ? std::size_t(1) << 20 : std::size_t(512) << 20;
  ct::device_buffer<unsigned char> data(footprint);
  COALESCE_CUDA_CHECK(cudaMemset(data.data(), 0x11, footprint));
  const std::size_t threads_total = footprint / global_window * 32;  // one warp per window
  ct::device_buffer<unsigned> out(threads_total);
  // Warp w reads 32 floats at `stride` from window w: the pattern's own cost, repeated.
  auto launch = [&](unsigned stride) {
    global_pattern_load<unsigned><<<unsigned(threads_total / 128), 128>>>(data.data(), out.data(), make(0, stride));
    ct::check_launch();
  };
  const unsigned strides[] = {4u, 32u, 64u, 128u};
  for (unsigned stride : strides) launch(stride);
  ct::check_sync();
  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  auto& profiler = coalesce_test::profiler();
  for (unsigned stride : strides) {
    const auto c = profiler.measure([&] { launch(stride); });
    const pattern p = make(0, stride);
    const auto lane = [&](unsigned l) { return std::uint64_t(p.offset[l]); };
    const double predicted = double(m::warp_global_access(lane, 4).dram_bytes) * double(threads_total / 32);
    std::printf("stride %3u B: DRAM read %.0f B, model %.0f B, ratio %.3f\n", stride, c.dram_bytes_read(), predicted,
                c.dram_bytes_read() / predicted);
    CHECK(c.dram_bytes_read() == Approx(predicted).epsilon(0.03));
  }
}
