// Under COALESCE_DEBUG, out-of-range indices are caught. COALESCE_ASSERT is predefined here to
// throw (users may predefine it too), so each check can be observed without ending the process.
#include <stdexcept>

#define COALESCE_DEBUG 1
#define COALESCE_ASSERT(cond, msg) \
  do {                             \
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
