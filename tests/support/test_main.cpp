// The main() of every coalesce test executable. Device tests (COALESCE_TEST_NEEDS_GPU) first
// check for a usable CUDA device: with none they print why and exit 77 (ctest: skipped), or fail
// when a GPU is required.
#if defined(__has_include)
#  if __has_include(<catch2/catch_session.hpp>)
#    include <catch2/catch_session.hpp>
#  else
#    define CATCH_CONFIG_RUNNER
#  endif
#endif
#include "coalesce_test.hpp"

#if COALESCE_TEST_NEEDS_GPU
#  include <coalesce/testing/device.hpp>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {
std::vector<std::string>& skip_reasons() {
  static std::vector<std::string> reasons;
  return reasons;
}
int unmeasured_cases = 0;
constexpr int skip_exit_code = 77;
}  // namespace

namespace coalesce_test {

void record_skip(const std::string& reason) { skip_reasons().push_back(reason); }
void record_unmeasured() { ++unmeasured_cases; }

bool skips_are_failures() {
#if defined(COALESCE_REQUIRE_GPU) && COALESCE_REQUIRE_GPU
  return true;
#else
  const char* env = std::getenv("COALESCE_REQUIRE_GPU");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
#endif
}

}  // namespace coalesce_test

int main(int argc, char* argv[]) {
#if COALESCE_TEST_NEEDS_GPU
  if (auto reason = coalesce::testing::gpu_unavailable_reason()) {
    if (coalesce_test::skips_are_failures()) {
      std::fprintf(stderr, "FAILED: a GPU is required (COALESCE_REQUIRE_GPU) but none is usable: %s\n",
                   reason->c_str());
      return 1;
    }
    std::printf("SKIPPED: device test needs a usable CUDA device: %s\n", reason->c_str());
    return skip_exit_code;
  }
#endif
  const int result = Catch::Session().run(argc, argv);
  if (unmeasured_cases > 0)
    std::printf("NOT MEASURED: %d test case(s) ran their kernels on small problems and stopped before timings and "
                "counters (%s)\n",
                unmeasured_cases,
                std::getenv("COALESCE_SANITIZER") != nullptr
                    ? "compute-sanitizer"
                    : "COALESCE_TEST_FULL=1, as the full preset sets, measures them");
  if (result == 0 && !skip_reasons().empty()) {
    // One line, which the summary after ctest's (cmake/CoalesceSkipReasons.cmake) quotes: each
    // reason once, in order, with how many cases gave it.
    std::vector<std::pair<std::string, int>> distinct;
    for (const auto& r : skip_reasons()) {
      auto same = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == r; });
      if (same == distinct.end()) distinct.emplace_back(r, 1);
      else ++same->second;
    }
    std::printf("SKIPPED: %zu test case(s) could not run here:", skip_reasons().size());
    const char* separator = " ";
    for (const auto& [reason, cases] : distinct) {
      std::printf("%s%s", separator, reason.c_str());
      if (cases > 1) std::printf(" (%d cases)", cases);
      separator = "; ";
    }
    std::printf("\n");
    return skip_exit_code;
  }
  return result;
}
