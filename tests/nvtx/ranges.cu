// coalesce's NVTX ranges, counted by a tool of the test's own (nvtx_recorder.hpp) that NVTX loads
// through its injection interface, as Nsight Systems loads its own: a few calls of each kind
// (algorithms, container copies, one inside a CUDA graph capture) and exactly one range for each
// in domain "coalesce", named as the call; nothing left open; CUB's ranges (domain "CCCL")
// inside coalesce's. Compiled twice: as device.nvtx, and with COALESCE_DISABLE_NVTX as
// device.nvtx_disabled, where coalesce pushes nothing and CUB's ranges still arrive.
#include <coalesce/algorithm.hpp>
#include <coalesce/device_value.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_test.hpp"
#include "nvtx_counting.hpp"
#include "nvtx_recorder.hpp"

#include <cuda/std/functional>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>
#include <vector>

struct Body {
  float x, v;
  std::uint32_t key;
};
COALESCE_FIELDS(Body, x, v, key);

namespace {

namespace nvtx = coalesce_test::nvtx;

#if defined(COALESCE_DISABLE_NVTX)
constexpr bool coalesce_ranges = false;
#else
constexpr bool coalesce_ranges = true;
#endif

// The names of the ranges pushed in `domain` since the last clear.
std::vector<std::string> names_in(const std::string& domain) {
  std::vector<std::string> names;
  for (const auto& r : nvtx::pushed())
    if (r.domain == domain) names.push_back(r.name);
  return names;
}

// Whether the running test case counts ranges (nvtx::counting(): not under compute-sanitizer).
bool counted = true;

// What `call` pushed in domain "coalesce": `expected` where the ranges are on, nothing where they
// are off; every range closed after it. Only runs `call` where ranges are not counted.
template <class Call>
void check_ranges(const std::vector<std::string>& expected, Call&& call) {
  nvtx::clear();
  call();
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  if (!counted) return;
  CHECK(nvtx::open_ranges() == 0);
  CHECK(names_in("coalesce") == (coalesce_ranges ? expected : std::vector<std::string>{}));
}

std::vector<Body> bodies(std::size_t n) {
  std::vector<Body> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = Body{float(i), 1.0f, std::uint32_t((i * 2654435761u) % 1000u)};
  return b;
}

struct drift {
  __host__ __device__ void operator()(coalesce::for_each_reference_t<Body> b) const { b.x += b.v; }
};
struct position {
  __host__ __device__ float operator()(coalesce::soa_reference_t<const Body> b) const { return b.x; }
};
struct key_of {
  __host__ __device__ std::uint32_t operator()(coalesce::soa_reference_t<const Body> b) const { return b.key; }
};

}  // namespace

TEST_CASE("NVTX loaded the test's tool", "[nvtx]") {
  // The first NVTX call initializes NVTX, which loads the tool named by NVTX_INJECTION64_PATH; a
  // mark of the test's own, so that it happens where coalesce's ranges are off too.
  counted = nvtx::counting();
  coalesce::soa_vector<Body> v(16);
  check_ranges({"coalesce::fill"}, [&] { coalesce::fill(v.view(), Body{}); });
}

TEST_CASE("one range per algorithm call, named as the call", "[nvtx]") {
  counted = nvtx::counting();
  const std::size_t n = 100003;
  coalesce::soa_vector<Body> v(bodies(n));
  coalesce::soa_vector<Body> out(n);

  check_ranges({"coalesce::for_each"}, [&] { coalesce::for_each(v.view(), drift{}); });
  // The container overload calls the view's: still one range, the call the user made.
  check_ranges({"coalesce::for_each"}, [&] { coalesce::for_each(v, drift{}); });
  check_ranges({"coalesce::transform"}, [&] {
    coalesce::transform(v.const_view(), out.view(), [] __device__(coalesce::soa_reference_t<const Body> b) {
      return Body{b.x * 2.0f, b.v, b.key};
    });
  });
  float sum = 0.0f;
  check_ranges({"coalesce::transform_reduce"},
               [&] { sum = coalesce::transform_reduce(v.const_view(), position{}, 0.0f, cuda::std::plus<>{}); });
  CHECK(sum > 0.0f);
  check_ranges({"coalesce::zero"}, [&] { coalesce::zero(out.view()); });

  // sort_by_key calls cub::DeviceRadixSort, whose own ranges (domain CCCL) nest inside.
  nvtx::clear();
  coalesce::sort_by_key(v, key_of{});
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  if (counted) {
    CHECK(nvtx::open_ranges() == 0);
    CHECK(names_in("coalesce") ==
          (coalesce_ranges ? std::vector<std::string>{"coalesce::sort_by_key"} : std::vector<std::string>{}));
    CHECK_FALSE(names_in("CCCL").empty());
  }
  const auto sorted = v.to_vector();
  for (std::size_t i = 1; i < sorted.size(); ++i) REQUIRE(sorted[i - 1].key <= sorted[i].key);
}

TEST_CASE("one range per container copy", "[nvtx]") {
  counted = nvtx::counting();
  const auto host = bodies(1000);
  check_ranges({"coalesce::soa_vector::soa_vector"}, [&] { coalesce::soa_vector<Body> v(host); });
  // Value-initialized elements are copied in: a range too.
  check_ranges({"coalesce::soa_vector::soa_vector"}, [&] { coalesce::soa_vector<Body> v(100); });
  coalesce::soa_vector<Body> v(host);
  check_ranges({"coalesce::soa_vector::soa_vector"}, [&] { coalesce::soa_vector<Body> copy(v); });
  check_ranges({"coalesce::soa_vector::to_vector"}, [&] { CHECK(v.to_vector().size() == host.size()); });
  // Growth copies the elements into new storage.
  check_ranges({"coalesce::soa_vector::reserve"}, [&] { v.reserve(4000); });
  // Sizes only: no range.
  check_ranges({}, [&] {
    CHECK(v.size() == host.size());
    CHECK(v.capacity() >= 4000);
  });

  coalesce::pitched_matrix<float> m(64, 100);
  check_ranges({"coalesce::pitched_matrix::fill"}, [&] { m.fill(2.0f); });
  check_ranges({"coalesce::pitched_matrix::to_vector"}, [&] { CHECK(m.to_vector()[6399] == 2.0f); });
  coalesce::device_value<int> d(7);
  check_ranges({"coalesce::device_value::get"}, [&] { CHECK(d.get() == 7); });
}

TEST_CASE("a call inside a stream capture has its range, and the graph runs", "[nvtx]") {
  counted = nvtx::counting();
  cudaStream_t stream = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    coalesce::soa_vector<Body, coalesce::device_space, coalesce::pool_resource> v(bodies(4099),
                                                                                  coalesce::pool_resource(stream));
    cudaGraph_t graph = nullptr;
    check_ranges({"coalesce::for_each"}, [&] {
      COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      coalesce::for_each(v.view(), drift{}, stream);
      COALESCE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    });
    cudaGraphExec_t exec = nullptr;
    COALESCE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    COALESCE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto after = v.to_vector();
    CHECK(after[4098].x == 4099.0f);  // x + v once: the graph ran the update
    COALESCE_CUDA_CHECK(cudaGraphExecDestroy(exec));
    COALESCE_CUDA_CHECK(cudaGraphDestroy(graph));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}
