// coalesce's Conan test_package: a CUDA consumer of the installed package, built with
// find_package(coalesce) and coalesce::coalesce. What it checks runs on the host, so it passes on a
// machine with no GPU (as CI's is); the device step runs only where a GPU is usable, and the output
// says which it was. Each check prints what it held; any mismatch exits 1.
#include <coalesce/algorithm.hpp>
#include <coalesce/model.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/version.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#ifndef EXPECTED_VERSION
#  error "test_package: CMakeLists.txt passes EXPECTED_VERSION, the version Conan packaged"
#endif

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

namespace {

int failures = 0;

void check(bool held, const char* what) {
  std::printf("  %s %s\n", held ? "ok  " : "FAIL", what);
  if (!held) ++failures;
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The device step: the README's particle update. Compiling it proves that the installed target
// carries --extended-lambda and the toolkit's headers to nvcc; running it needs a GPU.
bool move_on_device(const std::vector<Particle>& particles, float dt) {
  coalesce::soa_vector<Particle> v(particles);
  coalesce::for_each(v.view(), [=] __device__(auto p) { p.x += p.vx * dt; });
  const std::vector<Particle> moved = v.to_vector();
  for (std::size_t i = 0; i < particles.size(); ++i)
    if (moved[i].x != particles[i].x + particles[i].vx * dt || moved[i].y != particles[i].y) return false;
  return true;
}

}  // namespace

int main() {
  char version[32];
  std::snprintf(version, sizeof version, "%d.%d.%d", COALESCE_VERSION_MAJOR, COALESCE_VERSION_MINOR,
                COALESCE_VERSION_PATCH);
  std::printf("coalesce %s from the Conan package (recipe version %s)\n", version, EXPECTED_VERSION);
  check(std::strcmp(version, EXPECTED_VERSION) == 0, "<coalesce/version.hpp> says the recipe's version");
  check(COALESCE_VERSION == COALESCE_VERSION_MAJOR * 10000 + COALESCE_VERSION_MINOR * 100 + COALESCE_VERSION_PATCH,
        "COALESCE_VERSION encodes major, minor and patch");

  // A host soa_vector: one 256-byte-aligned column per field, 1000 floats = 4000 B padded to 4096.
  std::vector<Particle> particles(1000);
  for (std::size_t i = 0; i < particles.size(); ++i) {
    const float f = float(i);
    particles[i] = {f, -f, 2 * f, float(i % 7), 1, 2};
  }
  coalesce::soa_vector<Particle, coalesce::host_space> host(particles);
  auto view = host.view();
  check(coalesce::field_count_v<Particle> == 6, "COALESCE_FIELDS names Particle's 6 fields");
  check(address(view.column<0>()) % 256 == 0 && address(view.column<1>()) - address(view.column<0>()) == 4096,
        "host soa_vector: columns 256-byte aligned, 4096 bytes apart for 1000 floats");
  view[3].x = 42.0f;
  check(view.column<&Particle::x>()[3] == 42.0f && view[3].y == -3.0f, "view[i].x writes the x column only");
  const std::vector<Particle> back = host.to_vector();
  check(back.size() == 1000 && back[3].x == 42.0f && back[999].z == 1998.0f, "to_vector gathers the structs back");

  // pitched_matrix rows: 1000 floats (4000 B) rounded up to 32 lines of 128 B.
  check(coalesce::pitched_matrix<float, coalesce::host_space>::pitch_for(1000) == 4096,
        "pitched_matrix pitch for 1000 floats is 4096 bytes");
  // The access model: a warp reading .x of {float x, y, z} touches 3 lines of 128 B.
  check(coalesce::model::strided_access(12, 4).lines == 3, "model: a 12-byte stride of floats touches 3 lines");

  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status == cudaSuccess && devices == 0) status = cudaErrorNoDevice;
  if (status == cudaSuccess) status = cudaFree(nullptr);
  if (status != cudaSuccess) {
    std::printf("  skip device step: for_each compiled, not run (no usable GPU: %s)\n", cudaGetErrorName(status));
    (void)cudaGetLastError();
  } else {
    check(move_on_device(particles, 0.5f), "device step: for_each moved 1000 particles, checked on the host");
  }

  if (failures > 0) {
    std::printf("test_package: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("test_package: host checks passed\n");
  return 0;
}
