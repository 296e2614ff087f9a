// Streams and CUDA graphs with coalesce's containers: the algorithms handed a container run on its
// stream, asynchronous copies between pinned host containers and device containers wait for
// nothing, and one simulation step - a copy from pinned host memory into a device container, a
// for_each and a transform, all on the containers' stream - is captured into a CUDA graph whose
// 100 replays give exactly the host's result.
#include <coalesce/algorithm.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "cuda_graphs.hpp"
#include "particles.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::host_space;
using coalesce::pinned_resource;

// What the host hands the device for one step, through pinned memory.
struct Step {
  float dt, gravity;
};
COALESCE_FIELDS(Step, dt, gravity);

namespace {

template <class T>
using pinned_vector = coalesce::soa_vector<T, host_space, pinned_resource>;
using pinned_matrix = coalesce::pitched_matrix<float, host_space, coalesce::line_aligned_rows, pinned_resource>;

using coalesce_test::owned_graph;
using coalesce_test::owned_graph_exec;
using coalesce_test::owned_stream;

// The update of one step, the same code for the host's reference and the device. Velocities are
// whole numbers, positions multiples of 1/64, dt one of 1/64, 2/64, 3/64 and the gravity -1: over
// 100 steps every product and sum below stays exact in float (vy a multiple of 1/64 below 13, y
// a multiple of 1/4096 below 100), so the device's fused multiply-adds round nothing and the
// comparison can be exact.
template <class P>
__host__ __device__ void advance(P& p, float dt, float gravity) {
  p.vy += gravity * dt;
  p.x += p.vx * dt;
  p.y += p.vy * dt;
  p.z += p.vz * dt;
}
template <class P>
__host__ __device__ float energy(const P& p, float gravity) {
  return 0.5f * (p.vx * p.vx + p.vy * p.vy + p.vz * p.vz) - gravity * p.y;
}

// for_each's functor: the step's parameters are read on the device, where the step's copy put them.
struct advance_particle {
  coalesce::soa_view<const Step> step;
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    const Step s = step[0];
    advance(p, s.dt, s.gravity);
  }
};
// transform's functor.
struct energy_of {
  coalesce::soa_view<const Step> step;
  __device__ float operator()(coalesce::soa_reference_t<const Particle> p) const { return energy(p, step[0].gravity); }
};

// n particles whose arithmetic in `advance` is exact (see there).
std::vector<Particle> exact_particles(std::size_t n) {
  std::mt19937_64 engine(ct::test_seed());
  std::uniform_int_distribution<int> sixty_fourths(-512, 511), whole(-8, 8);
  std::vector<Particle> particles(n);
  for (auto& p : particles)
    p = {sixty_fourths(engine) / 64.0f, sixty_fourths(engine) / 64.0f, sixty_fourths(engine) / 64.0f,
         float(whole(engine)),          float(whole(engine)),          float(whole(engine))};
  return particles;
}

// The step's dt on replay k: it changes, so that a replay that did not copy the host's new
// parameters gives a different result.
float dt_of_step(int k) { return float(1 + k % 3) / 64.0f; }
constexpr float gravity = -1.0f;

// One simulation step, all on the containers' stream: the host's parameters into the device, the
// particles advanced, their energies written.
void enqueue_step(const pinned_vector<Step>& host_step, coalesce::soa_vector<Step>& step,
                  coalesce::soa_vector<Particle>& particles, coalesce::pitched_matrix<float>& energies) {
  step.assign_async(host_step);
  coalesce::for_each(particles, advance_particle{step.const_view()});
  coalesce::transform(particles, energies, energy_of{step.const_view()});
}

// Keeps a spinning kernel busy on the GPU for about `milliseconds`, then writes x = i % 65536:
// work an algorithm queued on the same stream must wait for, and one on another stream would
// overtake. One block, so that the writes themselves are slow too.
__global__ void slowly_set_x_to_index(coalesce::soa_view<Particle> p, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (std::size_t i = threadIdx.x; i < p.size(); i += blockDim.x) p[i].x = float(i % 65536);
}
__global__ void slowly_set_to_index(coalesce::pitched_view<float> m, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (std::size_t r = 0; r < m.rows(); ++r)
    for (std::size_t c = threadIdx.x; c < m.cols(); c += blockDim.x) m(r, c) = float((r * m.cols() + c) % 65536);
}

// GPU clock cycles in `milliseconds` on the current device.
long long cycles_in(int milliseconds) {
  int device = 0, kilohertz = 0;
  COALESCE_CUDA_CHECK(cudaGetDevice(&device));
  COALESCE_CUDA_CHECK(cudaDeviceGetAttribute(&kilohertz, cudaDevAttrClockRate, device));
  return (long long)kilohertz * milliseconds;
}

std::size_t particle_count() { return ct::small_problems() ? std::size_t(1) << 12 : (std::size_t(1) << 20) + 3; }

using coalesce_test::count_nodes;
using coalesce_test::graph_nodes;

const char* mode_name(cudaStreamCaptureMode mode) {
  return mode == cudaStreamCaptureModeGlobal ? "cudaStreamCaptureModeGlobal" : "cudaStreamCaptureModeThreadLocal";
}

// Captures enqueue_step in `mode`, replays it 100 times with new parameters each time, and checks
// every particle and energy against the host's 100 steps.
void replay_captured_step(cudaStreamCaptureMode mode) {
  const std::size_t n = particle_count();
  constexpr int steps = 100;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const auto initial = exact_particles(n);
  coalesce::soa_vector<Particle> particles(initial, on_stream);
  coalesce::pitched_matrix<float> energies(1, n, on_stream);
  coalesce::soa_vector<Step> step(1, on_stream);
  pinned_vector<Step> host_step(1);

  // Every kernel of the step runs once before the capture, on scratch containers of the same
  // types, as graph code customarily warms up: CUDA loads a kernel's module at its first launch,
  // and whether it may do so during a capture is the driver's business, not coalesce's.
  {
    coalesce::soa_vector<Particle> scratch_particles(initial.size() < 5 ? initial.size() : 5, on_stream);
    coalesce::pitched_matrix<float> scratch_energies(1, scratch_particles.size(), on_stream);
    enqueue_step(host_step, step, scratch_particles, scratch_energies);
  }
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // the fills above are done too

  owned_graph graph;
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), mode));
  std::string failure;
  try {
    enqueue_step(host_step, step, particles, energies);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    COALESCE_CUDA_CHECK(cudaStreamIsCapturing(stream.get(), &status));
    if (status != cudaStreamCaptureStatusActive) failure = "the capture is no longer active";
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Ended whatever happened, so that the stream is usable again.
  const cudaError_t ended = cudaStreamEndCapture(stream.get(), graph.out());
  if (ended != cudaSuccess && failure.empty())
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + ": " + cudaGetErrorString(ended);
  if (!failure.empty()) {
    (void)cudaGetLastError();
    FAIL("capturing the step (assign_async, for_each, transform) in "
         << mode_name(mode) << " failed: a coalesce call in it synchronized, used stream 0 or another stream, "
         << "or copied pageable memory: " << failure);
  }

  // Everything the step does is in the graph: nothing ran on another stream while capturing.
  const graph_nodes nodes = count_nodes(graph.get());
  CHECK(nodes.memcpys >= 1);
  CHECK(nodes.kernels >= 2);
  CHECK(nodes.memsets + nodes.allocations + nodes.frees + nodes.others == 0);

  owned_graph_exec replay;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(replay.out(), graph.get(), 0));
  for (int k = 0; k < steps; ++k) {
    host_step[0] = Step{dt_of_step(k), gravity};  // the graph's copy reads it at this replay
    COALESCE_CUDA_CHECK(cudaGraphLaunch(replay.get(), stream.get()));
    // The host writes host_step again next: the replay's copy must have read it first.
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }

  std::vector<Particle> expected = initial;
  for (int k = 0; k < steps; ++k)
    for (auto& p : expected) advance(p, dt_of_step(k), gravity);
  const auto got = particles.to_vector();
  const auto got_energies = energies.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    if (!coalesce_test::same(got[i], expected[i]))
      FAIL("particle " << i << " after " << steps << " replays: x " << got[i].x << " (expected " << expected[i].x
                       << "), vy " << got[i].vy << " (expected " << expected[i].vy << ")");
    if (got_energies[i] != energy(expected[i], gravity))
      FAIL("energy " << i << " after " << steps << " replays: " << got_energies[i] << ", expected "
                     << energy(expected[i], gravity));
  }
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

}  // namespace

TEST_CASE("a step of pinned copy, for_each and transform captured in thread-local mode replays 100 times exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  replay_captured_step(cudaStreamCaptureModeThreadLocal);
}

TEST_CASE("a step of pinned copy, for_each and transform captured in global mode replays 100 times exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  replay_captured_step(cudaStreamCaptureModeGlobal);
}

TEST_CASE("for_each, transform and for_each_index handed a container run on the container's stream") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count();
  const std::size_t rows = 37, cols = 1001;
  const long long slow = cycles_in(100);
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  coalesce::soa_vector<Particle> particles(n, on_stream);
  coalesce::pitched_matrix<float> xs(1, n, on_stream);
  coalesce::pitched_matrix<float> m(rows, cols, on_stream);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  // Each algorithm follows a 100 ms kernel on the stream (the stream is non-blocking: stream 0
  // would not wait for it): run anywhere else, it reads zeros, and the slow kernel's writes win.
  slowly_set_x_to_index<<<1, 256, 0, stream.get()>>>(particles.view(), slow);
  ct::check_launch();
  coalesce::for_each(particles, [] __device__(auto p) { p.x += 1.0f; });
  coalesce::transform(particles, xs, [] __device__(auto p) { return 2.0f * p.x; });
  slowly_set_to_index<<<1, 256, 0, stream.get()>>>(m.view(), slow);
  ct::check_launch();
  const auto view = m.view();
  coalesce::for_each_index(m, [=] __device__(std::size_t r, std::size_t c) { view(r, c) += 1.0f; });

  const auto got = particles.to_vector();
  const auto got_xs = xs.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    const float x = float(i % 65536) + 1.0f;
    if (got[i].x != x) FAIL("for_each did not follow the vector's stream: x[" << i << "] is " << got[i].x);
    if (got_xs[i] != 2.0f * x) FAIL("transform did not follow the vector's stream: out[" << i << "] is " << got_xs[i]);
  }
  const auto got_m = m.to_vector();
  for (std::size_t i = 0; i < rows * cols; ++i)
    if (got_m[i] != float(i % 65536) + 1.0f)
      FAIL("for_each_index did not follow the matrix's stream: element " << i << " is " << got_m[i]);
}

TEST_CASE("assign_async and copy_from_async move elements between pinned host and device containers without waiting") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = particle_count();
  const std::size_t rows = 37, cols = 1001;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const auto particles = coalesce_test::random_particles(n);
  const pinned_vector<Particle> pinned_in(particles);
  pinned_vector<Particle> pinned_out(n);
  coalesce::soa_vector<Particle> on_device(n, on_stream);
  std::vector<float> dense(rows * cols);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = float(i) * 0.5f;
  const pinned_matrix matrix_in(dense, rows, cols);
  pinned_matrix matrix_out(rows, cols);
  coalesce::pitched_matrix<float> matrix_on_device(rows, cols, on_stream);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  // Behind a 100 ms kernel on the stream, every call returns while the stream is still busy.
  slowly_set_x_to_index<<<1, 256, 0, stream.get()>>>(on_device.view(), cycles_in(100));
  ct::check_launch();
  on_device.assign_async(pinned_in);
  coalesce::for_each(on_device, [] __device__(auto p) { p.y += p.vy; });
  pinned_out.assign_async(on_device);
  matrix_on_device.copy_from_async(matrix_in);
  coalesce::for_each(matrix_on_device, [] __device__(float& x) { x += 1.0f; });
  matrix_out.copy_from_async(matrix_on_device);
  // (Under compute-sanitizer the host's calls are slowed too much for the 100 ms to tell.)
  if (!ct::small_problems()) CHECK(cudaStreamQuery(stream.get()) == cudaErrorNotReady);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  for (std::size_t i = 0; i < n; ++i) {
    Particle expected = particles[i];
    expected.y += expected.vy;
    const Particle got = pinned_out[i];
    if (!coalesce_test::same(got, expected)) FAIL("particle " << i << " differs after the round trip");
  }
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      if (matrix_out(r, c) != dense[r * cols + c] + 1.0f) FAIL("matrix element (" << r << ", " << c << ") differs");
  REQUIRE(cudaGetLastError() == cudaSuccess);
}
