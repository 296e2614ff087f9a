// The transpose ladder on an 8192 x 8192 float matrix: naive, a [32][32] tile, the same tile
// padded and swizzled through coalesce::shared_tile, and coalesce::transpose. For each rung:
// bandwidth as a share of cudaMemcpy, global sectors per request, and shared-memory wavefronts
// per instruction (1 is conflict-free, 32 is a warp served one thread at a time).
// Exits 77 (skipped) when there is no GPU, 1 when a rung computes a wrong result.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/shared_tile.hpp>
#include <coalesce/testing/testing.hpp>
#include <coalesce/transpose.hpp>

#include "ladder_kernels.cuh"

#include <cstdio>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

int main() {
  const std::size_t n = 8192;
  std::printf("transpose of a %zu x %zu float matrix\n", n, n);
  using padded_layout = coalesce::tile_layout<float, 32, 32, coalesce::padded>;
  using unpadded_layout = coalesce::tile_layout<float, 32, 32, coalesce::unpadded>;
  std::printf("certificate, column reads of a 32 x 32 float tile: unpadded %u wavefronts, padded %u\n",
              unpadded_layout::column_access_wavefronts, padded_layout::column_access_wavefronts);
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the measurements need a GPU (%s)\n", reason->c_str());
    return 77;
  }

  const auto values = ct::random_values<float>(n * n);
  coalesce::pitched_matrix<float> in(values, n, n), out(n, n);
  std::vector<float> expected(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) expected[c * n + r] = values[r * n + c];

  ct::bandwidth_meter meter;
  ct::counter_profiler profiler;
  std::printf("cudaMemcpy device-to-device: %.0f GB/s (= 100%%); DRAM peak: %.0f GB/s\n\n",
              meter.memcpy_gigabytes_per_s(), meter.dram_peak_gigabytes_per_s());
  std::printf("%-28s %9s %9s %7s %13s %13s %18s\n", "rung", "GB/s", "% memcpy", "% peak", "load sect/req",
              "store sect/req", "shared ld wavefr/instr");
  const dim3 tiles(unsigned(n / 32), unsigned(n / 32)), tile_threads(32, 8);
  struct rung {
    const char* name;
    void (*launch)(pitched_view<const float>, pitched_view<float>, cudaStream_t, dim3, dim3);
  };
  const rung rungs[] = {
      {"naive (one element/thread)", [](pitched_view<const float> i, pitched_view<float> o, cudaStream_t s, dim3 t,
                                        dim3) { transpose_naive<<<dim3(t.x, t.y * 4), dim3(32, 8), 0, s>>>(i, o); }},
      {"tile [32][32] (unpadded)", [](pitched_view<const float> i, pitched_view<float> o, cudaStream_t s, dim3 t,
                                      dim3 b) { transpose_tiled<coalesce::unpadded><<<t, b, 0, s>>>(i, o); }},
      {"tile padded ([32][33])", [](pitched_view<const float> i, pitched_view<float> o, cudaStream_t s, dim3 t,
                                    dim3 b) { transpose_tiled<coalesce::padded><<<t, b, 0, s>>>(i, o); }},
      {"tile swizzled (c ^ r)", [](pitched_view<const float> i, pitched_view<float> o, cudaStream_t s, dim3 t,
                                   dim3 b) { transpose_tiled<coalesce::swizzled><<<t, b, 0, s>>>(i, o); }},
      {"coalesce::transpose", [](pitched_view<const float> i, pitched_view<float> o, cudaStream_t s, dim3,
                                 dim3) { coalesce::transpose(i, o, s); }},
  };
  bool correct = true;
  for (const auto& r : rungs) {
    auto launch = [&](cudaStream_t s) {
      r.launch(in.const_view(), out.view(), s, tiles, tile_threads);
      ct::check_launch(r.name);
    };
    out.fill(0.0f);
    launch(0);
    if (out.to_vector() != expected) {
      std::printf("MISMATCH: %s computed a wrong transpose\n", r.name);
      correct = false;
    }
    const auto bw = meter.measure(launch, 2.0 * n * n * sizeof(float));
    if (profiler.available()) {
      const auto m = profiler.measure([&] { launch(0); });
      std::printf("%-28s %9.1f %8.1f%% %6.1f%% %13.2f %13.2f %18.2f\n", r.name, bw.gigabytes_per_s,
                  100.0 * bw.ratio_to_memcpy, 100.0 * bw.fraction_of_dram_peak, m.load_sectors_per_request(),
                  m.store_sectors_per_request(), m.shared_load_wavefronts_per_instruction());
    } else {
      std::printf("%-28s %9.1f %8.1f%% %6.1f%% %13s %13s %18s\n", r.name, bw.gigabytes_per_s,
                  100.0 * bw.ratio_to_memcpy, 100.0 * bw.fraction_of_dram_peak, "n/a", "n/a", "n/a");
    }
  }
  if (!profiler.available()) std::printf("(counters unavailable: %s)\n", profiler.unavailable_reason()->c_str());
  return correct ? 0 : 1;
}
