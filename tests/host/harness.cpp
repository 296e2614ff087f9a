// The parts of the GPU test harness that need no GPU: statistics, ratios, error text.
#include <coalesce/error.hpp>
#include <coalesce/testing/bandwidth.hpp>
#include <coalesce/testing/counters.hpp>

#include "coalesce_test.hpp"

#include <string>
#include <vector>

using namespace coalesce::testing;

TEST_CASE("median picks the middle sample, or the mean of the middle two") {
  REQUIRE(median({5.0, 1.0, 3.0}) == 3.0);
  REQUIRE(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  REQUIRE(median({7.0}) == 7.0);
  REQUIRE(median({}) == 0.0);
  REQUIRE(median({1.0, 100.0, 2.0, 3.0, 1000.0}) == 3.0);  // outliers do not move it
}

TEST_CASE("counters derive per-request and per-instruction ratios from the named metrics") {
  counters c(default_metrics(), {2097152, 524288, 1048576, 262144, 330, 0, 320, 0, 8.0e6, 4.0e6}, 1);
  REQUIRE(c.load_sectors_per_request() == Approx(4.0));
  REQUIRE(c.store_sectors_per_request() == Approx(4.0));
  REQUIRE(c.shared_load_wavefronts_per_instruction() == Approx(330.0 / 320.0));
  REQUIRE(c.shared_store_wavefronts_per_instruction() == 0.0);  // no instructions: 0, not NaN
  REQUIRE(c.dram_bytes_read() == 8.0e6);
  REQUIRE(c[metric::dram_bytes_write] == 4.0e6);
  REQUIRE_THROWS_AS(c["sm__cycles_active.sum"], std::out_of_range);
}

TEST_CASE("cuda_error carries the CUDA error's name and text and what failed") {
  const coalesce::cuda_error e(cudaErrorMemoryAllocation, "cudaMalloc of 1 TiB");
  const std::string what = e.what();
  REQUIRE(e.code() == cudaErrorMemoryAllocation);
  REQUIRE(what.find("cudaMalloc of 1 TiB") != std::string::npos);
  REQUIRE(what.find("cudaErrorMemoryAllocation") != std::string::npos);
  REQUIRE(what.find("out of memory") != std::string::npos);
  REQUIRE_NOTHROW(coalesce::throw_on_error(cudaSuccess, "nothing"));
  REQUIRE_THROWS_AS(coalesce::throw_on_error(cudaErrorInvalidValue, "x"), coalesce::cuda_error);
}

TEST_CASE("random inputs are fresh and never all zero") {
  const auto a = random_values<float>(1000, 1);
  const auto b = random_values<float>(1000, 2);
  REQUIRE(a != b);
  REQUIRE(random_values<float>(1000, 1) == a);  // a pinned seed replays
  int zeros = 0;
  for (float v : a) zeros += (v == 0.0f);
  REQUIRE(zeros < 5);
}
