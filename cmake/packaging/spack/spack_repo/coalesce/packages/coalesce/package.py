# Spack package for coalesce: header-only, installed by coalesce's own CMake install rules, so a
# Spack consumer gets the same coalesceConfig.cmake and targets (coalesce::coalesce,
# coalesce::testing) as one that installs with CMake. See docs/packaging.md for its use.
from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class Coalesce(CMakePackage):
    """Coalesced, aligned, vectorized, bank-conflict-free GPU memory access by default: a
    header-only CUDA C++ library of structure-of-arrays containers, pitched matrices and volumes,
    conflict-free shared-memory tiles, and the algorithms that walk them."""

    homepage = "https://github.com/coalesce-cuda/coalesce"
    git = "https://github.com/coalesce-cuda/coalesce.git"

    license("Apache-2.0")

    version("main", branch="main")
    # Kept equal to project(VERSION) in CMakeLists.txt and <coalesce/version.hpp>: the ctest
    # package.versions fails when they disagree. The tag is the one a release of this version
    # carries; until it exists, install @main, or `spack develop` a checkout (docs/packaging.md).
    version("0.1.0", tag="v0.1.0")

    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    # Headers only, but every use needs the toolkit: its runtime headers and CCCL (Thrust, CUB,
    # libcu++), found again by the installed coalesceConfig.cmake (find_dependency(CUDAToolkit)).
    depends_on("cuda@12.6:")

    def cmake_args(self):
        return [
            # The install rules alone: the tests, examples and benchmarks need Catch2 and a GPU,
            # and the installed package offers no coalesce::nccl, so NCCL is not looked for.
            self.define("COALESCE_BUILD_TESTS", False),
            self.define("COALESCE_BUILD_EXAMPLES", False),
            self.define("COALESCE_BUILD_BENCHMARKS", False),
            self.define("COALESCE_WITH_NCCL", False),
            self.define("COALESCE_INSTALL", True),
            self.define("CUDAToolkit_ROOT", self.spec["cuda"].prefix),
        ]
