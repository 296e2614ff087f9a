// Whose error is it: every public coalesce call that touches CUDA, made while an earlier CUDA call
// of the program has left an error pending, throws that error as "an earlier CUDA call"'s,
// having done nothing, and leaves it pending for the program; and an error that coalesce itself
// raises is collected before it is thrown, so the program's next check does not find it. Both
// ways: an error that the program can collect (a launch with too many threads), and a sticky one
// (an illegal address, after which every CUDA call fails until the process ends), the latter in a
// child process of this executable, so that the rest of the tests keep a working context.
//
// [no-sanitizer]: the deliberate bad launch and the deliberate illegal address are what
// compute-sanitizer reports.
#include <coalesce/algorithm.hpp>
#include <coalesce/compact.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/scan.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>
#include <coalesce/transpose.hpp>

#include "coalesce_device_test.hpp"
#include "particles.hpp"
#include "stencils.hpp"

#include <cuda/std/functional>
#include <cuda/std/span>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace ct = coalesce::testing;
using coalesce_test::random_particles;

namespace {

// The key sort_by_key sorts by: one of 1000 cells along x.
struct cell_of_x {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float x = p.x;
    return std::uint32_t((x + 1.0f) * 500.0f);
  }
};
struct speed_squared {
  template <class P>
  __host__ __device__ float operator()(const P& p) const {
    return p.vx * p.vx + p.vy * p.vy + p.vz * p.vz;
  }
};
struct drift {
  template <class P>
  __host__ __device__ void operator()(P&& p) const {
    p.x += 0.5f * p.vx;
  }
};
struct double_it {
  __host__ __device__ void operator()(float& x) const { x *= 2.0f; }
};
struct to_one {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P&) const {
    return 1u;
  }
};

using pinned_particles = coalesce::soa_vector<Particle, coalesce::host_space, coalesce::pinned_resource>;
using pinned_matrix =
    coalesce::pitched_matrix<float, coalesce::host_space, coalesce::line_aligned_rows, coalesce::pinned_resource>;

// Everything the calls below work on, made while CUDA still works.
struct operands {
  // At least 2^18 elements, so that gather takes its records path, which allocates first.
  static constexpr std::size_t n = std::size_t(1) << 19;
  std::vector<Particle> host_particles = random_particles(n);
  coalesce::soa_vector<Particle> particles{host_particles};
  coalesce::soa_vector<Particle> other{host_particles};
  coalesce::soa_vector<Particle> selected;
  pinned_particles pinned{n};
  ct::device_buffer<float> floats{std::vector<float>(n, 1.0f)};
  ct::device_buffer<float> sums{n};
  ct::device_buffer<std::uint32_t> offsets{n};
  ct::device_buffer<std::uint32_t> identity{[] {
    std::vector<std::uint32_t> i(n);
    for (std::size_t k = 0; k < n; ++k) i[k] = std::uint32_t(k);
    return i;
  }()};
  ct::device_buffer<Particle> structs{host_particles};
  ct::device_buffer<float> result{1};
  coalesce::pitched_matrix<float> matrix{64, 64, 1.0f};
  coalesce::pitched_matrix<float> smoothed{64, 64};
  coalesce::pitched_matrix<float> transposed{64, 64};
  pinned_matrix pinned_matrix_{64, 64};
  coalesce::pitched_volume<float> volume{16, 16, 16, 1.0f};
  coalesce::pitched_volume<float> volume_out{16, 16, 16};

  cuda::std::span<float> float_span() { return {floats.data(), n}; }
  cuda::std::span<float> sum_span() { return {sums.data(), n}; }
  cuda::std::span<const std::uint32_t> indices() { return {identity.data(), n}; }
};

using call = std::pair<const char*, std::function<void()>>;

// Every public coalesce call that makes CUDA calls, once each: algorithms, containers, the pool.
std::vector<call> every_entry_point(operands& o) {
  return {
      // for_each, in each of its walks
      {"for_each on a soa_view", [&] { coalesce::for_each(o.particles.view(), drift{}); }},
      {"for_each on a soa_vector", [&] { coalesce::for_each(o.particles, drift{}); }},
      {"for_each on a span", [&] { coalesce::for_each(o.float_span(), double_it{}); }},
      {"for_each on a pitched view", [&] { coalesce::for_each(o.matrix.view(), double_it{}); }},
      {"for_each on a pitched_volume", [&] { coalesce::for_each(o.volume, double_it{}); }},
      // clang-format off: it reads `__device__(Particle& p)` as a call, and `Particle & p` as a product
      {"for_each on 24-byte structs (staged)",
       [&] { coalesce::for_each(o.structs.data(), o.n, [] __device__(Particle& p) { p.x += 1.0f; }); }},
      // clang-format on
      {"for_each_index on a pitched view",
       [&] { coalesce::for_each_index(o.matrix.view(), [] __device__(std::size_t, std::size_t) {}); }},
      {"for_each_index on a soa_view",
       [&] { coalesce::for_each_index(o.particles.view(), [] __device__(std::size_t) {}); }},
      {"for_each_index on a volume",
       [&] { coalesce::for_each_index(o.volume.view(), [] __device__(std::size_t, std::size_t, std::size_t) {}); }},
      // transform, transform_reduce, the scans
      {"transform of a soa_view into a span",
       [&] { coalesce::transform(o.particles.view(), o.sum_span(), speed_squared{}); }},
      {"transform of pointers",
       [&] {
         coalesce::transform(o.floats.data(), o.n, o.sums.data(), [] __device__(float x) -> float { return x + 1.0f; });
       }},
      {"transform_reduce to the host",
       [&] { (void)coalesce::transform_reduce(o.particles.view(), speed_squared{}, 0.0f, cuda::std::plus<>{}); }},
      {"transform_reduce into device memory",
       [&] {
         coalesce::transform_reduce(o.particles.view(), speed_squared{}, 0.0f, cuda::std::plus<>{}, o.result.data(), 0);
       }},
      {"inclusive_scan", [&] { coalesce::inclusive_scan(o.float_span(), o.sum_span()); }},
      {"exclusive_scan", [&] { coalesce::exclusive_scan(o.float_span(), o.sum_span(), 0.0f); }},
      {"transform_inclusive_scan",
       [&] {
         coalesce::transform_inclusive_scan(o.particles.view(), cuda::std::span<std::uint32_t>(o.offsets.data(), o.n),
                                            to_one{}, cuda::std::plus<>{});
       }},
      {"transform_exclusive_scan",
       [&] {
         coalesce::transform_exclusive_scan(o.particles.view(), cuda::std::span<std::uint32_t>(o.offsets.data(), o.n),
                                            to_one{}, 0u, cuda::std::plus<>{});
       }},
      // compaction and reordering
      {"erase_if", [&] { (void)coalesce::erase_if(o.other, coalesce_test::x_below{-2.0f}); }},
      {"copy_if", [&] { (void)coalesce::copy_if(o.particles.view(), o.selected, coalesce_test::x_below{0.0f}); }},
      {"gather (records)", [&] { coalesce::gather(o.particles.const_view(), o.indices(), o.other.view()); }},
      {"scatter", [&] { coalesce::scatter(o.particles.const_view(), o.indices(), o.other.view()); }},
      {"sort_by_key", [&] { coalesce::sort_by_key(o.other, cell_of_x{}); }},
      // stencils, transpose, conversions
      {"stencil on matrices", [&] { coalesce::stencil<1>(o.matrix, o.smoothed, coalesce_test::five_point{}); }},
      {"stencil on volumes", [&] { coalesce::stencil<1>(o.volume, o.volume_out, coalesce_test::seven_point{}); }},
      {"transpose", [&] { coalesce::transpose(o.matrix.view(), o.transposed.view()); }},
      {"copy_aos_to_soa",
       [&] { coalesce::copy_aos_to_soa(static_cast<const Particle*>(o.structs.data()), o.other.view()); }},
      {"copy_soa_to_aos", [&] { coalesce::copy_soa_to_aos(o.particles.const_view(), o.structs.data()); }},
      {"to_soa", [&] { (void)coalesce::to_soa(static_cast<const Particle*>(o.structs.data()), o.n); }},
      {"copy of volumes", [&] { coalesce::copy(o.volume.const_view(), o.volume_out.view()); }},
      // soa_vector
      {"soa_vector(count)", [&] { coalesce::soa_vector<Particle> v(1000); }},
      {"soa_vector(std::vector)", [&] { coalesce::soa_vector<Particle> v(o.host_particles); }},
      {"soa_vector copy", [&] { coalesce::soa_vector<Particle> v(o.particles); }},
      {"soa_vector::reserve",
       [&] {
         coalesce::soa_vector<Particle> v;
         v.reserve(1000);
       }},
      {"soa_vector::resize",
       [&] {
         coalesce::soa_vector<Particle> v;
         v.resize(1000);
       }},
      {"soa_vector::assign", [&] { o.other.assign(o.particles); }},
      {"soa_vector::assign_async from pinned memory", [&] { o.other.assign_async(o.pinned); }},
      {"soa_vector::to_vector", [&] { (void)o.particles.to_vector(); }},
      // pitched_matrix and pitched_volume
      {"pitched_matrix(rows, cols)", [&] { coalesce::pitched_matrix<float> m(100, 100); }},
      {"pitched_matrix::fill", [&] { o.smoothed.fill(2.0f); }},
      {"pitched_matrix::resize",
       [&] {
         coalesce::pitched_matrix<float> m;
         m.resize(100, 100);
       }},
      {"pitched_matrix::copy_from", [&] { o.transposed.copy_from(o.matrix); }},
      {"pitched_matrix::copy_from_async from pinned memory", [&] { o.transposed.copy_from_async(o.pinned_matrix_); }},
      {"pitched_matrix::to_vector", [&] { (void)o.matrix.to_vector(); }},
      {"pitched_volume(depth, height, width)", [&] { coalesce::pitched_volume<float> v(8, 8, 8); }},
      {"pitched_volume::to_vector", [&] { (void)o.volume.to_vector(); }},
      // the resources and the pool
      {"pool_resource::allocate",
       [&] { coalesce::detail::owned_bytes<coalesce::pool_resource> b(coalesce::pool_resource(), 4096, 256); }},
      {"device_resource::allocate",
       [&] { coalesce::detail::owned_bytes<coalesce::device_resource> b(coalesce::device_resource(), 4096, 256); }},
      {"pinned_resource::allocate",
       [&] { coalesce::detail::owned_bytes<coalesce::pinned_resource> b(coalesce::pinned_resource(), 4096, 256); }},
      {"trim_pool", [&] { coalesce::trim_pool(); }},
      {"pool_reserved_bytes", [&] { (void)coalesce::pool_reserved_bytes(0); }},
  };
}

// A launch that fails at once (1025 threads per block), leaving an error the program can collect.
__global__ void never_runs() {}

// A write through a null pointer: an illegal address, which no later CUDA call survives.
__global__ void write_through(int* p) { *p = 1; }

constexpr const char* sticky_child_variable = "COALESCE_TEST_STICKY_CHILD";

// Checks that `c`, called with `pending` left by the program, throws it as an earlier call's.
void throws_as_earlier(const call& c, cudaError_t pending) {
  INFO(c.first);
  try {
    c.second();
    FAIL("no exception");
  } catch (const coalesce::cuda_error& e) {
    CHECK(e.code() == pending);
    CHECK(std::string(e.what()).find("an earlier CUDA call") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("every call made while the program's error is pending throws it as an earlier call's and leaves it pending",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  operands o;
  ct::check_sync("the operands");
  for (const auto& c : every_entry_point(o)) {
    INFO(c.first);
    never_runs<<<1, 1025>>>();
    const cudaError_t users = cudaPeekAtLastError();
    REQUIRE(users != cudaSuccess);  // cudaErrorInvalidValue with CUDA 13.0 on an H200
    throws_as_earlier(c, users);
    CHECK(cudaGetLastError() == users);  // still the program's to collect
    CHECK(cudaGetLastError() == cudaSuccess);
    c.second();  // and the same call works once it is collected
    ct::check_sync(c.first);
    CHECK(cudaPeekAtLastError() == cudaSuccess);  // and leaves nothing of its own behind
  }
}

TEST_CASE("an error coalesce raises itself is collected before it is thrown", "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  int devices = 0;
  COALESCE_CUDA_CHECK(cudaGetDeviceCount(&devices));
  SECTION("trim_pool of a device that does not exist") {
    REQUIRE(devices < coalesce::detail::pooled_devices);
    CHECK_THROWS_AS(coalesce::trim_pool(devices), coalesce::cuda_error);
  }
  SECTION("an allocation larger than the device") {
    CHECK_THROWS_AS(coalesce::soa_vector<Particle>(std::size_t(1) << 45), coalesce::cuda_error);
  }
  SECTION("a pitched_matrix larger than the device") {
    CHECK_THROWS_AS(coalesce::pitched_matrix<float>(std::size_t(1) << 22, std::size_t(1) << 22), coalesce::cuda_error);
  }
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  // The next call finds nothing pending: it runs.
  coalesce::soa_vector<Particle> particles(random_particles(1000));
  coalesce::for_each(particles, drift{});
  ct::check_sync("for_each after coalesce's own failure");
}

// The child's half of the next case: hidden ([.]), and refused unless its parent started it.
TEST_CASE("sticky-error child: every call after an illegal address throws it as an earlier call's",
          "[.][no-sanitizer]") {
  if (std::getenv(sticky_child_variable) == nullptr) COALESCE_SKIP("runs only as the child of the sticky-error case");
  operands o;
  ct::check_sync("the operands");
  write_through<<<1, 1>>>(nullptr);
  const cudaError_t sticky = cudaDeviceSynchronize();
  REQUIRE(sticky == cudaErrorIllegalAddress);
  std::size_t calls = 0;
  for (const auto& c : every_entry_point(o)) {
    throws_as_earlier(c, sticky);
    CHECK(cudaPeekAtLastError() == sticky);  // sticky: still there for the program
    ++calls;
  }
  std::printf("sticky-error child: %zu calls each threw the illegal address as an earlier call's\n", calls);
}

TEST_CASE("every call made after an illegal address throws it as an earlier call's (in a child process)",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // The child is this executable running only the hidden case above (the shell that popen starts
  // has an /proc/self/exe of its own: the path is read here).
  std::array<char, 4096> self{};
  const ssize_t length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  REQUIRE(length > 0);
  const std::string command = std::string(sticky_child_variable) + "=1 '" +
                              std::string(self.data(), std::size_t(length)) +
                              "' \"sticky-error child: every call after an illegal address throws it as an earlier "
                              "call's\" 2>&1";
  FILE* child = popen(command.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string output;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), int(chunk.size()), child) != nullptr) output += chunk.data();
  const int status = pclose(child);
  INFO(output);
  CHECK(status == 0);
  CHECK(output.find("calls each threw the illegal address") != std::string::npos);
  // The child's context is gone with it; this one still works.
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}
