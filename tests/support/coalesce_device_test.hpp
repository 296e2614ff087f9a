// What coalesce's device tests share: one hardware-counter profiler per test executable, the rules
// for measurements that cannot be taken, and the comparison of coalesce with its competitors.
//
// Every test case launches its kernels first and measures after. Where it does not measure:
//   - on small problems (coalesce::testing::small_problems(): the quick test scope, or a test run
//     by hand without COALESCE_TEST_FULL=1) and under compute-sanitizer (COALESCE_SANITIZER),
//     the kernels have run and their results are checked, and timings and counters would mean
//     nothing: the case ends there as passed, and the executable reports how many cases it did
//     not measure;
//   - without a GPU or without counter access the case is skipped (exit 77), or fails when
//     COALESCE_REQUIRE_GPU is set.
// So an executable that exits 77 under a sanitizer skipped something before its launches, which
// scripts/device-check.sh treats as a failure.
#pragma once

#include <coalesce/testing/testing.hpp>

#include "coalesce_test.hpp"
#include "competitors.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace coalesce_test {

// The executable's profiler with the default metrics, made on first use (CUPTI's set-up is not
// cheap, and one profiler per process is what CUPTI supports).
inline coalesce::testing::counter_profiler& profiler() {
  static coalesce::testing::counter_profiler instance;
  return instance;
}

// The sectors L2 serves to L1's reads: the halo traffic the access model predicts for the
// stencil walks (model::band_halo_sectors_per_output_sector, model::fused_stencil_pass).
inline constexpr const char* l2_sectors_read_by_l1 = "lts__t_sectors_srcunit_tex_op_read.sum";

// The executable's profiler with the default metrics and l2_sectors_read_by_l1, for the stencil
// tests; an executable uses it or profiler(), not both.
inline coalesce::testing::counter_profiler& halo_profiler() {
  static coalesce::testing::counter_profiler instance([] {
    auto metrics = coalesce::testing::default_metrics();
    metrics.push_back(l2_sectors_read_by_l1);
    return metrics;
  }());
  return instance;
}

// What a comparison of coalesce with its competitors found: each one's best median bandwidth over
// the rounds, as a share of cudaMemcpy and of the DRAM peak.
struct comparison {
  double library = 0.0;               // share of cudaMemcpy
  double library_of_peak = 0.0;       // share of the DRAM peak
  double best_competitor = 0.0;       // share of cudaMemcpy
  std::string best_competitor_name;

  double versus_best_competitor() const { return best_competitor > 0.0 ? library / best_competitor : 0.0; }
};

// Times `library` and every competitor in `rounds` interleaved rounds (so that a clock change
// during one measurement cannot decide the comparison), keeps each one's best median, prints them
// under `title`, and returns what was found. `bytes` is what the work must read plus write.
inline comparison compare_with_competitors(coalesce::testing::bandwidth_meter& meter, const std::string& title,
                                           const std::function<void(cudaStream_t)>& library,
                                           const std::vector<candidate>& competitors, double bytes, int rounds = 3) {
  std::vector<double> best(competitors.size(), 0.0);
  comparison c;
  for (int round = 0; round < rounds; ++round) {
    const auto mine = meter.measure(library, bytes);
    if (mine.ratio_to_memcpy > c.library) {
      c.library = mine.ratio_to_memcpy;
      c.library_of_peak = mine.fraction_of_dram_peak;
    }
    for (std::size_t i = 0; i < competitors.size(); ++i)
      best[i] = std::max(best[i], meter.measure(competitors[i].launch, bytes).ratio_to_memcpy);
  }
  std::printf("\n%s (cudaMemcpy %.0f GB/s, DRAM peak %.0f GB/s):\n", title.c_str(), meter.memcpy_gigabytes_per_s(),
              meter.dram_peak_gigabytes_per_s());
  std::printf("  %-56s %6.1f%% of cudaMemcpy  %5.1f%% of peak\n", "coalesce", 100.0 * c.library,
              100.0 * c.library_of_peak);
  for (std::size_t i = 0; i < competitors.size(); ++i) {
    std::printf("  %-56s %6.1f%% of cudaMemcpy\n", competitors[i].name.c_str(), 100.0 * best[i]);
    if (competitors[i].role == coalesce::testing::row_role::competitor && best[i] > c.best_competitor) {
      c.best_competitor = best[i];
      c.best_competitor_name = competitors[i].name;
    }
  }
  std::printf("  coalesce / best competitor (%s): %.3f\n", c.best_competitor_name.c_str(), c.versus_best_competitor());
  return c;
}

// Runs every candidate's launch once (on stream 0), so that the sanitizers see them too.
inline void launch_each(const std::vector<candidate>& candidates) {
  for (const auto& c : candidates) c.launch(cudaStream_t{});
  coalesce::testing::check_sync("competitors");
}

}  // namespace coalesce_test

// Ends the test case before its counter and timing measurements when they cannot be taken (see
// the top of this file): on small problems, passed with a note; without counter access,
// skipped (a failure with COALESCE_REQUIRE_GPU).
#define COALESCE_REQUIRE_COUNTERS(profiler)                                                                           \
  do {                                                                                                                \
    COALESCE_REQUIRE_TIMING();                                                                                        \
    if (!(profiler).available()) COALESCE_SKIP("hardware counters unavailable: " + *(profiler).unavailable_reason()); \
  } while (0)

// Ends the test case before its timings on small problems (quick scope, sanitizers), passed with a note.
#define COALESCE_REQUIRE_TIMING()                \
  do {                                           \
    if (::coalesce::testing::small_problems()) { \
      ::coalesce_test::record_unmeasured();      \
      return;                                    \
    }                                            \
  } while (0)
