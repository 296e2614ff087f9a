// device_value<T> with a plain host compiler and no GPU: its type (compiles = passes), and the one
// failure it can meet without a device, an allocation that fails. What it holds, reads back and
// receives from a reduction or a graph replay is tests/device/small_things.cu's.
#include <coalesce/device_value.hpp>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"

#include <cuda_runtime_api.h>

#include <type_traits>
#include <utility>

TEST_CASE("device_value<T> is move-only, hands out a T* from coalesce's pool by default, and get() returns a T") {
  using value = coalesce::device_value<double>;
  STATIC_REQUIRE(std::is_same_v<value::value_type, double>);
  STATIC_REQUIRE(std::is_same_v<value::resource_type, coalesce::pool_resource>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<value&>().data()), double*>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const value&>().data()), const double*>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const value&>().get()), double>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::declval<const value&>().stream()), cudaStream_t>);
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<value>);
  STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<value>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<value>);
  STATIC_REQUIRE(std::is_nothrow_move_assignable_v<value>);
  STATIC_REQUIRE(std::is_nothrow_swappable_v<value>);
  // Explicit constructors: nothing becomes an allocation and a copy to the device unseen.
  STATIC_REQUIRE(std::is_constructible_v<value, double, coalesce::pool_resource>);
  STATIC_REQUIRE(std::is_constructible_v<value, coalesce::pool_resource>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<double, value>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<coalesce::pool_resource, value>);
  STATIC_REQUIRE(std::is_same_v<coalesce::device_value<int, coalesce::managed_resource>::resource_type,
                                coalesce::managed_resource>);
}

TEST_CASE("a device_value whose allocation fails throws the resource's cuda_error and holds nothing") {
  using flaky = coalesce_test::flaky_device_resource;
  flaky::disarm();
  const long outstanding = flaky::outstanding;
  const long attempts = flaky::attempts;
  flaky::fail_next = true;
  try {
    const coalesce::device_value<int, flaky> v(5, flaky(1, cudaStream_t{}));
    FAIL("the allocation was to fail, and the device_value was made");
  } catch (const coalesce::cuda_error& e) {
    CHECK(e.code() == cudaErrorMemoryAllocation);
  }
  CHECK(flaky::attempts == attempts + 1);  // it asked once, and did not ask again
  CHECK(flaky::outstanding == outstanding);
  flaky::disarm();
}
