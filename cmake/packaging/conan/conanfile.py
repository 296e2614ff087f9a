# Conan 2 recipe for coalesce, packaging this source tree (not a download): header-only, installed
# by coalesce's own CMake install rules, so a Conan consumer gets the same coalesceConfig.cmake,
# targets (coalesce::coalesce, coalesce::testing) and version file as one that installs with CMake.
#
#   conan create cmake/packaging/conan        (scripts/conan-create.sh does it with a pinned Conan)
#
# The CUDA Toolkit (12.6 or newer) is not a Conan package: it comes from the system, found by
# CMake's FindCUDAToolkit when coalesce is installed here and again when a consumer's
# find_package(coalesce) runs. Put nvcc on PATH, or set CUDAToolkit_ROOT or CUDACXX.
import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy

required_conan_version = ">=2.0"


class CoalesceConan(ConanFile):
    name = "coalesce"
    # Kept equal to project(VERSION) and <coalesce/version.hpp>: the ctest package.versions fails
    # when they disagree, and test_package checks the installed header against it.
    version = "0.1.0"
    description = "Coalesced, aligned, vectorized, bank-conflict-free GPU memory access by default"
    license = "Apache-2.0"
    homepage = "https://github.com/coalesce-cuda/coalesce"
    url = "https://github.com/coalesce-cuda/coalesce"
    topics = ("cuda", "gpu", "structure-of-arrays", "header-only")
    package_type = "header-library"
    # Only to run CMake's install step: the package itself is the same for every configuration
    # (package_id clears them).
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True

    def export_sources(self):
        # The recipe lives in <tree>/cmake/packaging/conan; the sources are the tree's. Only what
        # the install needs: the headers, the top-level CMakeLists.txt and its cmake/ scripts (the
        # config template), and the files installed beside the headers.
        root = os.path.join(self.recipe_folder, "..", "..", "..")
        copy(self, "include/*", root, self.export_sources_folder)
        copy(self, "CMakeLists.txt", root, self.export_sources_folder)
        # Conan's * also matches "/": cmake/packaging (these recipes) stays out.
        for pattern in ("cmake/*.cmake", "cmake/*.in"):
            copy(self, pattern, root, self.export_sources_folder, excludes="cmake/packaging/*")
        copy(self, "LICENSE", root, self.export_sources_folder)
        copy(self, "README.md", root, self.export_sources_folder)

    def layout(self):
        cmake_layout(self, src_folder=".")

    def generate(self):
        tc = CMakeToolchain(self)
        # The install rules alone: no tests, examples or benchmarks (they are not exported, and
        # would need Catch2 and a GPU toolchain setup of their own), and no NCCL probe (the
        # installed package does not offer coalesce::nccl).
        tc.cache_variables["COALESCE_BUILD_TESTS"] = False
        tc.cache_variables["COALESCE_BUILD_EXAMPLES"] = False
        tc.cache_variables["COALESCE_BUILD_BENCHMARKS"] = False
        tc.cache_variables["COALESCE_WITH_NCCL"] = False
        tc.cache_variables["COALESCE_INSTALL"] = True
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()

    def package(self):
        cmake = CMake(self)
        cmake.install()

    def package_id(self):
        self.info.clear()

    def package_info(self):
        # cmake_find_mode "none": CMakeDeps writes no config of its own, and a consumer's
        # find_package(coalesce) finds the one coalesce installs (builddirs puts its directory on
        # CMAKE_PREFIX_PATH). That file does what cpp_info cannot say: find_dependency(CUDAToolkit
        # 12.6), link CUDA::toolkit, add CUDA 13's include/cccl for host compilers, pass
        # --extended-lambda to nvcc, define coalesce::testing on CUDA::cudart_static and CUPTI,
        # and refuse another major version (SameMajorVersion). A generated config would drop
        # those, or keep a second copy of them that could drift from the real one.
        self.cpp_info.set_property("cmake_find_mode", "none")
        self.cpp_info.set_property("cmake_file_name", "coalesce")
        self.cpp_info.builddirs = [os.path.join("share", "cmake", "coalesce")]
        # For generators other than CMake's (pkg-config, MSBuild): the include directory; the
        # CUDA Toolkit's own include and library directories are theirs to add.
        self.cpp_info.includedirs = ["include"]
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
