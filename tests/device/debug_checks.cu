// Under COALESCE_DEBUG the algorithms ask the driver what each pointer they are handed points to:
// host memory behind a span or a raw pointer (which the types cannot tell from device memory) is
// an std::invalid_argument naming the algorithm, before any kernel runs; device, managed and
// mapped pinned memory pass and are updated. This executable is its own translation unit with
// COALESCE_DEBUG on, so no debug-off copy of the library's inline functions can stand in.
#define COALESCE_DEBUG 1

#include <coalesce/algorithm.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ct = coalesce::testing;

namespace {

struct Mover {
  float x, vx;
};
COALESCE_FIELDS(Mover, x, vx)

struct double_it {
  __device__ void operator()(float& x) const { x *= 2; }
};

// The message names the algorithm and says host memory.
bool says_host_memory(const std::invalid_argument& e, const std::string& algorithm) {
  const std::string what = e.what();
  return what.find(algorithm) != std::string::npos && what.find("is host memory") != std::string::npos;
}

}  // namespace

TEST_CASE("COALESCE_DEBUG: for_each and transform refuse pageable host memory and leave it untouched") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  std::vector<float> host(1000, 1.0f);
  ct::device_buffer<float> device(1000);

  try {
    coalesce::for_each(host.data(), host.size(), double_it{});
    FAIL("for_each accepted pageable host memory");
  } catch (const std::invalid_argument& e) {
    REQUIRE(says_host_memory(e, "coalesce::for_each"));
  }
  try {
    coalesce::transform(static_cast<const float*>(device.data()), device.size(), host.data(),
                        [] __device__(float x) { return x; });
    FAIL("transform accepted pageable host memory as its output");
  } catch (const std::invalid_argument& e) {
    REQUIRE(says_host_memory(e, "coalesce::transform (output)"));
  }
  // A soa_view built from raw column pointers: its type says device memory, the driver does not.
  std::vector<float> vx(1000, 0.5f);
  const coalesce::soa_view<Mover> from_host({host.data(), vx.data()}, host.size());
  try {
    coalesce::for_each(from_host, [] __device__(auto p) { p.x += p.vx; });
    FAIL("for_each accepted a soa_view of host columns");
  } catch (const std::invalid_argument& e) {
    REQUIRE(says_host_memory(e, "coalesce::for_each"));
  }
  for (float x : host) REQUIRE(x == 1.0f);
  REQUIRE(cudaGetLastError() == cudaSuccess);  // the check leaves no error behind for the user to find
}

TEST_CASE("COALESCE_DEBUG: device, managed and mapped pinned memory pass the check and are updated") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 4096 + 3;
  const std::vector<float> ones(n, 1.0f);

  ct::device_buffer<float> device(n);
  COALESCE_CUDA_CHECK(cudaMemcpy(device.data(), ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  coalesce::for_each(device.data(), n, double_it{});
  for (float x : device.download()) REQUIRE(x == 2.0f);

  float* managed = nullptr;
  COALESCE_CUDA_CHECK(cudaMallocManaged(&managed, n * sizeof(float)));
  for (std::size_t i = 0; i < n; ++i) managed[i] = 1.0f;
  coalesce::for_each(managed, n, double_it{});
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  bool all_doubled = true;
  for (std::size_t i = 0; i < n; ++i) all_doubled = all_doubled && managed[i] == 2.0f;
  COALESCE_CUDA_CHECK(cudaFree(managed));
  REQUIRE(all_doubled);

  float* pinned = nullptr;
  COALESCE_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), n * sizeof(float), cudaHostAllocMapped));
  for (std::size_t i = 0; i < n; ++i) pinned[i] = 1.0f;
  coalesce::for_each(pinned, n, double_it{});
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  all_doubled = true;
  for (std::size_t i = 0; i < n; ++i) all_doubled = all_doubled && pinned[i] == 2.0f;
  COALESCE_CUDA_CHECK(cudaFreeHost(pinned));
  REQUIRE(all_doubled);
}

// A kernel that traps leaves its context unusable, so the trap runs in a child process: this
// executable again, running only the hidden case below. What the parent checks is what a user
// sees: the device's message naming the algorithm, and the launch failing.
// Tagged [no-sanitizer] as well: a filter of only exclusions, like the sanitizer runs' one, also
// selects hidden cases.
TEST_CASE("gather with an index outside its input (run by the case below)", "[.][gather-trap][no-sanitizer]") {
  coalesce::soa_vector<Mover> in(8), out(4);
  const std::vector<std::uint32_t> host_indices{0, 1, 9, 2};  // 9: outside the 8 elements
  ct::device_buffer<std::uint32_t> indices(host_indices);
  coalesce::gather(in.view(), cuda::std::span<const std::uint32_t>(indices.data(), indices.size()), out.view());
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("child: cudaDeviceSynchronize: %s\n", cudaGetErrorString(status));
  std::fflush(stdout);
  std::_Exit(status == cudaSuccess ? 0 : 3);  // no destructors: the context is gone
}

TEST_CASE("COALESCE_DEBUG: gather with an index outside its input traps with a message naming it") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  if (ct::under_sanitizer()) {  // the child's trap would be the sanitizer's error; the trap is the point
    coalesce_test::record_unmeasured();
    return;
  }
  // popen runs a shell, for which /proc/self/exe is the shell: resolve this executable's path here.
  char self[4096] = {};
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(length > 0);
  const std::string command = "'" + std::string(self, static_cast<std::size_t>(length)) + "' '[gather-trap]' 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, child) != nullptr) output += buffer;
  const int status = ::pclose(child);
  INFO("the child printed:\n" << output);
  CHECK(output.find("coalesce::gather: an index is outside the input view") != std::string::npos);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);  // the launch failed, and the child said so
}
