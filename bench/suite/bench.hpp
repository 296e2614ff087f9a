// coalesce's side-by-side benchmark: the runner every group uses. A row is one kernel (or one
// library call) on buffers several times the L2: its median time over 25 launches after warm-up,
// its bandwidth as a share of cudaMemcpy device-to-device measured in the same process, and - when
// hardware counters can be read - load and store sectors per request and DRAM bytes.
#pragma once

#include <coalesce/testing/testing.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

namespace ct = coalesce::testing;

// One implementation of a group's work: its name, and how to launch it on a stream.
struct candidate {
  std::string name;
  std::function<void(cudaStream_t)> launch;
};

class runner {
 public:
  runner() : meter_(ct::bandwidth_meter::default_reference_bytes(), options()) {}

  static ct::timing_options options() {
    ct::timing_options o;
    o.warmup = 3;
    o.repetitions = 25;
    return o;
  }

  const ct::bandwidth_meter& meter() const { return meter_; }
  ct::counter_profiler& profiler() { return profiler_; }
  const std::vector<ct::report_row>& rows() const { return rows_; }

  // Times `launch(stream)`, which does work that must move `bytes` (read + written, counted the
  // same way for every row of a group), then reads its counters once.
  template <class Launch>
  ct::report_row& run(const std::string& group, const std::string& name, double bytes, Launch&& launch) {
    const auto bandwidth = meter_.measure(launch, bytes);
    auto row = ct::make_report_row(group, name, bandwidth);
    if (profiler_.available()) {
      const auto m = profiler_.measure([&] { launch(cudaStream_t{}); });
      row.load_sectors_per_request = m.load_sectors_per_request();
      row.store_sectors_per_request = m.store_sectors_per_request();
      row.dram_bytes = m.dram_bytes_read() + m.dram_bytes_write();
    }
    std::printf("  %-44s %8.1f GB/s %7.1f%% of cudaMemcpy\n", name.c_str(), row.gigabytes_per_s,
                100.0 * row.ratio_to_memcpy);
    std::fflush(stdout);
    rows_.push_back(std::move(row));
    return rows_.back();
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
void one_column(runner& r);
void mixed_columns(runner& r);
void pitched_rows(runner& r);
void array_of_structs(runner& r);
void stride_sweep(runner& r);
void misaligned_base(runner& r);
void aos_vs_soa(runner& r);
void pitched_vs_dense(runner& r);
void transpose_ladder(runner& r);

}  // namespace bench
