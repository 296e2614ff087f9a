// aligned_ptr: the alignment promise in the type, vector loads and stores, the checked
// constructor, and the mdspan accessor that carries the same promise. Host compiler only.
#include <coalesce/aligned.hpp>

#include "coalesce_test.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>

using coalesce::aligned_ptr;
using coalesce::vec;

namespace {
alignas(64) float storage[64];
}  // namespace

TEST_CASE("an aligned_ptr converts to weaker promises and to const, never to stronger ones") {
  static_assert(std::is_convertible_v<aligned_ptr<float, 32>, aligned_ptr<float, 16>>);
  static_assert(std::is_convertible_v<aligned_ptr<float, 16>, aligned_ptr<const float, 16>>);
  static_assert(!std::is_convertible_v<aligned_ptr<float, 16>, aligned_ptr<float, 32>>);
  static_assert(!std::is_convertible_v<aligned_ptr<const float, 16>, aligned_ptr<float, 16>>);
  static_assert(!std::is_convertible_v<float*, aligned_ptr<float, 16>>);  // the promise is explicit
  static_assert(std::is_trivially_copyable_v<aligned_ptr<float, 16>>);
  static_assert(aligned_ptr<double>::alignment == alignof(double));
  const aligned_ptr<float, 64> p(storage);
  const aligned_ptr<const float, 16> q = p;
  REQUIRE(q.get() == storage);
  REQUIRE(bool(p));
  REQUIRE_FALSE(bool(aligned_ptr<float, 16>()));
}

TEST_CASE("load<N> and store<N> move N consecutive elements") {
  for (int i = 0; i < 64; ++i) storage[i] = float(i);
  const aligned_ptr<float, 16> p(storage);
  const vec<float, 4> v = p.load<4>(8);
  REQUIRE(v[0] == 8.0f);
  REQUIRE(v[3] == 11.0f);
  p.store<4>(12, vec<float, 4>{{-1.0f, -2.0f, -3.0f, -4.0f}});
  REQUIRE(storage[12] == -1.0f);
  REQUIRE(storage[15] == -4.0f);
  REQUIRE(p.load_read_only<2>(14)[1] == -4.0f);
  REQUIRE(p[5] == 5.0f);
  static_assert(sizeof(vec<float, 4>) == 16 && alignof(vec<float, 4>) == 16);
  static_assert(alignof(vec<std::uint16_t, 2>) == 4);
}

TEST_CASE("make_aligned checks the promise and says what is wrong") {
  REQUIRE(coalesce::make_aligned<64>(storage).get() == storage);
  try {
    (void)coalesce::make_aligned<16>(storage + 1);
    FAIL("a misaligned pointer was accepted");
  } catch (const std::invalid_argument& e) {
    REQUIRE(std::string(e.what()) == "coalesce::make_aligned<16>: the pointer is not aligned to 16 bytes");
  }
}

TEST_CASE("to_mdspan carries the alignment into cuda::std::aligned_accessor") {
  for (int i = 0; i < 64; ++i) storage[i] = float(i);
  const auto m = coalesce::to_mdspan(aligned_ptr<float, 64>(storage), 8, 8);
  static_assert(std::is_same_v<decltype(m)::accessor_type, cuda::std::aligned_accessor<float, 64>>);
  static_assert(std::is_same_v<aligned_ptr<float, 64>::accessor_type, cuda::std::aligned_accessor<float, 64>>);
  REQUIRE(m.extent(0) == 8);
  REQUIRE(m(2, 3) == 19.0f);
  REQUIRE(&m(7, 7) == storage + 63);
}
