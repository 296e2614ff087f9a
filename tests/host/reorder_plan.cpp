// The host-side arithmetic of compaction and reordering (detail/reorder_plan.hpp): tiles, grid
// limits, the index width of a permutation and the key bits of a sort. erase_if, copy_if,
// sort_by_key, gather and scatter themselves launch kernels and run CUB on the device, and a
// host_space soa_vector is refused by them at compile time (its elements are sorted and removed
// with the standard algorithms on its iterators), so their results are checked on a GPU, against
// host references, in tests/device/reorder.cu.
#include <coalesce/detail/reorder_plan.hpp>

#include "coalesce_test.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace d = coalesce::detail;

TEST_CASE("a compaction tile is 8 rounds of a 256-thread block, and the last tile may be partial") {
  STATIC_REQUIRE(d::compact_tile == 2048);
  STATIC_REQUIRE(d::compact_tiles(0) == 0);
  STATIC_REQUIRE(d::compact_tiles(1) == 1);
  STATIC_REQUIRE(d::compact_tiles(2048) == 1);
  STATIC_REQUIRE(d::compact_tiles(2049) == 2);
  STATIC_REQUIRE(d::compact_tiles(std::size_t(1) << 25) == 16384);
}

TEST_CASE("blocks_for counts partial blocks and refuses more blocks than one grid launches") {
  CHECK(d::blocks_for(0, 256, "test") == 0u);
  CHECK(d::blocks_for(1000003, 256, "test") == 3907u);
  CHECK(d::blocks_for(std::size_t(0x7fffffff) * 256, 256, "test") == 0x7fffffffu);
  try {
    (void)d::blocks_for(std::size_t(0x7fffffff) * 256 + 1, 256, "coalesce::gather");
    FAIL("a grid of 2^31 blocks was accepted");
  } catch (const std::length_error& e) {
    CHECK(std::string(e.what()).find("coalesce::gather") == 0);
  }
}

TEST_CASE("a permutation's indices are 32-bit while its count fits 32 bits, 64-bit from 2^32 elements on") {
  // The sort is handed its count in the index type: 2^32 elements need a 64-bit count, although
  // every index below 2^32 would fit (size_plans.cpp checks every boundary).
  STATIC_REQUIRE(d::permutation_fits_32_bits(0));
  STATIC_REQUIRE(d::permutation_fits_32_bits(std::numeric_limits<std::uint32_t>::max()));
  STATIC_REQUIRE(!d::permutation_fits_32_bits(std::size_t(std::numeric_limits<std::uint32_t>::max()) + 1));
}

TEST_CASE("sort keys are unsigned 32- or 64-bit integers, sorted on all their bits unless end_bit says fewer") {
  STATIC_REQUIRE(d::is_sort_key_v<std::uint32_t>);
  STATIC_REQUIRE(d::is_sort_key_v<std::uint64_t>);
  STATIC_REQUIRE(d::is_sort_key_v<unsigned long long>);
  STATIC_REQUIRE(!d::is_sort_key_v<std::int32_t>);
  STATIC_REQUIRE(!d::is_sort_key_v<std::uint16_t>);
  STATIC_REQUIRE(!d::is_sort_key_v<float>);
  STATIC_REQUIRE(!d::is_sort_key_v<bool>);

  CHECK(d::sort_end_bit<std::uint32_t>(-1, "test") == 32);
  CHECK(d::sort_end_bit<std::uint64_t>(-1, "test") == 64);
  CHECK(d::sort_end_bit<std::uint32_t>(20, "test") == 20);
  CHECK(d::sort_end_bit<std::uint64_t>(64, "test") == 64);
  CHECK_THROWS_AS(d::sort_end_bit<std::uint32_t>(0, "test"), std::invalid_argument);
  CHECK_THROWS_AS(d::sort_end_bit<std::uint32_t>(33, "test"), std::invalid_argument);
  try {
    (void)d::sort_end_bit<std::uint32_t>(40, "coalesce::sort_by_key");
    FAIL("end_bit 40 of a 32-bit key was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "coalesce::sort_by_key: end_bit 40 is outside [1, 32], the bits of the key type");
  }
}
