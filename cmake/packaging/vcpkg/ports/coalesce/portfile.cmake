# vcpkg overlay port for coalesce, building the source tree this port lives in
# (<tree>/cmake/packaging/vcpkg/ports/coalesce): header-only, installed by coalesce's own CMake
# install rules, so a vcpkg consumer gets the same coalesceConfig.cmake and targets
# (coalesce::coalesce, coalesce::testing) as one that installs with CMake.
#   vcpkg install coalesce --overlay-ports=<tree>/cmake/packaging/vcpkg/ports
# The CUDA Toolkit comes from vcpkg's "cuda" port, which checks for an installed toolkit.
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../../.." ABSOLUTE)
if(NOT EXISTS "${SOURCE_PATH}/include/coalesce/version.hpp")
  message(FATAL_ERROR "coalesce: this port builds the source tree it sits in, and "
    "${SOURCE_PATH} is not one (no include/coalesce/version.hpp). Use the port from a checkout of coalesce.")
endif()

# Headers only: one configuration is all there is to install.
set(VCPKG_BUILD_TYPE release)

# The install rules alone: tests, examples and benchmarks need Catch2 and a GPU toolchain setup of
# their own, and the installed package offers no coalesce::nccl, so NCCL is not looked for.
vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DCOALESCE_BUILD_TESTS=OFF
    -DCOALESCE_BUILD_EXAMPLES=OFF
    -DCOALESCE_BUILD_BENCHMARKS=OFF
    -DCOALESCE_WITH_NCCL=OFF
    -DCOALESCE_INSTALL=ON
)
vcpkg_cmake_install()

# coalesce installs its package to share/cmake/coalesce; vcpkg keeps it in share/coalesce.
vcpkg_cmake_config_fixup(PACKAGE_NAME coalesce CONFIG_PATH share/cmake/coalesce)

# LICENSE and README.md went to share/doc/coalesce; vcpkg's copy of the license is share/coalesce/copyright.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
