// The size arithmetic coalesce does on the host before it launches anything, at the 32-bit
// boundaries where a narrowing would show: 2^31 - 1, 2^31, 2^32 - 1, 2^32 and 2^32 + 1
// elements. Which index type a permutation takes and the count CUB is handed
// (detail/reorder_plan.hpp), the blocks of a gather, a sort's key pass and a compaction, and the
// grids of the kernels that stride (detail/launch.hpp). Every expected value is worked out from the
// definition (a ceiling division, CUDA's grid limits), not read from the code. The same sizes run
// on a GPU in tests/device/big.cu.
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/reorder_plan.hpp>

#include "coalesce_test.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace d = coalesce::detail;

namespace {

constexpr std::size_t two_to_31 = std::size_t(1) << 31;
constexpr std::size_t two_to_32 = std::size_t(1) << 32;
constexpr std::size_t boundaries[] = {two_to_31 - 1, two_to_31, two_to_32 - 1, two_to_32, two_to_32 + 1};

}  // namespace

TEST_CASE("a permutation takes 32-bit indices up to 2^32 - 1 elements and 64-bit ones from exactly 2^32 on") {
  STATIC_REQUIRE(d::permutation_fits_32_bits(two_to_31 - 1));
  STATIC_REQUIRE(d::permutation_fits_32_bits(two_to_31));
  STATIC_REQUIRE(d::permutation_fits_32_bits(two_to_31 + 1));
  STATIC_REQUIRE(d::permutation_fits_32_bits(two_to_32 - 1));
  STATIC_REQUIRE(!d::permutation_fits_32_bits(two_to_32));  // every index would fit; the count would be 0
  STATIC_REQUIRE(!d::permutation_fits_32_bits(two_to_32 + 1));
  STATIC_REQUIRE(!d::permutation_fits_32_bits(std::numeric_limits<std::size_t>::max()));
}

TEST_CASE("the count sort_by_key hands CUB is the element count at every boundary, never its low 32 bits") {
  for (const std::size_t n : boundaries) {
    INFO(n << " elements");
    // What sort_by_key does: the index type by permutation_fits_32_bits, the count in that type.
    if (d::permutation_fits_32_bits(n)) {
      const std::uint32_t count = d::count_as<std::uint32_t>(n, "test");
      CHECK(std::size_t(count) == n);
      CHECK(n - 1 <= std::size_t(0xffffffffu));  // and the last index, n - 1, is a 32-bit index
    } else {
      CHECK(std::size_t(d::count_as<std::uint64_t>(n, "test")) == n);
    }
  }
}

TEST_CASE("count_as refuses a count that does not fit its type, naming the operation") {
  CHECK(d::count_as<std::uint32_t>(two_to_32 - 1, "test") == 4294967295u);
  CHECK(d::count_as<std::uint64_t>(two_to_32, "test") == 4294967296ull);
  CHECK(d::count_as<std::uint64_t>(two_to_32 + 1, "test") == 4294967297ull);
  CHECK_THROWS_AS(d::count_as<std::uint32_t>(two_to_32 + 1, "test"), std::length_error);
  try {
    (void)d::count_as<std::uint32_t>(two_to_32, "coalesce::sort_by_key");
    FAIL("a count of 2^32 was cut to 32 bits");
  } catch (const std::length_error& e) {
    CHECK(std::string(e.what()) == "coalesce::sort_by_key: 4294967296 elements do not fit a 32-bit count");
  }
}

TEST_CASE("blocks_for is the ceiling of n over the block's elements across the 32-bit boundaries") {
  // 256 elements a block: a sort's key pass and a scatter (one element per thread).
  CHECK(d::blocks_for(two_to_31 - 1, 256, "test") == 8388608u);  // 2^23 - 1 whole blocks and a partial one
  CHECK(d::blocks_for(two_to_31, 256, "test") == 8388608u);      // 2^23 whole blocks
  CHECK(d::blocks_for(two_to_32 - 1, 256, "test") == 16777216u);
  CHECK(d::blocks_for(two_to_32, 256, "test") == 16777216u);
  CHECK(d::blocks_for(two_to_32 + 1, 256, "test") == 16777217u);
  // 1024 elements a block: a gather (4 elements a thread of 256).
  CHECK(d::blocks_for(two_to_31 - 1, 1024, "test") == 2097152u);
  CHECK(d::blocks_for(two_to_31, 1024, "test") == 2097152u);
  CHECK(d::blocks_for(two_to_32 - 1, 1024, "test") == 4194304u);
  CHECK(d::blocks_for(two_to_32, 1024, "test") == 4194304u);
  CHECK(d::blocks_for(two_to_32 + 1, 1024, "test") == 4194305u);
  // A compaction's tiles of 2048.
  CHECK(d::blocks_for(two_to_31 - 1, 2048, "test") == 1048576u);
  CHECK(d::blocks_for(two_to_32, 2048, "test") == 2097152u);
  CHECK(d::blocks_for(two_to_32 + 1, 2048, "test") == 2097153u);
}

TEST_CASE("a compaction's tiles over 2^31 - 1 to 2^32 + 1 elements are 2^20 to 2^21 + 1 blocks of 2048") {
  STATIC_REQUIRE(d::compact_tiles(two_to_31 - 1) == 1048576);
  STATIC_REQUIRE(d::compact_tiles(two_to_31) == 1048576);
  STATIC_REQUIRE(d::compact_tiles(two_to_31 + 1) == 1048577);
  STATIC_REQUIRE(d::compact_tiles(two_to_32 - 1) == 2097152);
  STATIC_REQUIRE(d::compact_tiles(two_to_32) == 2097152);
  STATIC_REQUIRE(d::compact_tiles(two_to_32 + 1) == 2097153);
}

TEST_CASE("blocks_for refuses 2^31 blocks or more (CUDA's grid x limit is 2^31 - 1) instead of wrapping them") {
  STATIC_REQUIRE(d::max_grid_blocks == 2147483647);
  CHECK(d::blocks_for(two_to_31 - 1, 1, "test") == 2147483647u);
  CHECK_THROWS_AS(d::blocks_for(two_to_31, 1, "test"), std::length_error);
  CHECK_THROWS_AS(d::blocks_for(two_to_32 - 1, 1, "test"), std::length_error);
  CHECK_THROWS_AS(d::blocks_for(two_to_32, 1, "test"), std::length_error);  // unsigned(2^32) would be an empty grid
  CHECK_THROWS_AS(d::blocks_for(two_to_32 + 1, 1, "test"), std::length_error);  // and unsigned(2^32 + 1) one block
}

TEST_CASE("a striding kernel's grid is what it wants up to 2^31 - 1 blocks and 2^31 - 1 beyond, never 0") {
  CHECK(d::grid_for_all(0) == 1u);
  CHECK(d::grid_for_all(1) == 1u);
  CHECK(d::grid_for_all(two_to_31 - 1) == 2147483647u);
  CHECK(d::grid_for_all(two_to_31) == 2147483647u);
  CHECK(d::grid_for_all(two_to_32 - 1) == 2147483647u);
  CHECK(d::grid_for_all(two_to_32) == 2147483647u);
  CHECK(d::grid_for_all(two_to_32 + 1) == 2147483647u);
}

TEST_CASE("a 2D striding grid has 1 to 65535 blocks a side whatever the tiles, 2^32 of them included") {
  const auto check = [](std::size_t x, std::size_t y, unsigned gx, unsigned gy) {
    const dim3 g = d::strided_grid_2d(x, y);
    INFO(x << " x " << y << " tiles");
    CHECK(g.x == gx);
    CHECK(g.y == gy);
    CHECK(g.z == 1u);
  };
  check(0, 0, 1, 1);
  check(65535, 65535, 65535, 65535);
  check(65536, 1, 65535, 1);
  check(two_to_31 - 1, two_to_31, 65535, 65535);
  check(two_to_32, two_to_32 + 1, 65535, 65535);  // a truncating cast would give 0 x 1
}
