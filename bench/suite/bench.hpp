// coalesce's side-by-side benchmark: the runner every group uses. A row is one kernel (or one
// library call) on buffers at least 4x the L2: its best median time over three rounds of 25
// launches after warm-up, its
// bandwidth as a share of a cudaMemcpy device-to-device reference of at least as many bytes and as
// a share of the DRAM peak, both measured in the same process, and - when hardware counters can
// be read - load and store sectors per request and DRAM bytes. coalesce's rows carry targets
// against the best competitor of their group; `coalesce_bench --check` fails when one is missed.
#pragma once

#include <coalesce/testing/testing.hpp>

#include "competitors.hpp"
#include "targets.hpp"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bench {

namespace ct = coalesce::testing;
using coalesce_test::candidate;
using coalesce_test::operator+;
using ct::row_role;
using ct::row_target;

namespace targets = coalesce_test::targets;

// The target of a coalesce row that does work its competitors do too (targets.hpp, which the
// device tests assert as well): a share of the best competitor's bandwidth in the same run, and a
// floor of the DRAM peak.
inline row_target target(double min_fraction_of_dram_peak) {
  return row_target{targets::versus_best_competitor, min_fraction_of_dram_peak};
}

class runner {
 public:
  runner() : meter_(options()) {}

  static ct::timing_options options() {
    ct::timing_options o;
    o.warmup = 3;
    o.repetitions = 25;
    return o;
  }

  ct::bandwidth_meter& meter() { return meter_; }
  ct::counter_profiler& profiler() { return profiler_; }
  const std::vector<ct::report_row>& rows() const { return rows_; }

  // Times every candidate of `group`, which all do work that must move `bytes` (read + written,
  // counted the same way for every row), in `rounds` interleaved rounds, keeping each one's best
  // median (so that a clock change during one measurement cannot decide a comparison); then reads
  // each one's counters once, unless `read_counters` is false (a candidate of more kernels than
  // one counter measurement takes, counter_profiler::max_kernels_per_measurement).
  void measure(const std::string& group, const std::vector<candidate>& candidates, double bytes, int rounds = 3,
               bool read_counters = true) {
    std::vector<ct::bandwidth_result> best(candidates.size());
    for (int round = 0; round < rounds; ++round)
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto b = meter_.measure(candidates[i].launch, bytes);
        if (b.gigabytes_per_s > best[i].gigabytes_per_s) best[i] = b;
      }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto& c = candidates[i];
      auto row = ct::make_report_row(group, c.name, c.role, best[i]);
      row.target = c.target;
      row.note = c.note;
      if (read_counters && profiler_.available()) {
        const auto m = profiler_.measure([&] { c.launch(cudaStream_t{}); });
        row.load_sectors_per_request = m.load_sectors_per_request();
        row.store_sectors_per_request = m.store_sectors_per_request();
        row.dram_bytes = m.dram_bytes_read() + m.dram_bytes_write();
      }
      std::printf("  %-52s %8.1f GB/s %7.1f%% of cudaMemcpy %6.1f%% of peak\n", c.name.c_str(), row.gigabytes_per_s,
                  100.0 * row.ratio_to_memcpy, 100.0 * row.fraction_of_dram_peak);
      std::fflush(stdout);
      rows_.push_back(std::move(row));
    }
  }

  // Records a failed correctness check; main() exits non-zero if there was any.
  void mismatch(const std::string& what) {
    std::printf("MISMATCH: %s\n", what.c_str());
    ++mismatches_;
  }
  int mismatches() const { return mismatches_; }

 private:
  ct::bandwidth_meter meter_;
  ct::counter_profiler profiler_;
  std::vector<ct::report_row> rows_;
  int mismatches_ = 0;
};

// The groups, one function each (algorithms.cu, seeds.cu).
void particle_update(runner& r);
void column_in_place(runner& r);
void column_into_another(runner& r);
void mixed_columns(runner& r);
void pitched_rows(runner& r);
void array_of_structs(runner& r);
void conversion(runner& r);
void stride_sweep(runner& r);
void misaligned_base(runner& r);
void aos_vs_soa(runner& r);
void pitched_vs_dense(runner& r);
void transpose_ladder(runner& r);
void fallbacks(runner& r);    // fallbacks.cu
void temporaries(runner& r);  // temporaries.cu
void reductions(runner& r);   // reductions.cu
void stencils(runner& r);     // stencils.cu
void iterated_stencils(runner& r);  // stencils.cu
void compaction_and_reordering(runner& r);  // reorder.cu
void babelstream(runner& r);  // babelstream.cu
void particles_and_grids(runner& r);  // particles_grids.cu
void layouts(runner& r);  // layouts.cu

}  // namespace bench
