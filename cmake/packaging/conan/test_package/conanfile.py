# coalesce's Conan test_package: builds main.cu, a CUDA consumer, against the package with
# find_package(coalesce) and runs it. It needs nvcc (CUDACXX or PATH), not a GPU.
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout


class CoalesceTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps"  # as a consumer has it; it writes nothing for coalesce (find mode none)

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        tc = CMakeToolchain(self)
        # main.cu compares the installed <coalesce/version.hpp> with the version Conan packaged,
        # and find_package asks the installed version file for exactly that version.
        tc.cache_variables["EXPECTED_VERSION"] = str(self.dependencies["coalesce"].ref.version)
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
