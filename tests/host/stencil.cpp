// The boundary policies' index arithmetic (boundary.hpp), with the plain host compiler: what a
// stencil reads for positions beyond an edge, including radii wider than the axis, and which
// outputs interior writes.
#include <coalesce/boundary.hpp>

#include "coalesce_test.hpp"

#include <type_traits>

using coalesce::boundary_index;
using coalesce::interior_contains;

TEST_CASE("clamp reads the nearest edge element, however far outside") {
  CHECK(boundary_index(coalesce::clamp, -1, 5) == 0);
  CHECK(boundary_index(coalesce::clamp, -7, 5) == 0);
  CHECK(boundary_index(coalesce::clamp, 0, 5) == 0);
  CHECK(boundary_index(coalesce::clamp, 4, 5) == 4);
  CHECK(boundary_index(coalesce::clamp, 5, 5) == 4);
  CHECK(boundary_index(coalesce::clamp, 12, 5) == 4);
  CHECK(boundary_index(coalesce::clamp, 2, 1) == 0);  // one row: every read is that row
  CHECK(boundary_index(coalesce::clamp, -2, 1) == 0);
}

TEST_CASE("periodic wraps around, also for radii wider than the axis") {
  CHECK(boundary_index(coalesce::periodic, -1, 5) == 4);
  CHECK(boundary_index(coalesce::periodic, 5, 5) == 0);
  CHECK(boundary_index(coalesce::periodic, 6, 5) == 1);
  CHECK(boundary_index(coalesce::periodic, -6, 5) == 4);
  CHECK(boundary_index(coalesce::periodic, -2, 1) == 0);
  CHECK(boundary_index(coalesce::periodic, -3, 2) == 1);
  CHECK(boundary_index(coalesce::periodic, 3, 2) == 1);
  for (long long i = -20; i < 20; ++i) {
    const long long j = boundary_index(coalesce::periodic, i, 3);
    CHECK(j >= 0);
    CHECK(j < 3);
    CHECK((i - j) % 3 == 0);
  }
}

TEST_CASE("constant reads nothing outside the axis and everything inside") {
  const auto zero = coalesce::constant(0.0f);
  static_assert(std::is_same_v<decltype(zero), const coalesce::constant<float>>);
  CHECK(zero.value == 0.0f);
  CHECK(boundary_index(zero, -1, 5) == -1);
  CHECK(boundary_index(zero, 5, 5) == -1);
  CHECK(boundary_index(zero, -9, 1) == -1);
  for (long long i = 0; i < 5; ++i) CHECK(boundary_index(zero, i, 5) == i);
}

TEST_CASE("interior writes only outputs whose whole neighbourhood is inside, and reads inside the axis") {
  CHECK_FALSE(interior_contains(1, 0, 5));
  CHECK(interior_contains(1, 1, 5));
  CHECK(interior_contains(1, 3, 5));
  CHECK_FALSE(interior_contains(1, 4, 5));
  CHECK_FALSE(interior_contains(2, 1, 5));
  CHECK(interior_contains(2, 2, 5));
  CHECK_FALSE(interior_contains(2, 3, 5));
  for (long long i = 0; i < 4; ++i) CHECK_FALSE(interior_contains(2, i, 4));  // 4 < 2R + 1: none
  CHECK_FALSE(interior_contains(1, 0, 1));
  CHECK(boundary_index(coalesce::interior, -2, 3) == 0);
  CHECK(boundary_index(coalesce::interior, 4, 3) == 2);
}

TEST_CASE("the policies are compile-time values, and only they are policies") {
  static_assert(coalesce::is_boundary_policy_v<coalesce::clamp_t>);
  static_assert(coalesce::is_boundary_policy_v<coalesce::periodic_t>);
  static_assert(coalesce::is_boundary_policy_v<coalesce::interior_t>);
  static_assert(coalesce::is_boundary_policy_v<coalesce::constant<int>>);
  static_assert(!coalesce::is_boundary_policy_v<float>);
  static_assert(boundary_index(coalesce::periodic, -1, 8) == 7);
  static_assert(boundary_index(coalesce::clamp, 9, 8) == 7);
  // Only constant(v) substitutes a value beyond the edge (its boundary_index says -1 there).
  static_assert(coalesce::is_constant_policy_v<coalesce::constant<float>>);
  static_assert(!coalesce::is_constant_policy_v<coalesce::clamp_t> &&
                !coalesce::is_constant_policy_v<coalesce::periodic_t> &&
                !coalesce::is_constant_policy_v<coalesce::interior_t>);
  static_assert(boundary_index(coalesce::constant(1.5f), -1, 8) == -1);
  SUCCEED();
}
