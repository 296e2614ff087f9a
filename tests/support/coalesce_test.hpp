// coalesce's tests: one include that hides the difference between Catch2 2.13 (Debian 12, what CI
// installs) and Catch2 3.x (Ubuntu 24.04), plus the skip rule for device tests.
//
// COALESCE_SKIP(reason) ends the current test case and records why. A test executable in which
// anything was skipped exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE 77): a
// test that could not look at the hardware is never reported as passed.
#pragma once

#if defined(__has_include)
#  if __has_include(<catch2/catch_test_macros.hpp>)
#    define COALESCE_CATCH2_MAJOR 3
#  endif
#endif
#ifndef COALESCE_CATCH2_MAJOR
#  define COALESCE_CATCH2_MAJOR 2
#endif

#if COALESCE_CATCH2_MAJOR == 3
#  include <catch2/catch_approx.hpp>
#  include <catch2/catch_template_test_macros.hpp>
#  include <catch2/catch_test_macros.hpp>
#  include <catch2/generators/catch_generators.hpp>
#  include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
// Under nvcc, Catch2 3 wraps every assertion in `nv_diagnostic push`, `nv_diag_suppress 177` and
// `nv_diagnostic pop` pragmas. CUDA 13.0's front end (cudafe++) is pathologically slow on them:
// tests/device/container_properties.cu took it over 6.5 CPU-minutes, and 25 s without them, and
// two unreferenced functions holding one assertion each in an anonymous namespace were enough to
// make it run for minutes. Our tests need no suppression (they compile warning-free under
// -Werror=all-warnings with Catch2 2.13, which has none), so the pragmas are turned off; the
// macros are expanded where an assertion is written, so redefining them after the include holds.
#  if defined(__CUDACC__) && !defined(__clang__)
#    undef CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#    undef CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#    undef CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#    define CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#    define CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#    define CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#  endif
#else
#  include <catch2/catch.hpp>
#endif

#include <string>

namespace coalesce_test {

// Records that the running test case was skipped, and why (defined in test_main.cpp).
void record_skip(const std::string& reason);
// Records that the running test case ran its kernels but stopped before its measurements (under
// compute-sanitizer); the count is printed at exit (defined in test_main.cpp).
void record_unmeasured();
// True when COALESCE_REQUIRE_GPU (CMake option or environment) turns skips into failures.
bool skips_are_failures();

}  // namespace coalesce_test

#define COALESCE_SKIP(reason)                                                                               \
  do {                                                                                                      \
    const std::string coalesce_skip_reason_ = (reason);                                                     \
    if (::coalesce_test::skips_are_failures()) FAIL("required but unavailable: " << coalesce_skip_reason_); \
    ::coalesce_test::record_skip(coalesce_skip_reason_);                                                    \
    WARN("skipped: " << coalesce_skip_reason_);                                                             \
    return;                                                                                                 \
  } while (0)
