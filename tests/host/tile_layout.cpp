// tile_layout: exact offsets of every policy, and the compile-time certificate of what a warp's
// row and column accesses cost, for 1-, 2-, 4-, 8- and 16-byte elements. Host compiler only.
#include <coalesce/tile_layout.hpp>

#include "coalesce_test.hpp"

#include <cstdint>
#include <set>

using coalesce::padded;
using coalesce::swizzled;
using coalesce::swizzled_128b;
using coalesce::tile_layout;
using coalesce::unpadded;

namespace {

struct alignas(16) sixteen_bytes {
  float v[4];
};

// Every (r, c) has its own slot inside [0, size).
template <class Layout>
bool is_one_to_one() {
  std::set<std::size_t> seen;
  for (std::size_t r = 0; r < Layout::rows; ++r)
    for (std::size_t c = 0; c < Layout::cols; ++c) {
      const std::size_t o = Layout::offset(r, c);
      if (o >= Layout::size || !seen.insert(o).second) return false;
    }
  return true;
}

}  // namespace

TEST_CASE("unpadded is plain row-major and its 32 x 32 float columns conflict 32 ways") {
  using L = tile_layout<float, 32, 32, unpadded>;
  static_assert(L::size == 1024);
  static_assert(L::offset(3, 5) == 3 * 32 + 5);
  static_assert(L::row_access_wavefronts == 1);
  static_assert(L::column_access_wavefronts == 32);
  static_assert(L::conflict_free_rows && !L::conflict_free_columns);
  REQUIRE(is_one_to_one<L>());
}

TEST_CASE("padded 32 x 32 tiles are [32][33] for 4-, 8- and 16-byte elements and conflict-free") {
  using F = tile_layout<float, 32, 32, padded>;
  using D = tile_layout<double, 32, 32, padded>;
  using V = tile_layout<sixteen_bytes, 32, 32, padded>;
  static_assert(F::size == 32 * 33 && F::offset(1, 0) == 33 && F::offset(2, 7) == 73);
  static_assert(D::size == 32 * 33 && D::offset(1, 0) == 33);
  static_assert(V::size == 32 * 33 && V::offset(1, 0) == 33);
  static_assert(F::row_access_wavefronts == 1 && F::column_access_wavefronts == 1);
  static_assert(D::row_access_wavefronts == 2 && D::column_access_wavefronts == 2);  // 256 bytes: 2 passes
  static_assert(V::row_access_wavefronts == 4 && V::column_access_wavefronts == 4);  // 512 bytes: 4 passes
  static_assert(F::conflict_free_rows && F::conflict_free_columns);
  static_assert(D::conflict_free_rows && D::conflict_free_columns);
  static_assert(V::conflict_free_rows && V::conflict_free_columns);
  REQUIRE(is_one_to_one<F>());
  REQUIRE(is_one_to_one<D>());
}

TEST_CASE("padded 1- and 2-byte tiles pad a row by one 4-byte word") {
  using H = tile_layout<std::uint16_t, 32, 32, padded>;
  using B = tile_layout<std::uint8_t, 32, 32, padded>;
  static_assert(H::offset(1, 0) == 34);  // 64 + 4 bytes
  static_assert(B::offset(1, 0) == 36);  // 32 + 4 bytes
  static_assert(H::conflict_free_rows && H::conflict_free_columns);
  static_assert(B::conflict_free_rows && B::conflict_free_columns);
  // Without the pad, 32 rows of a 2-byte column fall into 16 banks... and 1-byte ones into 8.
  static_assert(tile_layout<std::uint16_t, 32, 32, unpadded>::column_access_wavefronts == 16);
  static_assert(tile_layout<std::uint8_t, 32, 32, unpadded>::column_access_wavefronts == 8);
  REQUIRE(is_one_to_one<H>());
  REQUIRE(is_one_to_one<B>());
}

TEST_CASE("padded adds nothing when the row is already an odd number of words, and works for any shape") {
  static_assert(tile_layout<float, 32, 31, padded>::size == 32 * 31);
  static_assert(tile_layout<float, 64, 64, padded>::offset(1, 0) == 65);
  static_assert(tile_layout<float, 16, 48, padded>::offset(1, 0) == 49);
  static_assert(tile_layout<double, 8, 5, padded>::offset(1, 0) == 5);
  static_assert(tile_layout<float, 64, 64, padded>::conflict_free_columns);
  static_assert(tile_layout<float, 16, 48, padded>::conflict_free_columns);
  static_assert(tile_layout<double, 8, 5, padded>::conflict_free_columns);
  static_assert(tile_layout<float, 7, 3, padded>::conflict_free_rows);
  REQUIRE(is_one_to_one<tile_layout<float, 16, 48, padded>>());
}

TEST_CASE("swizzled XORs the column with the row, costs no memory and is conflict-free") {
  using F = tile_layout<float, 32, 32, swizzled>;
  static_assert(F::size == 1024);
  static_assert(F::offset(0, 5) == 5);
  static_assert(F::offset(3, 5) == 3 * 32 + (0x5 ^ 0x3));
  static_assert(F::offset(31, 31) == 31 * 32);
  static_assert(F::conflict_free_rows && F::conflict_free_columns);
  using D = tile_layout<double, 32, 32, swizzled>;
  static_assert(D::offset(2, 1) == 2 * 32 + 3);
  static_assert(D::conflict_free_rows && D::conflict_free_columns);
  // 2-byte elements: the XOR moves whole 4-byte words, keeping the pair inside a word together.
  using H = tile_layout<std::uint16_t, 32, 64, swizzled>;
  static_assert(H::offset(1, 0) == 64 + 2 && H::offset(1, 1) == 64 + 3 && H::offset(1, 2) == 64 + 0);
  static_assert(H::conflict_free_rows && H::conflict_free_columns);
  // A 16-float row has only 16 words to spread 32 rows over: the certificate shows the conflict.
  static_assert(tile_layout<float, 32, 16, swizzled>::column_access_wavefronts == 2);
  REQUIRE(is_one_to_one<F>());
  REQUIRE(is_one_to_one<D>());
  REQUIRE(is_one_to_one<H>());
}

TEST_CASE("swizzled_128b permutes 16-byte chunks within 128 bytes and suits 16-byte access") {
  using V = tile_layout<sixteen_bytes, 8, 8, swizzled_128b>;  // one 128-byte line per row
  static_assert(V::offset(0, 3) == 3);
  static_assert(V::offset(5, 3) == 5 * 8 + (0x3 ^ 0x5));
  static_assert(V::conflict_free_rows && V::conflict_free_columns);
  using V32 = tile_layout<sixteen_bytes, 32, 16, swizzled_128b>;
  static_assert(V32::offset(9, 10) == 9 * 16 + 8 + (0x2 ^ 0x1));
  static_assert(V32::conflict_free_rows && V32::conflict_free_columns);
  // Scalar floats in the same layout: four columns share a chunk, so a column read is 4-way.
  using F = tile_layout<float, 32, 32, swizzled_128b>;
  static_assert(F::offset(1, 0) == 32 + 4 && F::offset(1, 5) == 32 + 1);
  static_assert(F::conflict_free_rows);
  static_assert(F::column_access_wavefronts == 4);
  REQUIRE(is_one_to_one<V32>());
  REQUIRE(is_one_to_one<F>());
}

TEST_CASE("the default policy is conflict-free for rows and columns at every width and common shape") {
  static_assert(tile_layout<std::uint8_t, 64, 64>::conflict_free_rows && tile_layout<std::uint8_t, 64, 64>::conflict_free_columns);
  static_assert(tile_layout<std::uint16_t, 16, 16>::conflict_free_rows && tile_layout<std::uint16_t, 16, 16>::conflict_free_columns);
  static_assert(tile_layout<float, 128, 8>::conflict_free_rows && tile_layout<float, 128, 8>::conflict_free_columns);
  static_assert(tile_layout<double, 64, 16>::conflict_free_rows && tile_layout<double, 64, 16>::conflict_free_columns);
  static_assert(tile_layout<sixteen_bytes, 16, 16>::conflict_free_rows &&
                tile_layout<sixteen_bytes, 16, 16>::conflict_free_columns);
  REQUIRE(is_one_to_one<tile_layout<std::uint8_t, 64, 64>>());
}
