// The memory resources' traits, checked with a plain host compiler and no GPU: which host
// resources are pinned (and so copy asynchronously, capturable into a CUDA graph), and the
// default resource of each space.
#include <coalesce/memory.hpp>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"

#include <type_traits>

namespace {

// A user's resource that says its host memory is page-locked (say, a pool of cudaHostRegister'ed
// memory), and one that says it is not.
struct registered_pool_resource : coalesce::host_resource {
  static constexpr bool pinned = true;
};
struct pageable_pool_resource : coalesce::host_resource {
  static constexpr bool pinned = false;
};

}  // namespace

TEST_CASE("pinned_resource and a resource that says pinned = true are pinned; other host resources are not") {
  STATIC_REQUIRE(coalesce::is_pinned_resource_v<coalesce::pinned_resource>);
  STATIC_REQUIRE(coalesce::is_pinned_resource_v<registered_pool_resource>);
  STATIC_REQUIRE_FALSE(coalesce::is_pinned_resource_v<pageable_pool_resource>);
  STATIC_REQUIRE_FALSE(coalesce::is_pinned_resource_v<coalesce::host_resource>);
  STATIC_REQUIRE_FALSE(coalesce::is_pinned_resource_v<coalesce_test::flaky_host_resource>);
}

TEST_CASE("copies between the device and device or pinned memory are the asynchronous ones") {
  using coalesce::detail::copies_asynchronously;
  STATIC_REQUIRE(copies_asynchronously<coalesce::device_space, coalesce::pool_resource>);
  STATIC_REQUIRE(copies_asynchronously<coalesce::device_space, coalesce::device_resource>);
  STATIC_REQUIRE(copies_asynchronously<coalesce::device_space, coalesce::managed_resource>);
  STATIC_REQUIRE(copies_asynchronously<coalesce::host_space, coalesce::pinned_resource>);
  STATIC_REQUIRE_FALSE(copies_asynchronously<coalesce::host_space, coalesce::host_resource>);
}

TEST_CASE("the default resources are host_resource and the stream-ordered pool_resource") {
  STATIC_REQUIRE(std::is_same_v<coalesce::default_resource_t<coalesce::host_space>, coalesce::host_resource>);
  STATIC_REQUIRE(std::is_same_v<coalesce::default_resource_t<coalesce::device_space>, coalesce::pool_resource>);
  REQUIRE(coalesce::pool_resource().stream() == cudaStream_t{});
}
