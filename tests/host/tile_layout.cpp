// tile_layout: exact offsets of every policy, and the compile-time certificate of what a warp's
// row and column accesses, and any declared warp_access, cost, for 1-, 2-, 4-, 8- and 16-byte
// elements. Host compiler only.
#include <coalesce/detail/stage_certificate.hpp>
#include <coalesce/tile_layout.hpp>

#include "coalesce_test.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

using coalesce::padded;
using coalesce::swizzled;
using coalesce::swizzled_128b;
using coalesce::tile_layout;
using coalesce::unpadded;
using coalesce::warp_access;

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

// A bank count written from the hardware rule, not through coalesce::model: lanes go through the
// banks in phases of 128 bytes (all 32 lanes for accesses of up to 4 bytes, 16 for 8 bytes, 8 for
// 16), and in each phase a bank serves one distinct 4-byte word per pass. `position(lane, k)` is
// lane's element with the pattern moved to place k; lanes outside the tile sit idle. Returns the
// worst over places 0 .. places - 1. (No pattern here has a whole phase read one address, the one
// case the hardware serves in fewer passes than this count.)
template <class Layout, class Position>
unsigned brute_force_wavefronts(Position position, std::size_t elements, std::size_t places) {
  const std::size_t bytes = sizeof(typename Layout::value_type) * elements;
  const unsigned phase = bytes <= 4 ? 32u : unsigned(128 / bytes);
  unsigned worst = 0;
  for (std::size_t k = 0; k < places; ++k) {
    unsigned passes = 0;
    for (unsigned first = 0; first < 32; first += phase) {
      std::set<std::size_t> words;
      for (unsigned lane = first; lane < first + phase; ++lane) {
        const std::pair<std::size_t, std::size_t> rc = position(lane, k);
        if (rc.first >= Layout::rows || rc.second + elements > Layout::cols) continue;
        const std::size_t byte = Layout::offset(rc.first, rc.second) * sizeof(typename Layout::value_type);
        for (std::size_t word = byte / 4; word * 4 < byte + bytes; ++word) words.insert(word);
      }
      std::map<std::size_t, unsigned> words_in_bank;
      unsigned most = 0;
      for (std::size_t word : words) most = std::max(most, ++words_in_bank[word % 32]);
      passes += most;
    }
    worst = std::max(worst, passes);
  }
  return worst;
}

// The row and column certificate the library has always given, checked value by value.
template <class T, std::size_t Rows, std::size_t Cols, class Policy>
void check_certificate(unsigned row_wavefronts, unsigned column_wavefronts) {
  using L = tile_layout<T, Rows, Cols, Policy>;
  const warp_access row = warp_access::along_row().with_lanes(std::min<std::size_t>(Cols, 32));
  const warp_access column = warp_access::along_column().with_lanes(std::min<std::size_t>(Rows, 32));
  INFO(sizeof(T) << "-byte " << Rows << " x " << Cols);
  CHECK(L::wavefronts(row) == row_wavefronts);
  CHECK(L::wavefronts(column) == column_wavefronts);
  CHECK(L::row_access_wavefronts == row_wavefronts);
  CHECK(L::column_access_wavefronts == column_wavefronts);
  CHECK(L::conflict_free_rows == (row_wavefronts == L::ideal_wavefronts(row)));
  CHECK(L::conflict_free_columns == (column_wavefronts == L::ideal_wavefronts(column)));
  // And the same from the bank count above: rows moved down, columns moved across.
  const auto row_at = [](unsigned lane, std::size_t k) { return std::make_pair(k, std::size_t(lane)); };
  const auto column_at = [](unsigned lane, std::size_t k) { return std::make_pair(std::size_t(lane), k); };
  CHECK(brute_force_wavefronts<L>(row_at, 1, std::min<std::size_t>(Rows, 32)) == row_wavefronts);
  CHECK(brute_force_wavefronts<L>(column_at, 1, std::min<std::size_t>(Cols, 32)) == column_wavefronts);
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
  static_assert(tile_layout<std::uint8_t, 64, 64>::conflict_free_rows &&
                tile_layout<std::uint8_t, 64, 64>::conflict_free_columns);
  static_assert(tile_layout<std::uint16_t, 16, 16>::conflict_free_rows &&
                tile_layout<std::uint16_t, 16, 16>::conflict_free_columns);
  static_assert(tile_layout<float, 128, 8>::conflict_free_rows && tile_layout<float, 128, 8>::conflict_free_columns);
  static_assert(tile_layout<double, 64, 16>::conflict_free_rows && tile_layout<double, 64, 16>::conflict_free_columns);
  static_assert(tile_layout<sixteen_bytes, 16, 16>::conflict_free_rows &&
                tile_layout<sixteen_bytes, 16, 16>::conflict_free_columns);
  REQUIRE(is_one_to_one<tile_layout<std::uint8_t, 64, 64>>());
}

TEST_CASE("warp_access places lane l at first + step * l, folding onto the next line when asked") {
  constexpr warp_access odd_columns = warp_access::along_row(2).from(3, 1);
  static_assert(odd_columns.row(5) == 3 && odd_columns.col(5) == 11);
  constexpr warp_access odd_rows = warp_access::along_column(2).from(1, 7);
  static_assert(odd_rows.row(5) == 11 && odd_rows.col(5) == 7);
  // float4s of a 32-float row, 8 to a row: lane 8 starts the next row.
  constexpr warp_access vectors = warp_access::along_row(4).vectors_of(4).in_lines_of(32);
  static_assert(vectors.row(7) == 0 && vectors.col(7) == 28 && vectors.row(8) == 1 && vectors.col(8) == 0);
  // A column walk 16 rows long: lane 16 starts the next column.
  constexpr warp_access column_walk = warp_access::along_column().in_lines_of(16);
  static_assert(column_walk.row(17) == 1 && column_walk.col(17) == 1);
  REQUIRE(vectors.row(31) == 3);
  REQUIRE(vectors.col(31) == 28);
}

TEST_CASE("the row and column certificate is warp_access along a row and along a column, with the same values") {
  // The values the certificate gave before it was expressed through warp_access.
  check_certificate<std::uint8_t, 32, 32, padded>(1, 1);
  check_certificate<std::uint8_t, 32, 32, unpadded>(1, 8);
  check_certificate<std::uint8_t, 32, 32, swizzled>(1, 4);
  check_certificate<std::uint8_t, 64, 64, padded>(1, 1);
  check_certificate<std::uint8_t, 16, 64, unpadded>(1, 8);
  check_certificate<std::uint8_t, 8, 64, swizzled>(1, 1);
  check_certificate<std::uint16_t, 32, 32, padded>(1, 1);
  check_certificate<std::uint16_t, 32, 32, unpadded>(1, 16);
  check_certificate<std::uint16_t, 32, 32, swizzled>(1, 2);
  check_certificate<std::uint16_t, 64, 64, padded>(1, 1);
  check_certificate<std::uint16_t, 16, 64, unpadded>(1, 16);
  check_certificate<std::uint16_t, 8, 64, swizzled>(1, 1);
  check_certificate<float, 32, 32, padded>(1, 1);
  check_certificate<float, 32, 32, unpadded>(1, 32);
  check_certificate<float, 32, 32, swizzled>(1, 1);
  check_certificate<float, 64, 64, padded>(1, 1);
  check_certificate<float, 16, 64, unpadded>(1, 16);
  check_certificate<float, 8, 64, swizzled>(1, 1);
  check_certificate<double, 32, 32, padded>(2, 2);
  check_certificate<double, 32, 32, unpadded>(2, 32);
  check_certificate<double, 32, 32, swizzled>(2, 2);
  check_certificate<double, 64, 64, padded>(2, 2);
  check_certificate<double, 16, 64, unpadded>(2, 16);
  check_certificate<double, 8, 64, swizzled>(2, 1);
  check_certificate<sixteen_bytes, 32, 32, padded>(4, 4);
  check_certificate<sixteen_bytes, 32, 32, unpadded>(4, 32);
  check_certificate<sixteen_bytes, 32, 32, swizzled>(4, 4);
  check_certificate<sixteen_bytes, 64, 64, padded>(4, 4);
  check_certificate<sixteen_bytes, 16, 64, unpadded>(4, 16);
  check_certificate<sixteen_bytes, 8, 64, swizzled>(4, 1);
}

TEST_CASE("stride-2 lanes on a [64][65] float tile cost twice the ideal, rows and columns alike") {
  // The float transpose's pairs: lane l stores (r, 2l) and (r, 2l + 1), and loads (2l, c) and
  // (2l + 1, c). Words 2l and 2(l + 16) are 32 apart: one bank, a 2-way conflict.
  using L = tile_layout<float, 64, 64, padded>;
  static_assert(L::offset(1, 0) == 65);
  constexpr warp_access even_column_stores = warp_access::along_row(2);
  constexpr warp_access odd_column_stores = even_column_stores.from(0, 1);
  constexpr warp_access even_row_loads = warp_access::along_column(2);
  constexpr warp_access odd_row_loads = even_row_loads.from(1, 0);
  static_assert(L::ideal_wavefronts(even_column_stores) == 1 && L::ideal_wavefronts(even_row_loads) == 1);
  static_assert(L::wavefronts(even_column_stores) == 2 && L::wavefronts(odd_column_stores) == 2);
  static_assert(L::wavefronts(even_row_loads) == 2 && L::wavefronts(odd_row_loads) == 2);
  static_assert(!L::conflict_free(even_column_stores) && !L::conflict_free(odd_row_loads));
  // Unit stride on the same tile is the certificate's conflict-free row and column.
  static_assert(L::wavefronts(warp_access::along_row()) == 1 && L::wavefronts(warp_access::along_column()) == 1);
  REQUIRE(L::wavefronts(even_column_stores) == 2 * L::ideal_wavefronts(even_column_stores));
  REQUIRE(L::wavefronts(odd_row_loads) == 2 * L::ideal_wavefronts(odd_row_loads));
}

TEST_CASE("an independent bank count agrees with the certificate for strided, vector and folded accesses") {
  using F64 = tile_layout<float, 64, 64, padded>;
  for (std::size_t parity = 0; parity < 2; ++parity) {
    const auto pair_store = [parity](unsigned lane, std::size_t k) { return std::make_pair(k, 2 * lane + parity); };
    const auto pair_load = [parity](unsigned lane, std::size_t k) { return std::make_pair(2 * lane + parity, k); };
    CHECK(brute_force_wavefronts<F64>(pair_store, 1, 32) == 2);
    CHECK(brute_force_wavefronts<F64>(pair_load, 1, 32) == 2);
    CHECK(F64::wavefronts(warp_access::along_row(2).from(0, parity)) == brute_force_wavefronts<F64>(pair_store, 1, 32));
    CHECK(F64::wavefronts(warp_access::along_column(2).from(parity, 0)) ==
          brute_force_wavefronts<F64>(pair_load, 1, 32));
  }

  // Stride-3 columns of 2-byte elements, on a tile padded for unit-stride columns.
  using H = tile_layout<std::uint16_t, 96, 32, padded>;
  const auto every_third_row = [](unsigned lane, std::size_t k) { return std::make_pair(3 * std::size_t(lane), k); };
  CHECK(H::wavefronts(warp_access::along_column(3)) == brute_force_wavefronts<H>(every_third_row, 1, 32));

  // float4s along rows, 8 to a 32-float row, in the 128-byte swizzle and in the unpadded layout.
  const auto float4s = [](unsigned lane, std::size_t k) {
    return std::make_pair(k + lane / 8, 4 * std::size_t(lane % 8));
  };
  const warp_access float4_rows = warp_access::along_row(4).vectors_of(4).in_lines_of(32);
  using S = tile_layout<float, 32, 32, swizzled_128b>;
  using U = tile_layout<float, 32, 32, unpadded>;
  CHECK(S::wavefronts(float4_rows) == brute_force_wavefronts<S>(float4s, 4, 32));
  CHECK(U::wavefronts(float4_rows) == brute_force_wavefronts<U>(float4s, 4, 32));
  CHECK(S::wavefronts(float4_rows) == 4);  // 512 bytes: 4 passes, no conflict
  CHECK(S::conflict_free(float4_rows));

  // A warp walking a 16-float row folds over two rows: [16][17] puts (1, 15) in bank 0 with (0, 0).
  using N = tile_layout<float, 16, 16, padded>;
  const auto two_rows = [](unsigned lane, std::size_t k) {
    return std::make_pair(k + lane / 16, std::size_t(lane % 16));
  };
  const warp_access folded_rows = warp_access::along_row().in_lines_of(16);
  CHECK(N::wavefronts(folded_rows) == brute_force_wavefronts<N>(two_rows, 1, 16));
  CHECK(N::wavefronts(folded_rows) == 2);
  CHECK(N::row_access_wavefronts == 1);  // the row certificate prices only the 16 lanes of one row

  // Columns of doubles, unpadded: 16 lanes per phase, all in one bank pair.
  using D = tile_layout<double, 32, 32, unpadded>;
  const auto column = [](unsigned lane, std::size_t k) { return std::make_pair(std::size_t(lane), k); };
  CHECK(D::wavefronts(warp_access::along_column()) == brute_force_wavefronts<D>(column, 1, 32));
}

TEST_CASE("a vector access that is not one access in the layout is refused, with 0 wavefronts") {
  // swizzled floats XOR single elements: (r, 0) and (r, 1) are not adjacent in odd rows.
  using W = tile_layout<float, 32, 32, swizzled>;
  constexpr warp_access float2_rows = warp_access::along_row(2).vectors_of(2).with_lanes(16);
  static_assert(W::wavefronts(float2_rows) == 0 && !W::conflict_free(float2_rows));
  // float4s starting at column 2 are not 16-byte aligned; from column 0 they are, 256 bytes in 2
  // passes. In a padded [32][65] tile odd rows start 4 bytes past a 16-byte boundary: refused.
  using F = tile_layout<float, 32, 64, unpadded>;
  static_assert(F::wavefronts(warp_access::along_row(4).vectors_of(4).with_lanes(16).from(0, 2)) == 0);
  static_assert(F::wavefronts(warp_access::along_row(4).vectors_of(4).with_lanes(16)) == 2);
  static_assert(
      tile_layout<float, 32, 64, padded>::wavefronts(warp_access::along_row(4).vectors_of(4).with_lanes(16)) == 0);
  REQUIRE(W::wavefronts(warp_access::along_row(2).vectors_of(2).with_lanes(16)) == 0);
}

namespace {
struct words6 {
  float v[6];  // the 24-byte Particle's shape
};
struct words3 {
  float v[3];
};
struct words8 {
  float v[8];
};
struct doubles3 {
  double v[3];
};
struct bytes5 {
  unsigned char v[5];
};

// The stage certificate of T against the independent count: lane l reads word j of element l.
template <class T>
void check_stage(unsigned expected) {
  using cert = coalesce::detail::stage_certificate<T>;
  unsigned worst = 0;
  for (std::size_t j = 0; j < cert::words; ++j) {
    const auto word_j = [j](unsigned lane, std::size_t) {
      return std::make_pair(std::size_t(0), cert::words * lane + j);
    };
    worst = std::max(worst, brute_force_wavefronts<typename cert::stage>(word_j, 1, 1));
  }
  CHECK(cert::element_word_wavefronts == worst);
  CHECK(cert::element_word_wavefronts == expected);
}
}  // namespace

TEST_CASE("a stage's element-by-word reads cost what an independent bank count says") {
  check_stage<words6>(2);    // 6 words apart: lanes l and l + 16 share a bank
  check_stage<words3>(1);    // 3 words apart: odd, every lane its own bank
  check_stage<words8>(8);    // 8 words apart: 8 lanes to a bank
  check_stage<doubles3>(2);  // 8-byte words, 16 lanes a pass, 24 bytes apart: no conflict within a pass
  check_stage<bytes5>(2);    // bytes 5 apart: 32 lanes span 39 words, and words 32 .. 38 share banks with 0 .. 6
  CHECK(coalesce::detail::stage_certificate<words6>::ideal_element_word_wavefronts == 1);
  CHECK(coalesce::detail::stage_certificate<doubles3>::ideal_element_word_wavefronts == 2);
}
