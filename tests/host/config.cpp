// config.hpp and version.hpp seen from a plain host compiler.
#include <coalesce/config.hpp>

#include "coalesce_test.hpp"

#include <string>

#define COALESCE_TEST_STR2(x) #x
#define COALESCE_TEST_STR(x) COALESCE_TEST_STR2(x)

TEST_CASE("a host compiler sees no CUDA annotations and no device pass") {
  REQUIRE(COALESCE_CUDA_COMPILER == 0);
  REQUIRE(COALESCE_DEVICE_PASS == 0);
  REQUIRE(std::string(COALESCE_TEST_STR(COALESCE_HOST_DEVICE)).empty());
  REQUIRE(std::string(COALESCE_TEST_STR(COALESCE_DEVICE)).empty());
}

TEST_CASE("the version macros compose COALESCE_VERSION") {
  REQUIRE(COALESCE_VERSION == COALESCE_VERSION_MAJOR * 10000 + COALESCE_VERSION_MINOR * 100 + COALESCE_VERSION_PATCH);
  REQUIRE(COALESCE_VERSION_MAJOR == 0);
}

TEST_CASE("COALESCE_ASSERT compiles away unless COALESCE_DEBUG is on") {
  REQUIRE(COALESCE_DEBUG == 0);
  int evaluated = 0;
  COALESCE_ASSERT(++evaluated > 100, "never evaluated without COALESCE_DEBUG");
  REQUIRE(evaluated == 0);
}
