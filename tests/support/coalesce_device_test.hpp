// What coalesce's device tests share: one hardware-counter profiler per test executable, and the
// rule that counter assertions are skipped (never passed) when counters cannot be read.
#pragma once

#include <coalesce/testing/testing.hpp>

#include "coalesce_test.hpp"

#include <string>

namespace coalesce_test {

// The executable's profiler with the default metrics, made on first use (CUPTI's set-up is not
// cheap, and one profiler per process is what CUPTI supports).
inline coalesce::testing::counter_profiler& profiler() {
  static coalesce::testing::counter_profiler instance;
  return instance;
}

}  // namespace coalesce_test

// Ends the test case as skipped when `profiler` cannot read counters: under compute-sanitizer
// (COALESCE_SANITIZER), or without profiling permission. With COALESCE_REQUIRE_GPU, a failure.
#define COALESCE_REQUIRE_COUNTERS(profiler)                                                              \
  do {                                                                                                   \
    if (::coalesce::testing::under_sanitizer())                                                          \
      COALESCE_SKIP("hardware counters are not read under compute-sanitizer");                          \
    if (!(profiler).available()) COALESCE_SKIP("hardware counters unavailable: " + *(profiler).unavailable_reason()); \
  } while (0)
