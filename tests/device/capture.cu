// Every public algorithm under a CUDA graph capture: either the capture records it and
// 100 replays give exactly the host's result, each replay working on the data as it is at that
// replay - sort_by_key (in both capture modes), gather through its records, scatter, the four
// scans, transform_reduce into device memory, for_each / for_each_index / transform on pointers,
// matrices and volumes, stencil, transpose, the AoS <-> SoA copies and volume copies - or it
// refuses with a std::logic_error that names it, before it has enqueued or allocated anything:
// the capture stays active, ends cleanly with the same nodes as without the call, and replays
// what came before it (transform_reduce to the host, erase_if, copy_if). Data are integers, or
// floats holding small integers, so every comparison is exact. (migrate refuses too; it needs
// NCCL and two GPUs, so tests/nccl/ would hold its test.)
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
#include "cuda_graphs.hpp"

#include <cuda/std/functional>
#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

// A particle in a cell: the cell is what sort_by_key orders by, the id tells the elements of one
// cell apart (so that only a stable sort passes), and the floats hold small whole numbers. Six
// 4-byte columns: a record of 32 bytes is one sector against six, so the gathers of 2^18
// elements or more go through records (reorder.hpp).
struct Body {
  std::uint32_t cell, id;
  float x, y, z, w;
};
COALESCE_FIELDS(Body, cell, id, x, y, z, w);

namespace {

constexpr int replays = 100;

// ---- CUDA handles and graphs --------------------------------------------------------------------

using coalesce_test::count_nodes;
using coalesce_test::describe;
using coalesce_test::graph_nodes;
using coalesce_test::owned_graph;
using coalesce_test::owned_graph_exec;
using coalesce_test::owned_stream;

// Captures what `enqueue` puts on `stream` into `graph`. The capture is ended whatever happens, so
// that the stream is usable again; a call that threw, a capture that is no longer active or an end
// that failed fails the test, naming `what`.
template <class Enqueue>
void capture(cudaStream_t stream, cudaStreamCaptureMode mode, owned_graph& graph, const std::string& what,
             const Enqueue& enqueue) {
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
  std::string failure;
  try {
    enqueue();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    COALESCE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status != cudaStreamCaptureStatusActive) failure = "the capture is no longer active";
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, graph.out());
  if (ended != cudaSuccess && failure.empty())
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + ": " + cudaGetErrorString(ended);
  if (!failure.empty()) {
    (void)cudaGetLastError();
    FAIL("capturing " << what << " failed: " << failure);
  }
}

// Launches `graph` `times` times on `stream`, back to back, and waits for the last.
void replay(cudaGraph_t graph, cudaStream_t stream, int times) {
  owned_graph_exec exec;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(exec.out(), graph, 0));
  for (int k = 0; k < times; ++k) COALESCE_CUDA_CHECK(cudaGraphLaunch(exec.get(), stream));
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Runs `step` once outside any capture, then captures it and replays it 100 times: 101 steps in
// all. The first run loads every kernel the step launches before the capture, as graph code
// customarily warms up (whether CUDA may load a module during a capture is the driver's business).
// Returns the graph's nodes.
template <class Step>
graph_nodes run_then_replay(cudaStream_t stream, const std::string& what, const Step& step,
                            cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal) {
  step();
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  owned_graph graph;
  capture(stream, mode, graph, what, step);
  const graph_nodes nodes = count_nodes(graph.get());
  replay(graph.get(), stream, replays);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  return nodes;
}

// A call that refuses to be captured: after `before` (work that stays in the graph) on `stream`,
// `refused` throws std::logic_error whose message begins "<name>:" and holds each of `says`; the
// capture is still active after it and ends cleanly, no error is left pending, and the graph holds
// the nodes of a capture of `before` alone. `before` runs once outside the captures too (its
// kernels are loaded first), and the graph is launched once: the caller then finds what `before`
// changes changed twice, and what `refused` would have changed unchanged.
template <class Before, class Refused>
void check_refused(cudaStream_t stream, const std::string& name, const std::vector<std::string>& says,
                   const Before& before, const Refused& refused) {
  before();
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  owned_graph reference;
  capture(stream, cudaStreamCaptureModeThreadLocal, reference, name + "'s reference (what comes before it)", before);

  owned_graph graph;
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string unexpected, message;
  bool threw_logic_error = false;
  try {
    before();
    try {
      refused();
    } catch (const std::logic_error& e) {
      threw_logic_error = true;
      message = e.what();
    }
  } catch (const std::exception& e) {
    unexpected = e.what();
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t asked = cudaStreamIsCapturing(stream, &status);
  const cudaError_t ended = cudaStreamEndCapture(stream, graph.out());
  const cudaError_t pending = cudaGetLastError();

  INFO(name << " under capture said: " << (threw_logic_error ? message : unexpected));
  REQUIRE(unexpected.empty());
  REQUIRE(threw_logic_error);
  CHECK(message.rfind(name + ": ", 0) == 0);
  for (const auto& words : says) CHECK(message.find(words) != std::string::npos);
  CHECK(asked == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  REQUIRE(ended == cudaSuccess);
  CHECK(pending == cudaSuccess);
  CHECK(describe(count_nodes(graph.get())) == describe(count_nodes(reference.get())));
  replay(graph.get(), stream, 1);
}

// ---- what the steps do, on the device and for the host's reference ----------------------------

// One step of a body: a new cell from the old one and the id (12 bits: many bodies per cell), x
// counts the steps, z keeps the old cell. Every value stays a whole number below 2^24, exact in
// float.
template <class B>
__host__ __device__ void rehash(B& b) {
  const std::uint32_t cell = b.cell, id = b.id;
  const float x = b.x;
  b.cell = (cell * 2654435761u + id * 40503u + 12345u) >> 20;
  b.x = x + 1.0f;
  b.z = float(cell);
}
struct rehash_body {
  __device__ void operator()(coalesce::soa_reference_t<Body> b) const { rehash(b); }
};
struct cell_key {
  template <class B>
  __host__ __device__ std::uint32_t operator()(const B& b) const {
    return b.cell;
  }
};
// All of a body in one number, for sums: id, cell and x in separate bit ranges.
struct fingerprint {
  template <class B>
  __host__ __device__ std::uint64_t operator()(const B& b) const {
    const std::uint32_t cell = b.cell, id = b.id;
    const float x = b.x;
    return (std::uint64_t(id) << 32) + (std::uint64_t(cell) << 12) + std::uint64_t(x);
  }
};
struct sum {
  __host__ __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a + b; }
};
struct cell_below {
  std::uint32_t bound;
  template <class B>
  __host__ __device__ bool operator()(const B& b) const {
    return std::uint32_t(b.cell) < bound;
  }
};
struct id_and_cell_mod_5 {
  template <class B>
  __host__ __device__ std::uint32_t operator()(const B& b) const {
    return (std::uint32_t(b.id) + std::uint32_t(b.cell)) % 5u;
  }
};

// n bodies with random 12-bit cells, ids 0 .. n - 1.
std::vector<Body> bodies(std::size_t n) {
  std::mt19937_64 engine(ct::test_seed());
  std::vector<Body> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = {std::uint32_t(engine() & 4095u), std::uint32_t(i), 0.0f, float(i % 1000), 0.0f, float(i % 7)};
  return v;
}
bool same(const Body& a, const Body& b) {
  return a.cell == b.cell && a.id == b.id && a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}
void check_bodies(const std::vector<Body>& got, const std::vector<Body>& expected, const std::string& what) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], expected[i]))
      FAIL(what << ": body " << i << " is (cell " << got[i].cell << ", id " << got[i].id << ", x " << got[i].x
                << "), expected (cell " << expected[i].cell << ", id " << expected[i].id << ", x " << expected[i].x
                << ")");
}
template <class T>
void check_values(const std::vector<T>& got, const std::vector<T>& expected, const std::string& what) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i]) FAIL(what << ": element " << i << " is " << got[i] << ", expected " << expected[i]);
}
void rehash_all(std::vector<Body>& v) {
  for (auto& b : v) rehash(b);
}

// totals[i] += read(i) for i < n: folds each replay's output into a running total, so that a
// replay that left the output as the one before it had gives other totals.
template <class Read>
__global__ void add_to_totals(Read read, std::size_t n, std::uint64_t* totals) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) totals[i] += read(i);
}
template <class Read>
void fold_into(std::uint64_t* totals, std::size_t n, const Read& read, cudaStream_t stream) {
  add_to_totals<<<unsigned((n + 255) / 256), 256, 0, stream>>>(read, n, totals);
  ct::check_launch("add_to_totals");
}
struct fingerprint_at {
  coalesce::soa_view<const Body> v;
  __device__ std::uint64_t operator()(std::size_t i) const { return fingerprint{}(v[i]); }
};
struct value_at {
  const std::uint32_t* values;
  __device__ std::uint64_t operator()(std::size_t i) const { return values[i]; }
};

const char* mode_name(cudaStreamCaptureMode mode) {
  return mode == cudaStreamCaptureModeGlobal ? "cudaStreamCaptureModeGlobal" : "cudaStreamCaptureModeThreadLocal";
}

// Captures a step of for_each and sort_by_key on the vector's stream in `mode` and replays it: each
// replay sorts what the vector holds then, in the vector's own storage, and the graph frees all it
// allocates. 2^18 + 3 bodies: the sort's gather goes through records.
void replay_captured_sort(cudaStreamCaptureMode mode) {
  const std::size_t n = (std::size_t(1) << 18) + 3;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const auto initial = bodies(n);
  coalesce::soa_vector<Body> v(initial, on_stream);
  const auto step = [&] {
    coalesce::for_each(v, rehash_body{});
    coalesce::sort_by_key(v, cell_key{}, 12);
  };
  std::vector<Body> expected = initial;
  const auto host_step = [&] {
    rehash_all(expected);
    std::stable_sort(expected.begin(), expected.end(), [](const Body& a, const Body& b) { return a.cell < b.cell; });
  };

  step();  // outside a capture: today's path, which gives v new storage
  host_step();
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const void* const storage = v.const_view().columns()[0];
  owned_graph graph;
  capture(stream.get(), mode, graph, std::string("for_each and sort_by_key in ") + mode_name(mode), step);
  CHECK(v.const_view().columns()[0] == storage);
  const graph_nodes nodes = count_nodes(graph.get());
  INFO("the graph: " << describe(nodes));
  CHECK(nodes.allocations > 0);  // the sort's scratch is the graph's memory ...
  CHECK(nodes.frees == nodes.allocations);  // ... and every replay frees what it allocates

  owned_graph_exec exec;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(exec.out(), graph.get(), 0));
  for (int k = 1; k <= replays; ++k) {
    COALESCE_CUDA_CHECK(cudaGraphLaunch(exec.get(), stream.get()));
    host_step();
    // The first two replays are where the graph broke when the sort replaced v's storage.
    if (k <= 2 || k == replays)
      check_bodies(v.to_vector(), expected, "after replay " + std::to_string(k) + " in " + mode_name(mode));
  }
  CHECK(v.size() == n);
  CHECK(v.const_view().columns()[0] == storage);
  // Outside the capture again, the vector copies, and sorts with new storage, as before.
  const std::vector<Body> after_replays = expected;
  const coalesce::soa_vector<Body> copy(v);
  step();
  host_step();
  check_bodies(copy.to_vector(), after_replays, "a copy of the vector made after the replays");
  check_bodies(v.to_vector(), expected, "a step outside the capture after the replays");
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

}  // namespace

// ---- works under capture -------------------------------------------------------------------------

TEST_CASE(
    "sort_by_key captured in thread-local mode sorts the vector's current contents at each of 100 replays, in its own storage") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  replay_captured_sort(cudaStreamCaptureModeThreadLocal);
}

TEST_CASE(
    "sort_by_key captured in global mode sorts the vector's current contents at each of 100 replays, in its own storage") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  replay_captured_sort(cudaStreamCaptureModeGlobal);
}

TEST_CASE("gather through records, captured, gathers the input's current contents at each of 100 replays") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = (std::size_t(1) << 18) + 3;  // at least 2^18 elements: through records
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> in(model, on_stream);
  coalesce::soa_vector<Body> out(n, on_stream);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(ct::test_seed() + 1));  // scattered
  ct::device_buffer<std::uint32_t> indices(order);
  ct::device_buffer<std::uint64_t> totals(std::vector<std::uint64_t>(n, 0));
  ct::check_sync("uploads");  // device_buffer copies on the legacy stream, which `stream` does not wait for

  const cuda::std::span<const std::uint32_t> by(indices.data(), n);
  const graph_nodes nodes = run_then_replay(stream.get(), "for_each and gather", [&] {
    coalesce::for_each(in, rehash_body{});
    coalesce::gather(in, by, out);
    fold_into(totals.data(), n, fingerprint_at{out.const_view()}, stream.get());
  });
  INFO("the graph: " << describe(nodes));
  CHECK(nodes.allocations > 0);  // the records are the graph's memory ...
  CHECK(nodes.frees == nodes.allocations);

  std::vector<Body> gathered(n);
  std::vector<std::uint64_t> expected_totals(n, 0);
  for (int k = 0; k <= replays; ++k) {
    rehash_all(model);
    for (std::size_t i = 0; i < n; ++i) {
      gathered[i] = model[order[i]];
      expected_totals[i] += fingerprint{}(gathered[i]);
    }
  }
  check_bodies(out.to_vector(), gathered, "the gather after 100 replays");
  check_values(totals.download(), expected_totals, "the gathers' totals over 101 steps");
}

TEST_CASE("scatter, captured, scatters the input's current contents at each of 100 replays") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> in(model, on_stream);
  coalesce::soa_vector<Body> out(n, on_stream);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(ct::test_seed() + 2));
  ct::device_buffer<std::uint32_t> indices(order);
  ct::device_buffer<std::uint64_t> totals(std::vector<std::uint64_t>(n, 0));
  ct::check_sync("uploads");

  const cuda::std::span<const std::uint32_t> to(indices.data(), n);
  run_then_replay(stream.get(), "for_each and scatter", [&] {
    coalesce::for_each(in, rehash_body{});
    coalesce::scatter(in, to, out);
    fold_into(totals.data(), n, fingerprint_at{out.const_view()}, stream.get());
  });

  std::vector<Body> scattered(n);
  std::vector<std::uint64_t> expected_totals(n, 0);
  for (int k = 0; k <= replays; ++k) {
    rehash_all(model);
    for (std::size_t i = 0; i < n; ++i) scattered[order[i]] = model[i];
    for (std::size_t i = 0; i < n; ++i) expected_totals[i] += fingerprint{}(scattered[i]);
  }
  check_bodies(out.to_vector(), scattered, "the scatter after 100 replays");
  check_values(totals.download(), expected_totals, "the scatters' totals over 101 steps");
}

TEST_CASE("the four scans, captured, scan the input's current contents at each of 100 replays") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;  // cells below 2^12: every sum stays below 2^32
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> v(model, on_stream);
  ct::device_buffer<std::uint32_t> out(4 * n);
  ct::device_buffer<std::uint64_t> totals(std::vector<std::uint64_t>(4 * n, 0));
  ct::check_sync("uploads");

  const cuda::std::span<const std::uint32_t> cells(v.const_view().column<&Body::cell>(), n);
  const auto quarter = [&](int q) { return cuda::std::span<std::uint32_t>(out.data() + q * n, n); };
  const graph_nodes nodes = run_then_replay(stream.get(), "for_each and four scans", [&] {
    coalesce::for_each(v, rehash_body{});
    coalesce::inclusive_scan(cells, quarter(0), cuda::std::plus<>{}, stream.get());
    coalesce::exclusive_scan(cells, quarter(1), 7u, cuda::std::plus<>{}, stream.get());
    coalesce::transform_inclusive_scan(v.const_view(), quarter(2), id_and_cell_mod_5{}, cuda::std::plus<>{},
                                       stream.get());
    coalesce::transform_exclusive_scan(v.const_view(), quarter(3), id_and_cell_mod_5{}, 11u, cuda::std::plus<>{},
                                       stream.get());
    fold_into(totals.data(), 4 * n, value_at{out.data()}, stream.get());
  });
  INFO("the graph: " << describe(nodes));
  CHECK(nodes.allocations > 0);  // the scans' scratch is the graph's memory ...
  CHECK(nodes.frees == nodes.allocations);

  std::vector<std::uint32_t> scans(4 * n);
  std::vector<std::uint64_t> expected_totals(4 * n, 0);
  for (int k = 0; k <= replays; ++k) {
    rehash_all(model);
    std::uint32_t cell_sum = 0, mod_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t mod = (model[i].id + model[i].cell) % 5u;
      scans[n + i] = 7u + cell_sum;
      scans[3 * n + i] = 11u + mod_sum;
      cell_sum += model[i].cell;
      mod_sum += mod;
      scans[i] = cell_sum;
      scans[2 * n + i] = mod_sum;
    }
    for (std::size_t i = 0; i < 4 * n; ++i) expected_totals[i] += scans[i];
  }
  check_values(out.download(), scans, "the scans after 100 replays (inclusive, exclusive, then the transform scans)");
  check_values(totals.download(), expected_totals, "the scans' totals over 101 steps");
}

namespace {

// history[*count] = *result, then ++*count: one entry per run of the step.
__global__ void record_result(const std::uint64_t* result, std::uint64_t* history, unsigned* count) {
  history[*count] = *result;
  ++*count;
}

}  // namespace

TEST_CASE("transform_reduce into device memory, captured, reduces the view's current contents at each of 100 replays") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> v(model, on_stream);
  ct::device_buffer<std::uint64_t> result(1);
  ct::device_buffer<std::uint64_t> history(replays + 1);
  ct::device_buffer<unsigned> count(std::vector<unsigned>{0});
  ct::check_sync("uploads");

  const graph_nodes nodes = run_then_replay(stream.get(), "for_each and transform_reduce into device memory", [&] {
    coalesce::for_each(v, rehash_body{});
    coalesce::transform_reduce(v.const_view(), fingerprint{}, std::uint64_t(3), sum{}, result.data(), stream.get());
    record_result<<<1, 1, 0, stream.get()>>>(result.data(), history.data(), count.data());
    ct::check_launch("record_result");
  });
  INFO("the graph: " << describe(nodes));
  CHECK(nodes.allocations > 0);  // the partials are the graph's memory ...
  CHECK(nodes.frees == nodes.allocations);

  std::vector<std::uint64_t> expected(replays + 1);
  for (int k = 0; k <= replays; ++k) {
    rehash_all(model);
    std::uint64_t total = 3;
    for (const auto& b : model) total += fingerprint{}(b);
    expected[std::size_t(k)] = total;
  }
  CHECK(count.download()[0] == unsigned(replays + 1));
  check_values(history.download(), expected, "the reduction of each step (the first outside the capture)");
}

namespace {

// 12 bytes: for_each over an array of them goes through the staged walk (shared memory).
struct Triple {
  std::uint32_t a, b, c;
};
struct bump_triple {
  __host__ __device__ void operator()(Triple& t) const {
    t.a += t.b;
    t.b ^= t.c;
    t.c += 1u;
  }
};
struct triple_sum {
  __host__ __device__ std::uint32_t operator()(const Triple& t) const { return t.a + t.c; }
};
struct add_position {
  coalesce::pitched_view<std::uint32_t> m;
  __device__ void operator()(std::size_t r, std::size_t c) const { m(r, c) += std::uint32_t(r * 7 + c); }
};
struct add_volume_position {
  coalesce::pitched_volume_view<std::uint32_t> v;
  __device__ void operator()(std::size_t z, std::size_t y, std::size_t x) const {
    v(z, y, x) += std::uint32_t(z * 3 + y * 5 + x);
  }
};
struct triple_plus_one {
  __host__ __device__ void operator()(std::uint32_t& x) const { x = 3u * x + 1u; }
};

}  // namespace

TEST_CASE(
    "for_each, for_each_index and transform on an array of structs, a matrix and a volume, captured, replay 100 times exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003, rows = 37, cols = 1001, depth = 5, height = 19, width = 203;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  std::vector<Triple> triples(n);
  for (std::size_t i = 0; i < n; ++i) triples[i] = {std::uint32_t(i), std::uint32_t(i * 7 + 1), std::uint32_t(i % 13)};
  ct::device_buffer<Triple> aos(triples);
  ct::device_buffer<std::uint32_t> sums(n);
  ct::device_buffer<std::uint64_t> totals(std::vector<std::uint64_t>(n, 0));
  coalesce::pitched_matrix<std::uint32_t> m(rows, cols, on_stream);
  coalesce::pitched_volume<std::uint32_t> volume(depth, height, width, on_stream);
  ct::check_sync("uploads");

  run_then_replay(stream.get(), "for_each, for_each_index and transform", [&] {
    coalesce::for_each(aos.data(), n, bump_triple{}, stream.get());
    coalesce::transform(static_cast<const Triple*>(aos.data()), n, sums.data(), triple_sum{}, stream.get());
    fold_into(totals.data(), n, value_at{sums.data()}, stream.get());
    coalesce::for_each_index(m, add_position{m.view()});
    coalesce::for_each_index(volume.view(), add_volume_position{volume.view()}, stream.get());
    coalesce::for_each(volume, triple_plus_one{});
  });

  std::vector<std::uint64_t> expected_totals(n, 0);
  std::vector<std::uint32_t> expected_m(rows * cols, 0), expected_volume(depth * height * width, 0);
  for (int k = 0; k <= replays; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      bump_triple{}(triples[i]);
      expected_totals[i] += triple_sum{}(triples[i]);
    }
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) expected_m[r * cols + c] += std::uint32_t(r * 7 + c);
    for (std::size_t z = 0; z < depth; ++z)
      for (std::size_t y = 0; y < height; ++y)
        for (std::size_t x = 0; x < width; ++x) {
          std::uint32_t& e = expected_volume[(z * height + y) * width + x];
          e = 3u * (e + std::uint32_t(z * 3 + y * 5 + x)) + 1u;
        }
  }
  const auto got = aos.download();
  for (std::size_t i = 0; i < n; ++i)
    if (got[i].a != triples[i].a || got[i].b != triples[i].b || got[i].c != triples[i].c)
      FAIL("for_each over the array of structs: element " << i << " differs after 100 replays");
  check_values(totals.download(), expected_totals, "transform's totals over 101 steps");
  check_values(m.to_vector(), expected_m, "for_each_index over the matrix");
  check_values(volume.to_vector(), expected_volume, "for_each_index and for_each over the volume");
}

namespace {

// Five points, periodic: every value an unsigned integer, so that wrapping is exact on both sides.
struct five_point {
  template <class N>
  __host__ __device__ std::uint32_t operator()(const N& n) const {
    return n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1) + 3u * n(0, 0);
  }
};
// a(r, c) = t(c, r) + 1: the transpose of the stencil's output fed back as its next input.
struct feed_back {
  coalesce::pitched_view<std::uint32_t> a;
  coalesce::pitched_view<const std::uint32_t> t;
  __device__ void operator()(std::size_t r, std::size_t c) const { a(r, c) = t(c, r) + 1u; }
};

}  // namespace

TEST_CASE("stencil and transpose, captured, replay 100 times exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 67, cols = 301;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  std::vector<std::uint32_t> model(rows * cols);
  for (std::size_t i = 0; i < model.size(); ++i) model[i] = std::uint32_t((i * 2654435761u) >> 16);
  coalesce::pitched_matrix<std::uint32_t> a(model, rows, cols, on_stream);
  coalesce::pitched_matrix<std::uint32_t> b(rows, cols, on_stream);
  coalesce::pitched_matrix<std::uint32_t> t(cols, rows, on_stream);

  run_then_replay(stream.get(), "stencil, transpose and for_each_index", [&] {
    coalesce::stencil<1>(coalesce::periodic, a, b, five_point{});  // on b's stream
    coalesce::transpose(b.view(), t.view(), stream.get());
    coalesce::for_each_index(a, feed_back{a.view(), t.view()});
  });

  std::vector<std::uint32_t> next(model.size());
  const auto at = [&](std::size_t r, std::size_t c) { return model[(r % rows) * cols + c % cols]; };
  for (int k = 0; k <= replays; ++k) {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        next[r * cols + c] =
            at(r + rows - 1, c) + at(r + 1, c) + at(r, c + cols - 1) + at(r, c + 1) + 3u * at(r, c) + 1u;
    model.swap(next);
  }
  check_values(a.to_vector(), model, "the stencil's input after 101 steps");
}

namespace {

struct plus_one {
  __host__ __device__ void operator()(std::uint32_t& x) const { x += 1u; }
};
struct volume_value_at {
  coalesce::pitched_volume_view<const std::uint32_t> v;
  __device__ std::uint64_t operator()(std::size_t i) const {
    return v(i / (v.height() * v.width()), i / v.width() % v.height(), i % v.width());
  }
};

}  // namespace

TEST_CASE("copy_aos_to_soa, copy_soa_to_aos and a copy between volumes, captured, replay 100 times exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003, depth = 4, height = 21, width = 77;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  ct::device_buffer<Body> aos(model);
  coalesce::soa_vector<Body> soa(n, on_stream);
  std::vector<std::uint32_t> dense(depth * height * width);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = std::uint32_t(i * 3 + 1);
  coalesce::pitched_volume<std::uint32_t> from(dense, depth, height, width, on_stream);
  coalesce::pitched_volume<std::uint32_t> to(depth, height, width, on_stream);
  ct::device_buffer<std::uint64_t> totals(std::vector<std::uint64_t>(dense.size(), 0));
  ct::check_sync("uploads");

  run_then_replay(stream.get(), "the AoS <-> SoA copies and a volume copy", [&] {
    coalesce::copy_aos_to_soa(static_cast<const Body*>(aos.data()), soa.view(), stream.get());
    coalesce::for_each(soa, rehash_body{});
    coalesce::copy_soa_to_aos(soa.const_view(), aos.data(), stream.get());
    coalesce::for_each(from, plus_one{});
    coalesce::copy(from.const_view(), to.view(), stream.get());
    fold_into(totals.data(), dense.size(), volume_value_at{to.const_view()}, stream.get());
  });

  std::vector<std::uint64_t> expected_totals(dense.size(), 0);
  for (int k = 0; k <= replays; ++k) {
    rehash_all(model);
    for (std::size_t i = 0; i < dense.size(); ++i) expected_totals[i] += ++dense[i];
  }
  check_bodies(aos.download(), model, "the array of structs after 101 round trips through the columns");
  check_values(to.to_vector(), dense, "the volume copied at the last replay");
  check_values(totals.download(), expected_totals, "the copied volumes' totals over 101 steps");
}

// ---- refuses under capture -----------------------------------------------------------------------

TEST_CASE(
    "transform_reduce returning to the host refuses under capture, naming itself and the overload that writes to device memory") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 10007;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> v(model, on_stream);
  const auto before = [&] { coalesce::for_each(v, rehash_body{}); };
  const std::vector<std::string> says = {"captured", "transform_reduce(view, f, init, op, result, stream)"};

  check_refused(stream.get(), "coalesce::transform_reduce", says, before, [&] {
    (void)coalesce::transform_reduce(v.const_view(), fingerprint{}, std::uint64_t(0), sum{}, stream.get());
  });
  check_refused(stream.get(), "coalesce::transform_reduce", says, before,
                [&] { (void)coalesce::transform_reduce(v, fingerprint{}, std::uint64_t(0), sum{}); });
  for (int k = 0; k < 4; ++k) rehash_all(model);  // `before`, twice per check
  check_bodies(v.to_vector(), model, "the vector");
  // Outside the capture it reduces, as before.
  std::uint64_t expected = 5;
  for (const auto& b : model) expected += fingerprint{}(b);
  CHECK(coalesce::transform_reduce(v, fingerprint{}, std::uint64_t(5), sum{}) == expected);
}

TEST_CASE("erase_if refuses under capture, leaving the vector, its storage and the capture as they were") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 10007;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  coalesce::soa_vector<Body> v(model, on_stream);
  const void* const storage = v.const_view().columns()[0];

  check_refused(
      stream.get(), "coalesce::erase_if", {"captured", "outside the capture"},
      [&] { coalesce::for_each(v, rehash_body{}); }, [&] { (void)coalesce::erase_if(v, cell_below{2048}); });
  CHECK(v.size() == n);
  CHECK(v.const_view().columns()[0] == storage);
  rehash_all(model);
  rehash_all(model);
  check_bodies(v.to_vector(), model, "the vector");
  // Outside the capture it erases, as before.
  const std::size_t removed = coalesce::erase_if(v, cell_below{2048});
  const auto kept = std::remove_if(model.begin(), model.end(), cell_below{2048});
  CHECK(removed == std::size_t(model.end() - kept));
  model.erase(kept, model.end());
  check_bodies(v.to_vector(), model, "the vector after erase_if outside the capture");
}

TEST_CASE("copy_if refuses under capture, leaving the output, its storage and the capture as they were") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 10007;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  const auto earlier = bodies(77);
  coalesce::soa_vector<Body> v(model, on_stream);
  coalesce::soa_vector<Body> out(earlier, on_stream);
  const void* const storage = out.const_view().columns()[0];

  check_refused(
      stream.get(), "coalesce::copy_if", {"captured", "outside the capture"},
      [&] { coalesce::for_each(v, rehash_body{}); }, [&] { (void)coalesce::copy_if(v, out, cell_below{2048}); });
  CHECK(out.size() == earlier.size());
  CHECK(out.const_view().columns()[0] == storage);
  check_bodies(out.to_vector(), earlier, "the output");
  rehash_all(model);
  rehash_all(model);
  check_bodies(v.to_vector(), model, "the input");
  // Outside the capture it copies, as before.
  std::vector<Body> expected;
  std::copy_if(model.begin(), model.end(), std::back_inserter(expected), cell_below{2048});
  CHECK(coalesce::copy_if(v, out, cell_below{2048}) == expected.size());
  check_bodies(out.to_vector(), expected, "the output of copy_if outside the capture");
}

TEST_CASE("to_soa refuses under capture, naming copy_aos_to_soa, and leaves the capture as it was") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 10007;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  auto model = bodies(n);
  ct::device_buffer<Body> aos(model);
  coalesce::soa_vector<Body> v(model, on_stream);
  ct::check_sync("uploads");

  check_refused(
      stream.get(), "coalesce::to_soa", {"captured", "copy_aos_to_soa"}, [&] { coalesce::for_each(v, rehash_body{}); },
      [&] { (void)coalesce::to_soa(static_cast<const Body*>(aos.data()), n, on_stream); });
  rehash_all(model);
  rehash_all(model);
  check_bodies(v.to_vector(), model, "the vector the capture's other work updated");
  // Outside the capture it converts, as before.
  const auto converted = coalesce::to_soa(static_cast<const Body*>(aos.data()), n, on_stream);
  check_bodies(converted.to_vector(), bodies(n), "to_soa outside the capture");
}
