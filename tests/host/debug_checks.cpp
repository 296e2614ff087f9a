// Under COALESCE_DEBUG, out-of-range indices are caught. COALESCE_ASSERT is predefined here to
// throw (users may predefine it too), so each check can be observed without ending the process.
#include <stdexcept>

#define COALESCE_DEBUG 1
#define COALESCE_ASSERT(cond, msg)            \
  do {                                        \
    if (!(cond)) throw std::logic_error(msg); \
  } while (0)

#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>

#include "coalesce_test.hpp"

using coalesce::host_space;
using coalesce::pitched_matrix;

TEST_CASE("COALESCE_DEBUG catches an out-of-range pitched element, row or block") {
  pitched_matrix<float, host_space> m(3, 5);
  REQUIRE_NOTHROW(m(2, 4));
  REQUIRE_THROWS_AS(m(3, 0), std::logic_error);
  REQUIRE_THROWS_AS(m(0, 5), std::logic_error);
  REQUIRE_THROWS_AS(m.view().row(3), std::logic_error);
  REQUIRE_THROWS_AS(m.view().block(1, 1, 3, 1), std::logic_error);
  REQUIRE_NOTHROW(m.view().block(1, 1, 2, 4));
}

TEST_CASE("COALESCE_DEBUG refuses a view whose rows would overlap") {
  float storage[16] = {};
  REQUIRE_THROWS_AS(coalesce::pitched_view<float>(storage, 2, 8, 16), std::logic_error);
  REQUIRE_NOTHROW(coalesce::pitched_view<float>(storage, 2, 4, 16));
}

namespace {
struct sample {
  int a;
  float b;
};
}  // namespace

TEST_CASE("COALESCE_DEBUG catches an out-of-range soa element") {
  coalesce::soa_vector<sample, host_space> v(4);
  REQUIRE_NOTHROW(v[3]);
  REQUIRE_THROWS_AS(v[4], std::logic_error);
  REQUIRE_THROWS_AS(v.view()[100], std::logic_error);
}

namespace {
struct with_array {
  float p[3];
};
}  // namespace

TEST_CASE(
    "COALESCE_DEBUG catches an array field index out of range, and a hand-built view whose array columns are not equally far apart") {
  coalesce::soa_vector<with_array, host_space> v(4);
  const auto view = v.view();
  REQUIRE_NOTHROW(coalesce::get<0>(view[1])[2] = 1.0f);
  REQUIRE_THROWS_AS(coalesce::get<0>(view[1])[3], std::logic_error);
  float columns[3][4] = {};
  const coalesce::soa_view<with_array, host_space> even({{columns[0], columns[1], columns[2]}}, 4);
  REQUIRE_NOTHROW(coalesce::get<0>(even[3])[2] = 2.0f);
  REQUIRE(columns[2][3] == 2.0f);
  const coalesce::soa_view<with_array, host_space> uneven({{columns[0], columns[2], columns[1]}}, 4);
  REQUIRE_THROWS_AS(uneven[0], std::logic_error);
}
