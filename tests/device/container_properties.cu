// The containers on the device: property tests, exception safety and CUDA graph capture.
//   - Random sequences of construct, copy, move, swap, resize, reserve, resize_for_overwrite,
//     assign (from device, pageable and pinned vectors), assign_async, erase_if, copy_if and
//     element writes (a kernel) on two device soa_vectors, and of construct, copy, move, swap,
//     resize, fill, copy_from, copy_from_async and element writes on two device pitched_matrices,
//     checked after every step against std::vector models: elements, sizes, the resource and
//     stream each container holds, the matrices' zero padding (read with a plain cudaMemcpy), and
//     that every allocation still out is one a container holds. Three streams, one per resource,
//     so that a container that switched streams is caught. In a second run, an injecting resource
//     fails a random allocation of the steps documented strong: each must throw and change nothing.
//   - A resize whose step after the allocation fails (a CUDA error left pending, as an unchecked
//     failed call leaves one) keeps the container as it was: the strong guarantee of resize.
//   - While a container's stream is being captured, each call that allocates, releases, waits or
//     copies pageable memory throws std::logic_error naming it before it enqueues anything (the
//     capture stays active and ends with no nodes), and the calls a graph can record are recorded
//     and replay on the data as it is at the replay. Plain host containers ask nothing.
// The seeds are fixed; COALESCE_PROPERTY_ITERATIONS sets the steps per seed (default 120, 30 under
// compute-sanitizer).
#include <algorithm>
#include <coalesce/algorithm.hpp>
#include <coalesce/compact.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "coalesce_test.hpp"
#include "cuda_graphs.hpp"
#include "flaky_resource.hpp"
#include "records.hpp"

namespace ct = coalesce::testing;

namespace {

using coalesce::device_space;
using coalesce::host_space;
using coalesce::line_aligned_rows;
using flaky = coalesce_test::flaky_device_resource;
using dev_records = coalesce::soa_vector<Record, device_space, flaky>;
using dev_matrix = coalesce::pitched_matrix<int, device_space, line_aligned_rows, flaky>;
using host_records = coalesce::soa_vector<Record, host_space>;
using pinned_records = coalesce::soa_vector<Record, host_space, coalesce::pinned_resource>;
using host_matrix = coalesce::pitched_matrix<int, host_space>;
using pinned_matrix = coalesce::pitched_matrix<int, host_space, line_aligned_rows, coalesce::pinned_resource>;

// ---- CUDA handles, graphs and kernels -----------------------------------------------------------

using coalesce_test::count_nodes;
using coalesce_test::graph_nodes;
using coalesce_test::owned_graph;
using coalesce_test::owned_graph_exec;
using coalesce_test::owned_stream;

// Captures what `body` enqueues on `stream` (thread-local mode) into `graph`, ending the capture
// whatever happens so that the stream is usable again. Returns what went wrong - body threw, the
// capture was no longer active, the end failed - or nothing. No assertion inside `body`: a
// failing one would leave the capture open.
template <class Body>
std::string capture(cudaStream_t stream, owned_graph& graph, const Body& body) {
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string failure;
  try {
    body();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    COALESCE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status != cudaStreamCaptureStatusActive) failure = "the capture is no longer active";
  } catch (const std::exception& e) {
    failure = std::string("threw: ") + e.what();
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, graph.out());
  if (ended != cudaSuccess && failure.empty())
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(ended) + ": " + cudaGetErrorString(ended);
  const cudaError_t pending = cudaGetLastError();
  if (pending != cudaSuccess && failure.empty()) failure = std::string("left pending: ") + cudaGetErrorName(pending);
  return failure;
}

// The calls refused under one capture: each call's name, and what it threw.
struct refusals {
  std::vector<std::pair<std::string, std::string>> calls;
  // Runs `call`, which must throw std::logic_error naming `name`; anything else it throws goes on.
  template <class Call>
  void expect(const std::string& name, const Call& call) {
    std::string message = "(nothing thrown)";
    try {
      call();
    } catch (const std::logic_error& e) {
      message = e.what();
    }
    calls.emplace_back(name, message);
  }
  // After the capture: every call threw, naming itself, that its stream is being captured.
  void check() const {
    for (const auto& [name, message] : calls) {
      INFO(name << " said: " << message);
      CHECK(message.rfind(name + ": its stream is being captured into a CUDA graph, and it ", 0) == 0);
      CHECK(message.find("; ") != std::string::npos);  // then what to do instead
    }
  }
};

// Every capture test's end: nothing went wrong, no node was recorded, every call was refused.
void check_refused_capture(const std::string& failure, const owned_graph& graph, const refusals& refused) {
  INFO("the capture: " << failure);
  REQUIRE(failure.empty());
  CHECK(count_nodes(graph.get()).total() == 0);
  refused.check();
}

__global__ void write_records(coalesce::soa_view<Record> v, const std::size_t* at, const Record* values,
                              std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) v[at[i]] = values[i];
}
__global__ void write_cells(coalesce::pitched_view<int> m, const std::size_t* rows, const std::size_t* cols,
                            const int* values, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) m(rows[i], cols[i]) = values[i];
}

unsigned blocks_for(std::size_t n) { return unsigned((n + 255) / 256); }

struct key_divisible_by {
  std::int64_t divisor;
  template <class R>
  __host__ __device__ bool operator()(const R& r) const {
    return r.key % divisor == 0;
  }
};
struct add_to_key {
  std::int64_t amount;
  __device__ void operator()(coalesce::soa_reference_t<Record> r) const { r.key += amount; }
};
struct add_int {
  int amount;
  __device__ void operator()(int& x) const { x += amount; }
};

// ---- random steps -------------------------------------------------------------------------------

const std::uint64_t seeds[] = {1, 2, 3, 4};

std::size_t steps_per_seed() {
  if (const char* set = std::getenv("COALESCE_PROPERTY_ITERATIONS"))
    return std::size_t(std::strtoull(set, nullptr, 10));
  return ct::small_problems() ? 30 : 120;
}

class random_steps {
 public:
  explicit random_steps(std::uint64_t seed) : engine_(seed) {}
  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::size_t(engine_() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
  std::size_t size() {
    static const std::size_t listed[] = {0, 1, 2, 3, 31, 33, 4095, 4097};
    return one_in(2) ? listed[below(8)] : below(5000);
  }
  std::pair<std::size_t, std::size_t> shape() {
    std::size_t rows = size(), cols = size();
    if (rows * cols > (std::size_t(1) << 16)) (one_in(2) ? rows : cols) = below(40);
    return {rows, cols};
  }
  Record record() {
    const auto k = static_cast<std::int64_t>(engine_() % 2000001) - 1000000;
    return Record{k, float(below(4001)) / 4.0f - 500.0f, std::int16_t(int(below(60001)) - 30000), double(k) / 8.0};
  }
  std::vector<Record> records_of(std::size_t n) {
    std::vector<Record> v(n);
    for (auto& r : v) r = record();
    return v;
  }
  int value() { return int(engine_() % 2000001) - 1000000; }
  std::vector<int> values(std::size_t n) {
    std::vector<int> v(n);
    for (auto& x : v) x = value();
    return v;
  }
  // Up to `most` distinct indices below n, in increasing order.
  std::vector<std::size_t> distinct_below(std::size_t n, std::size_t most) {
    std::vector<std::size_t> at;
    for (std::size_t k = 0, count = below(most + 1); k < count && n > 0; ++k) at.push_back(below(n));
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    return at;
  }

 private:
  std::mt19937_64 engine_;
};

// Resources 1 to 3, each on its own stream.
struct three_streams {
  owned_stream streams[3];
  flaky resource(int id) const { return flaky(id, streams[id - 1].get()); }
  void synchronize() const {
    for (const auto& s : streams) COALESCE_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  }
};

template <class Containers>
long held_allocations(const Containers& containers) {
  long held = 0;
  for (const auto& c : containers) held += c.allocated_bytes() > 0 ? 1 : 0;
  return held;
}

// Whether an exception is the injecting resource's allocation failure.
bool injected(const coalesce::cuda_error& e) {
  return e.code() == cudaErrorMemoryAllocation && std::string(e.what()).find("injected") != std::string::npos;
}

struct vector_model {
  std::vector<Record> elements;
  int resource;
};

void check_vector(const dev_records& v, const vector_model& model, const three_streams& streams, std::size_t slot) {
  INFO("vector " << slot);
  REQUIRE(v.size() == model.elements.size());
  CHECK(v.capacity() >= v.size());
  CHECK(v.resource().id == model.resource);
  CHECK(v.stream() == streams.streams[model.resource - 1].get());
  const auto got = v.to_vector();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == model.elements[i])) FAIL("element " << i << " differs from the model");
}

// Writes `values` at the distinct indices `at` of `v` with a kernel on its stream.
void write_with_kernel(dev_records& v, const std::vector<std::size_t>& at, const std::vector<Record>& values) {
  if (at.empty()) return;
  const ct::device_buffer<std::size_t> where(at);
  const ct::device_buffer<Record> what(values);
  write_records<<<blocks_for(at.size()), 256, 0, v.stream()>>>(v.view(), where.data(), what.data(), at.size());
  ct::check_launch("write_records");
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(v.stream()));  // before the buffers go
}

enum vector_op {
  construct_count,
  construct_from_structs,
  copy_construct,
  copy_with_resource,
  copy_assign,
  move_assign,
  move_construct,
  swap_both,
  resize,
  reserve,
  resize_for_overwrite,
  write_elements,
  erase_if,
  copy_if,
  assign,
  clear,
  vector_ops
};
// The steps whose failure must leave both vectors as they were (the strong guarantee, or a
// construction that replaces a vector only once it is complete).
bool vector_op_is_strong(int op) {
  return op == construct_count || op == construct_from_structs || op == copy_construct || op == copy_with_resource ||
         op == copy_assign || op == resize || op == reserve || op == resize_for_overwrite;
}

std::string vector_step(int op, random_steps& random, const three_streams& streams, dev_records (&v)[2],
                        vector_model (&model)[2]) {
  const std::size_t i = random.below(2), j = random.below(2);
  dev_records& a = v[i];
  vector_model& m = model[i];
  switch (op) {
    case construct_count: {
      const std::size_t n = random.size();
      const int id = 1 + int(random.below(3));
      a = dev_records(n, streams.resource(id));
      m = {std::vector<Record>(n), id};
      return "construct " + std::to_string(n) + " elements";
    }
    case construct_from_structs: {
      const auto elements = random.records_of(random.size());
      const int id = 1 + int(random.below(3));
      a = dev_records(elements, streams.resource(id));
      m = {elements, id};
      return "construct from " + std::to_string(elements.size()) + " structs";
    }
    case copy_construct: {
      a = dev_records(v[j]);
      m = model[j];
      return "copy-construct";
    }
    case copy_with_resource: {
      const int id = 1 + int(random.below(3));
      dev_records copy(v[j], streams.resource(id));
      streams.synchronize();  // the copy on stream `id` reads v[j], which the assignment may free
      a = std::move(copy);
      m = {model[j].elements, id};
      return "copy-construct with a given resource";
    }
    case copy_assign: {
      a = v[j];
      m.elements = model[j].elements;
      return "copy-assign";
    }
    case move_assign: {
      if (i == j) return "nothing (a move onto itself)";
      a = std::move(v[j]);
      m = model[j];
      model[j].elements.clear();
      return "move-assign";
    }
    case move_construct: {
      dev_records moved(std::move(a));
      check_vector(a, {{}, m.resource}, streams, i);  // NOLINT(bugprone-use-after-move): specified
      a = std::move(moved);
      return "move-construct and move back";
    }
    case swap_both: {
      swap(v[0], v[1]);
      std::swap(model[0], model[1]);
      return "swap";
    }
    case resize: {
      const std::size_t n = random.size();
      a.resize(n);
      m.elements.resize(n);
      return "resize to " + std::to_string(n);
    }
    case reserve: {
      const std::size_t n = random.size();
      a.reserve(n);
      if (a.capacity() < n) FAIL("reserve(" << n << ") left a capacity of " << a.capacity());
      return "reserve " + std::to_string(n);
    }
    case resize_for_overwrite: {
      const std::size_t n = random.size(), old = a.size();
      a.resize_for_overwrite(n);
      m.elements.resize(n);
      std::vector<std::size_t> at;
      for (std::size_t k = old; k < n; ++k) at.push_back(k);  // never read what was not written
      std::vector<Record> values = random.records_of(at.size());
      for (std::size_t k = 0; k < at.size(); ++k) m.elements[at[k]] = values[k];
      write_with_kernel(a, at, values);
      return "resize_for_overwrite to " + std::to_string(n) + " and write the new elements";
    }
    case write_elements: {
      const auto at = random.distinct_below(m.elements.size(), 40);
      const auto values = random.records_of(at.size());
      for (std::size_t k = 0; k < at.size(); ++k) m.elements[at[k]] = values[k];
      write_with_kernel(a, at, values);
      return "write " + std::to_string(at.size()) + " elements";
    }
    case erase_if: {
      const key_divisible_by pred{2 + std::int64_t(random.below(4))};
      const std::size_t before = m.elements.size();
      m.elements.erase(std::remove_if(m.elements.begin(), m.elements.end(), pred), m.elements.end());
      const std::size_t removed = coalesce::erase_if(a, pred);
      if (removed != before - m.elements.size())
        FAIL("erase_if removed " << removed << ", the model " << before - m.elements.size());
      return "erase_if";
    }
    case copy_if: {
      const key_divisible_by pred{2 + std::int64_t(random.below(4))};
      std::vector<Record> kept;
      std::copy_if(model[j].elements.begin(), model[j].elements.end(), std::back_inserter(kept), pred);
      const std::size_t count = coalesce::copy_if(v[j], a, pred);
      if (count != kept.size()) FAIL("copy_if kept " << count << ", the model " << kept.size());
      m.elements = kept;
      return i == j ? "copy_if into itself" : "copy_if from the other vector";
    }
    case assign: {
      const auto fresh = random.records_of(a.size());
      switch (random.below(4)) {
        case 0:
          if (a.size() != v[j].size()) {
            REQUIRE_THROWS_AS(a.assign(v[j]), std::invalid_argument);
            return "assign from a device vector of another size (refused)";
          }
          a.assign(v[j]);
          m.elements = model[j].elements;
          return "assign from a device vector";
        case 1:
          a.assign(host_records(fresh));
          m.elements = fresh;
          return "assign from a pageable host vector";
        case 2: {
          const pinned_records pinned(fresh);
          a.assign(pinned);
          COALESCE_CUDA_CHECK(cudaStreamSynchronize(a.stream()));  // before the pinned vector goes
          m.elements = fresh;
          return "assign from a pinned host vector";
        }
        default: {
          const pinned_records pinned(fresh);
          a.assign_async(pinned);
          pinned_records back(a.size());
          back.assign_async(a);
          COALESCE_CUDA_CHECK(cudaStreamSynchronize(a.stream()));
          if (!(back.to_vector() == fresh)) FAIL("assign_async there and back changed the elements");
          m.elements = fresh;
          return "assign_async from a pinned host vector and back";
        }
      }
    }
    default: {
      a.clear();
      m.elements.clear();
      return "clear";
    }
  }
}

void run_vector_steps(std::uint64_t seed, bool inject_failures) {
  random_steps random(seed);
  const three_streams streams;
  dev_records v[2] = {dev_records(streams.resource(1)), dev_records(streams.resource(2))};
  vector_model model[2] = {{{}, 1}, {{}, 2}};
  for (std::size_t step = 0; step < steps_per_seed(); ++step) {
    const vector_model before[2] = {model[0], model[1]};
    const int op = int(random.below(vector_ops));
    const bool armed = inject_failures && vector_op_is_strong(op) && random.one_in(3);
    if (armed) flaky::fail_allocation(1 + long(random.below(2)));
    std::string name;
    bool failed = false;
    try {
      name = vector_step(op, random, streams, v, model);
    } catch (const coalesce::cuda_error& e) {
      if (!injected(e)) throw;
      failed = true;
    }
    const bool reached = armed && flaky::fail_in == 0;
    flaky::disarm();
    streams.synchronize();
    INFO("seed " << seed << ", step " << step << ": " << (failed ? "a step that failed" : name));
    REQUIRE(failed == reached);
    if (failed) {
      model[0] = before[0];
      model[1] = before[1];
    }
    for (std::size_t k = 0; k < 2; ++k) check_vector(v[k], model[k], streams, k);
    REQUIRE(flaky::outstanding == held_allocations(v));
    REQUIRE(cudaGetLastError() == cudaSuccess);
  }
}

struct matrix_model {
  std::size_t rows, cols;
  std::vector<int> elements;
  int resource;
};

// Reads the matrix's rows with a plain cudaMemcpy, padding included, and checks them and its shape.
void check_matrix(const dev_matrix& a, const matrix_model& model, const three_streams& streams, std::size_t slot) {
  INFO("matrix " << slot);
  REQUIRE(a.rows() == model.rows);
  REQUIRE(a.cols() == model.cols);
  CHECK(a.resource().id == model.resource);
  CHECK(a.stream() == streams.streams[model.resource - 1].get());
  REQUIRE(a.pitch_bytes() == dev_matrix::pitch_for(a.cols()));
  if (a.empty()) return;
  std::vector<unsigned char> bytes(a.rows() * a.pitch_bytes());
  COALESCE_CUDA_CHECK(cudaMemcpy(bytes.data(), a.data(), bytes.size(), cudaMemcpyDeviceToHost));
  for (std::size_t r = 0; r < a.rows(); ++r) {
    const unsigned char* row = bytes.data() + r * a.pitch_bytes();
    for (std::size_t c = 0; c < a.cols(); ++c) {
      int x = 0;
      std::memcpy(&x, row + c * sizeof(int), sizeof(int));
      if (x != model.elements[r * model.cols + c]) FAIL("element (" << r << ", " << c << ") differs from the model");
    }
    for (std::size_t b = a.cols() * sizeof(int); b < a.pitch_bytes(); ++b)
      if (row[b] != 0) FAIL("padding byte " << b << " of row " << r << " is " << int(row[b]));
  }
}

enum matrix_op {
  construct_zeros,
  construct_value,
  construct_dense,
  copy_construct_matrix,
  copy_through_host,
  copy_assign_matrix,
  move_assign_matrix,
  move_construct_matrix,
  swap_matrices,
  resize_matrix,
  fill,
  copy_from,
  write_cells_op,
  matrix_ops
};
bool matrix_op_is_strong(int op) {
  return op == construct_zeros || op == construct_value || op == construct_dense || op == copy_construct_matrix ||
         op == copy_through_host || op == copy_assign_matrix || op == resize_matrix;
}

std::string matrix_step(int op, random_steps& random, const three_streams& streams, dev_matrix (&v)[2],
                        matrix_model (&model)[2]) {
  const std::size_t i = random.below(2), j = random.below(2);
  dev_matrix& a = v[i];
  matrix_model& m = model[i];
  switch (op) {
    case construct_zeros: {
      const auto [rows, cols] = random.shape();
      const int id = 1 + int(random.below(3));
      a = dev_matrix(rows, cols, streams.resource(id));
      m = {rows, cols, std::vector<int>(rows * cols, 0), id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " zeros";
    }
    case construct_value: {
      const auto [rows, cols] = random.shape();
      const int id = 1 + int(random.below(3)), value = random.value();
      a = dev_matrix(rows, cols, value, streams.resource(id));
      m = {rows, cols, std::vector<int>(rows * cols, value), id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " of a value";
    }
    case construct_dense: {
      const auto [rows, cols] = random.shape();
      const int id = 1 + int(random.below(3));
      const auto dense = random.values(rows * cols);
      a = dev_matrix(dense, rows, cols, streams.resource(id));
      m = {rows, cols, dense, id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " from a dense vector";
    }
    case copy_construct_matrix: {
      a = dev_matrix(v[j]);
      m = model[j];
      return "copy-construct";
    }
    case copy_through_host: {
      const int id = 1 + int(random.below(3));
      const host_matrix on_host(v[j]);  // waits for v[j]'s stream
      a = dev_matrix(on_host, streams.resource(id));
      m = model[j];
      m.resource = id;
      return "copy to a host matrix and back with a given resource";
    }
    case copy_assign_matrix: {
      a = v[j];
      m.rows = model[j].rows;
      m.cols = model[j].cols;
      m.elements = model[j].elements;
      return "copy-assign";
    }
    case move_assign_matrix: {
      if (i == j) return "nothing (a move onto itself)";
      a = std::move(v[j]);
      m = model[j];
      model[j] = {0, 0, {}, model[j].resource};
      return "move-assign";
    }
    case move_construct_matrix: {
      dev_matrix moved(std::move(a));
      check_matrix(a, {0, 0, {}, m.resource}, streams, i);  // NOLINT(bugprone-use-after-move)
      a = std::move(moved);
      return "move-construct and move back";
    }
    case swap_matrices: {
      swap(v[0], v[1]);
      std::swap(model[0], model[1]);
      return "swap";
    }
    case resize_matrix: {
      const auto [rows, cols] = random.shape();
      a.resize(rows, cols);
      std::vector<int> resized(rows * cols, 0);
      for (std::size_t r = 0; r < rows && r < m.rows; ++r)
        for (std::size_t c = 0; c < cols && c < m.cols; ++c) resized[r * cols + c] = m.elements[r * m.cols + c];
      m = {rows, cols, resized, m.resource};
      return "resize to " + std::to_string(rows) + " x " + std::to_string(cols);
    }
    case fill: {
      const int value = random.value();
      a.fill(value);
      m.elements.assign(m.elements.size(), value);
      return "fill";
    }
    case copy_from: {
      const auto fresh = random.values(m.elements.size());
      switch (random.below(4)) {
        case 0:
          if (a.rows() != v[j].rows() || a.cols() != v[j].cols()) {
            REQUIRE_THROWS_AS(a.copy_from(v[j]), std::invalid_argument);
            return "copy_from a device matrix of another shape (refused)";
          }
          a.copy_from(v[j]);
          m.elements = model[j].elements;
          return "copy_from a device matrix";
        case 1:
          a.copy_from(fresh);
          m.elements = fresh;
          return "copy_from a dense vector";
        case 2:
          a.copy_from(host_matrix(fresh, m.rows, m.cols));
          m.elements = fresh;
          return "copy_from a pageable host matrix";
        default: {
          const pinned_matrix pinned(fresh, m.rows, m.cols);
          a.copy_from_async(pinned);
          pinned_matrix back(m.rows, m.cols);
          back.copy_from_async(a);
          COALESCE_CUDA_CHECK(cudaStreamSynchronize(a.stream()));  // before the pinned matrices go
          if (back.to_vector() != fresh) FAIL("copy_from_async there and back changed the elements");
          m.elements = fresh;
          return "copy_from_async a pinned matrix and back";
        }
      }
    }
    default: {
      const auto at = random.distinct_below(m.elements.size(), 40);
      if (at.empty()) return "write no cells";
      std::vector<std::size_t> rows(at.size()), cols(at.size());
      const auto values = random.values(at.size());
      for (std::size_t k = 0; k < at.size(); ++k) {
        rows[k] = at[k] / m.cols;
        cols[k] = at[k] % m.cols;
        m.elements[at[k]] = values[k];
      }
      const ct::device_buffer<std::size_t> r(rows), c(cols);
      const ct::device_buffer<int> x(values);
      write_cells<<<blocks_for(at.size()), 256, 0, a.stream()>>>(a.view(), r.data(), c.data(), x.data(), at.size());
      ct::check_launch("write_cells");
      COALESCE_CUDA_CHECK(cudaStreamSynchronize(a.stream()));
      return "write " + std::to_string(at.size()) + " cells";
    }
  }
}

void run_matrix_steps(std::uint64_t seed, bool inject_failures) {
  random_steps random(seed);
  const three_streams streams;
  dev_matrix v[2] = {dev_matrix(streams.resource(1)), dev_matrix(streams.resource(2))};
  matrix_model model[2] = {{0, 0, {}, 1}, {0, 0, {}, 2}};
  for (std::size_t step = 0; step < steps_per_seed(); ++step) {
    const matrix_model before[2] = {model[0], model[1]};
    const int op = int(random.below(matrix_ops));
    const bool armed = inject_failures && matrix_op_is_strong(op) && random.one_in(3);
    if (armed) flaky::fail_allocation(1 + long(random.below(2)));
    std::string name;
    bool failed = false;
    try {
      name = matrix_step(op, random, streams, v, model);
    } catch (const coalesce::cuda_error& e) {
      if (!injected(e)) throw;
      failed = true;
    }
    const bool reached = armed && flaky::fail_in == 0;
    flaky::disarm();
    streams.synchronize();
    INFO("seed " << seed << ", step " << step << ": " << (failed ? "a step that failed" : name));
    REQUIRE(failed == reached);
    if (failed) {
      model[0] = before[0];
      model[1] = before[1];
    }
    for (std::size_t k = 0; k < 2; ++k) check_matrix(v[k], model[k], streams, k);
    REQUIRE(flaky::outstanding == held_allocations(v));
    REQUIRE(cudaGetLastError() == cudaSuccess);
  }
}

// ---- what the capture tests share ---------------------------------------------------------------

std::vector<Record> numbered_records(std::size_t n, std::int64_t first) {
  std::vector<Record> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = first + std::int64_t(i);
    v[i] = Record{k, float(k % 1000) / 4.0f, std::int16_t(k % 20000), double(k) / 8.0};
  }
  return v;
}
std::vector<int> numbered_ints(std::size_t n, int first) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + int(i);
  return v;
}

// Pinned host memory whose containers report `stream` as theirs (pinned_resource reports the
// legacy stream), so that a test can capture the stream a pinned container asks about.
struct pinned_on_stream : coalesce::pinned_resource {
  pinned_on_stream() = default;
  explicit pinned_on_stream(cudaStream_t s) : on(s) {}
  cudaStream_t stream() const noexcept { return on; }
  cudaStream_t on{};
};

}  // namespace

// ---- the property tests -------------------------------------------------------------------------

TEST_CASE(
    "random steps on two device soa_vectors, erase_if and copy_if among them, keep them equal to std::vector models") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::uint64_t seed : seeds) run_vector_steps(seed, false);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two device soa_vectors whose allocations fail at random leave them as the models say") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::uint64_t seed : seeds) run_vector_steps(seed, true);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two device pitched_matrices keep them equal to dense models, with zero padding") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::uint64_t seed : seeds) run_matrix_steps(seed, false);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two device pitched_matrices whose allocations fail at random leave them as the models say") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::uint64_t seed : seeds) run_matrix_steps(seed, true);
  CHECK(flaky::outstanding == 0);
}

// ---- exception safety after the allocation ------------------------------------------------------

// [no-sanitizer]: the error left pending is an API error (cudaDeviceGetAttribute of device -1),
// which the sanitizers report; no kernel runs.
TEST_CASE("a device soa_vector resize that fails after allocating keeps its size, capacity, storage and elements",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const owned_stream stream;
  const flaky on_stream(1, stream.get());
  const auto fails_after_allocating = [](const auto& call) {
    flaky::error_after_next = true;
    cudaError_t thrown = cudaSuccess;
    try {
      call();
    } catch (const coalesce::cuda_error& e) {
      thrown = e.code();
    }
    flaky::error_after_next = false;
    const cudaError_t pending = cudaGetLastError();  // collected: the test left it
    CHECK(thrown == cudaErrorInvalidDevice);
    CHECK(pending == cudaErrorInvalidDevice);
  };
  {
    // Empty: the new storage holds nothing to copy, so the fill is the first step to fail.
    dev_records empty(on_stream);
    fails_after_allocating([&] { empty.resize(100); });
    CHECK(empty.size() == 0);
    CHECK(empty.capacity() == 0);
    CHECK(empty.allocated_bytes() == 0);
    CHECK(flaky::outstanding == 0);
    // And with elements, full and with spare capacity.
    for (const std::size_t spare : {std::size_t(0), std::size_t(7)}) {
      INFO(spare << " spare");
      const auto elements = numbered_records(1000, 1);
      dev_records v(elements, on_stream);
      v.reserve(1000 + spare);
      const void* storage = v.view().column<0>();
      fails_after_allocating([&] { v.resize(2000); });
      CHECK(v.size() == 1000);
      CHECK(v.capacity() == 1000 + spare);
      CHECK(v.view().column<0>() == storage);
      CHECK(v.to_vector() == elements);
      CHECK(flaky::outstanding == 1);
    }
    // A construction leaks nothing.
    fails_after_allocating([&] { (void)dev_records(100, on_stream); });
    CHECK(flaky::outstanding == 0);
  }
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

TEST_CASE("a device pitched_matrix resize that fails after allocating keeps its shape, storage and elements",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const owned_stream stream;
  const flaky on_stream(1, stream.get());
  {
    const auto elements = numbered_ints(12, 1);
    dev_matrix m(elements, 3, 4, on_stream);
    const int* storage = m.data();
    flaky::error_after_next = true;
    REQUIRE_THROWS_AS(m.resize(5, 6), coalesce::cuda_error);
    flaky::error_after_next = false;
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(m.rows() == 3);
    CHECK(m.cols() == 4);
    CHECK(m.data() == storage);
    CHECK(m.to_vector() == elements);
    CHECK(flaky::outstanding == 1);
  }
  CHECK(flaky::outstanding == 0);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

// ---- CUDA graph capture -------------------------------------------------------------------------

TEST_CASE("while its stream is being captured, a device soa_vector refuses each call that allocates, waits or copies "
          "pageable memory, and changes nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 1000;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const auto elements = numbered_records(n, 1);
  coalesce::soa_vector<Record> v(elements, on_stream);  // capacity n: full
  coalesce::soa_vector<Record> spare(elements, on_stream);
  spare.reserve(2 * n);
  coalesce::soa_vector<Record> other(numbered_records(n, 5000), on_stream);
  host_records on_host(numbered_records(n, 9000));
  pinned_records pinned(numbered_records(n, 9000));
  const void* v_storage = v.view().column<0>();
  const void* spare_storage = spare.view().column<0>();
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  refusals refused;
  const std::string failure = capture(stream.get(), graph, [&] {
    using device_records = coalesce::soa_vector<Record>;
    refused.expect("coalesce::soa_vector(count)", [&] { (void)device_records(5, on_stream); });
    refused.expect("coalesce::soa_vector(const std::vector<T>&)", [&] { (void)device_records(elements, on_stream); });
    refused.expect("coalesce::soa_vector(const soa_vector&)", [&] { (void)device_records(v); });
    refused.expect("coalesce::soa_vector(const soa_vector<T, S, R>&)", [&] { (void)device_records(v, on_stream); });
    refused.expect("coalesce::soa_vector(const soa_vector<T, S, R>&)", [&] { (void)host_records(v); });
    refused.expect("coalesce::soa_vector(const soa_vector<T, S, R>&)",
                   [&] { (void)device_records(on_host, on_stream); });
    refused.expect("coalesce::soa_vector::operator=", [&] { other = v; });
    refused.expect("coalesce::soa_vector::reserve", [&] { v.reserve(n + 1); });
    refused.expect("coalesce::soa_vector::resize", [&] { v.resize(n + 1); });
    refused.expect("coalesce::soa_vector::resize", [&] { spare.resize(n + 1); });  // fills from the host
    refused.expect("coalesce::soa_vector::resize_for_overwrite", [&] { v.resize_for_overwrite(n + 1); });
    refused.expect("coalesce::soa_vector::assign", [&] { v.assign(on_host); });
    refused.expect("coalesce::soa_vector::assign", [&] { on_host.assign(v); });
    refused.expect("coalesce::soa_vector::assign", [&] { pinned.assign(v); });
    refused.expect("coalesce::soa_vector::to_vector", [&] { (void)v.to_vector(); });
  });
  check_refused_capture(failure, graph, refused);
  CHECK(refused.calls.size() == 15);
  CHECK(v.size() == n);
  CHECK(v.capacity() == n);
  CHECK(v.view().column<0>() == v_storage);
  CHECK(v.to_vector() == elements);
  CHECK(spare.size() == n);
  CHECK(spare.view().column<0>() == spare_storage);
  CHECK(other.to_vector() == numbered_records(n, 5000));
  CHECK(on_host.to_vector() == numbered_records(n, 9000));
  CHECK(pinned.to_vector() == numbered_records(n, 9000));
}

TEST_CASE("while its stream is being captured, a device soa_vector records assign from device and pinned vectors, "
          "assign_async, for_each and the resizes, moves and swaps that allocate nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 1000;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  coalesce::soa_vector<Record> a(numbered_records(n, 1), on_stream), b(numbered_records(n, 5000), on_stream);
  pinned_records in(numbered_records(n, 9000)), out(n);
  {
    coalesce::soa_vector<Record> scratch(3, on_stream);  // loads for_each's kernel before the capture
    coalesce::for_each(scratch, add_to_key{1});
  }
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  const std::string failure = capture(stream.get(), graph, [&] {
    a.resize(n / 2);            // smaller: nothing changes but the size
    a.resize_for_overwrite(n);  // within the capacity: nothing either
    a.reserve(n);
    a.assign(b);  // a = b
    coalesce::for_each(a, add_to_key{7});
    b.assign(in);         // b = in (pinned)
    out.assign_async(a);  // out = a
    coalesce::soa_vector<Record> moved(std::move(b));
    b.swap(moved);
  });
  INFO("the capture: " << failure);
  REQUIRE(failure.empty());
  const graph_nodes nodes = count_nodes(graph.get());
  CHECK(nodes.allocations == 0);
  CHECK(nodes.frees == 0);
  CHECK(nodes.kernels >= 1);
  CHECK(nodes.memcpys >= 3);
  CHECK(nodes.memsets == 0);
  CHECK(nodes.others == 0);

  // Replayed twice on new inputs: each replay reads b and `in` as they are then.
  owned_graph_exec replay;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(replay.out(), graph.get(), 0));
  for (std::int64_t round = 1; round <= 2; ++round) {
    const auto b_now = numbered_records(n, 20000 * round), in_now = numbered_records(n, 30000 * round);
    b.assign(host_records(b_now));
    for (std::size_t i = 0; i < n; ++i) in[i] = in_now[i];
    COALESCE_CUDA_CHECK(cudaGraphLaunch(replay.get(), stream.get()));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    auto expected_a = b_now;
    for (auto& r : expected_a) r.key += 7;
    INFO("replay " << round);
    CHECK(a.to_vector() == expected_a);
    CHECK(b.to_vector() == in_now);
    CHECK(out.to_vector() == expected_a);
  }
  CHECK(a.stream() == stream.get());
  CHECK(b.stream() == stream.get());
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("while its stream is being captured, a device pitched_matrix refuses each call that allocates, releases, "
          "waits or copies pageable memory, and changes nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 37, cols = 1001;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const auto dense = numbered_ints(rows * cols, 1);
  coalesce::pitched_matrix<int> m(dense, rows, cols, on_stream);
  coalesce::pitched_matrix<int> other(numbered_ints(rows * cols, 5000000), rows, cols, on_stream);
  host_matrix on_host(numbered_ints(rows * cols, 9000000), rows, cols);
  pinned_matrix pinned(numbered_ints(rows * cols, 9000000), rows, cols);
  const int* storage = m.data();
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  refusals refused;
  const std::string failure = capture(stream.get(), graph, [&] {
    using device_matrix = coalesce::pitched_matrix<int>;
    refused.expect("coalesce::pitched_matrix(rows, cols)", [&] { (void)device_matrix(2, 3, on_stream); });
    refused.expect("coalesce::pitched_matrix(rows, cols, value)", [&] { (void)device_matrix(2, 3, 4, on_stream); });
    refused.expect("coalesce::pitched_matrix(const std::vector<T>&, rows, cols)",
                   [&] { (void)device_matrix(numbered_ints(6, 1), 2, 3, on_stream); });
    refused.expect("coalesce::pitched_matrix(const pitched_matrix&)", [&] { (void)device_matrix(m); });
    refused.expect("coalesce::pitched_matrix(const pitched_matrix<T, S, P, R>&)", [&] { (void)host_matrix(m); });
    refused.expect("coalesce::pitched_matrix(const pitched_matrix<T, S, P, R>&)",
                   [&] { (void)device_matrix(on_host, on_stream); });
    refused.expect("coalesce::pitched_matrix::operator=", [&] { other = m; });
    refused.expect("coalesce::pitched_matrix::resize", [&] { m.resize(rows + 1, cols); });
    refused.expect("coalesce::pitched_matrix::resize", [&] { m.resize(0, 0); });  // releases the storage
    refused.expect("coalesce::pitched_matrix::fill", [&] { m.fill(3); });
    refused.expect("coalesce::pitched_matrix::copy_from", [&] { m.copy_from(numbered_ints(rows * cols, 1)); });
    refused.expect("coalesce::pitched_matrix::copy_from", [&] { m.copy_from(on_host); });
    refused.expect("coalesce::pitched_matrix::copy_from", [&] { on_host.copy_from(m); });
    refused.expect("coalesce::pitched_matrix::copy_from", [&] { pinned.copy_from(m); });
    refused.expect("coalesce::pitched_matrix::to_vector", [&] { (void)m.to_vector(); });
  });
  check_refused_capture(failure, graph, refused);
  CHECK(refused.calls.size() == 15);
  CHECK(m.rows() == rows);
  CHECK(m.cols() == cols);
  CHECK(m.data() == storage);
  CHECK(m.to_vector() == dense);
  CHECK(other.to_vector() == numbered_ints(rows * cols, 5000000));
  CHECK(on_host.to_vector() == numbered_ints(rows * cols, 9000000));
  CHECK(pinned.to_vector() == numbered_ints(rows * cols, 9000000));
}

TEST_CASE("while its stream is being captured, a device pitched_matrix records copy_from device and pinned matrices, "
          "copy_from_async, for_each, a same-shape resize and a volume's copy_from a device volume") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 37, cols = 1001;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  coalesce::pitched_matrix<int> a(rows, cols, on_stream), b(numbered_ints(rows * cols, 1), rows, cols, on_stream);
  pinned_matrix in(numbered_ints(rows * cols, 7), rows, cols), out(rows, cols);
  coalesce::pitched_volume<int> volume(3, 4, 50, on_stream), volume_in(numbered_ints(600, 11), 3, 4, 50, on_stream);
  {
    coalesce::pitched_matrix<int> scratch(2, 2, on_stream);  // loads for_each's kernel before the capture
    coalesce::for_each(scratch, add_int{1});
  }
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  const std::string failure = capture(stream.get(), graph, [&] {
    a.resize(rows, cols);  // the same shape: nothing to do
    a.copy_from(b);        // a = b
    coalesce::for_each(a, add_int{5});
    b.copy_from(in);  // b = in (pinned)
    out.copy_from_async(a);
    volume.copy_from(volume_in);
  });
  INFO("the capture: " << failure);
  REQUIRE(failure.empty());
  const graph_nodes nodes = count_nodes(graph.get());
  CHECK(nodes.allocations == 0);
  CHECK(nodes.frees == 0);
  CHECK(nodes.kernels >= 1);
  CHECK(nodes.memcpys >= 4);
  CHECK(nodes.memsets == 0);
  CHECK(nodes.others == 0);

  owned_graph_exec replay;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(replay.out(), graph.get(), 0));
  for (int round = 1; round <= 2; ++round) {
    const auto b_now = numbered_ints(rows * cols, 100000 * round), in_now = numbered_ints(rows * cols, 200000 * round);
    const auto volume_now = numbered_ints(600, 300000 * round);
    b.copy_from(b_now);
    volume_in.copy_from(volume_now);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) in(r, c) = in_now[r * cols + c];
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    COALESCE_CUDA_CHECK(cudaGraphLaunch(replay.get(), stream.get()));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    auto expected_a = b_now;
    for (int& x : expected_a) x += 5;
    INFO("replay " << round);
    CHECK(a.to_vector() == expected_a);
    CHECK(b.to_vector() == in_now);
    CHECK(out.to_vector() == expected_a);
    CHECK(volume.to_vector() == volume_now);
  }
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("while its stream is being captured, a device pitched_volume refuses construction, copies, fill, copy_from "
          "pageable memory and to_vector, naming the volume's calls, and changes nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  using volume = coalesce::pitched_volume<int>;
  using host_volume = coalesce::pitched_volume<int, host_space>;
  const auto dense = numbered_ints(600, 1);
  volume v(dense, 3, 4, 50, on_stream), other(numbered_ints(600, 5000), 3, 4, 50, on_stream);
  host_volume on_host(numbered_ints(600, 9000), 3, 4, 50);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  refusals refused;
  const std::string failure = capture(stream.get(), graph, [&] {
    refused.expect("coalesce::pitched_volume(depth, height, width)", [&] { (void)volume(2, 3, 4, on_stream); });
    refused.expect("coalesce::pitched_volume(depth, height, width, value)",
                   [&] { (void)volume(2, 3, 4, 5, on_stream); });
    refused.expect("coalesce::pitched_volume(const std::vector<T>&, depth, height, width)",
                   [&] { (void)volume(numbered_ints(24, 1), 2, 3, 4, on_stream); });
    refused.expect("coalesce::pitched_volume(const pitched_volume&)", [&] { (void)volume(v); });
    refused.expect("coalesce::pitched_volume(const pitched_volume<T, S, P, R>&)", [&] { (void)host_volume(v); });
    refused.expect("coalesce::pitched_volume::operator=", [&] { other = v; });
    refused.expect("coalesce::pitched_volume::fill", [&] { v.fill(3); });
    refused.expect("coalesce::pitched_volume::copy_from", [&] { v.copy_from(numbered_ints(600, 1)); });
    refused.expect("coalesce::pitched_volume::copy_from", [&] { v.copy_from(on_host); });
    refused.expect("coalesce::pitched_volume::copy_from", [&] { on_host.copy_from(v); });
    refused.expect("coalesce::pitched_volume::to_vector", [&] { (void)v.to_vector(); });
  });
  check_refused_capture(failure, graph, refused);
  CHECK(refused.calls.size() == 11);
  CHECK(v.to_vector() == dense);
  CHECK(other.to_vector() == numbered_ints(600, 5000));
  CHECK(on_host.to_vector() == numbered_ints(600, 9000));
}

TEST_CASE("while their stream is being captured, pinned host containers refuse growth and waits, and plain host "
          "containers make no CUDA call and work") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100;
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const pinned_on_stream pinned_here(stream.get());
  const coalesce_test::flaky_host_resource plain_here(9, stream.get());
  using pinned_vector = coalesce::soa_vector<Record, host_space, pinned_on_stream>;
  using pinned_grid = coalesce::pitched_matrix<int, host_space, line_aligned_rows, pinned_on_stream>;
  using plain_vector = coalesce::soa_vector<Record, host_space, coalesce_test::flaky_host_resource>;
  using plain_grid = coalesce::pitched_matrix<int, host_space, line_aligned_rows, coalesce_test::flaky_host_resource>;
  const coalesce::soa_vector<Record> on_device(numbered_records(n, 1), on_stream);
  const coalesce::pitched_matrix<int> grid_on_device(numbered_ints(12, 1), 3, 4, on_stream);
  pinned_vector pv(numbered_records(n, 500), pinned_here);  // capacity n: full
  pinned_grid pm(numbered_ints(12, 500), 3, 4, pinned_here);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  owned_graph graph;
  refusals refused;
  std::vector<Record> plain_elements, pinned_elements;
  std::vector<int> plain_cells, pinned_cells;
  const std::string failure = capture(stream.get(), graph, [&] {
    refused.expect("coalesce::soa_vector::reserve", [&] { pv.reserve(2 * n); });
    refused.expect("coalesce::soa_vector::push_back", [&] { pv.push_back(Record{}); });
    refused.expect("coalesce::soa_vector::assign", [&] { pv.assign(on_device); });
    refused.expect("coalesce::soa_vector(const soa_vector<T, S, R>&)",
                   [&] { (void)pinned_vector(on_device, pinned_here); });
    refused.expect("coalesce::pitched_matrix::resize", [&] { pm.resize(4, 4); });
    refused.expect("coalesce::pitched_matrix::copy_from", [&] { pm.copy_from(grid_on_device); });
    // What involves no stream works: a smaller size, host reads and writes, a host fill.
    pv.resize(n / 2);
    pv[0] = Record{-1, -2.0f, -3, -4.0};
    pinned_elements = pv.to_vector();
    pm.fill(8);
    pinned_cells = pm.to_vector();
    // Plain host containers: the same calls and more, all on the calling thread.
    plain_vector hv(n, plain_here);
    hv.reserve(2 * n);
    hv.push_back(Record{5, 6.0f, 7, 8.0});
    const plain_vector copy(hv);
    plain_elements = copy.to_vector();
    plain_grid hm(3, 4, plain_here);
    hm.resize(4, 5);
    hm.fill(2);
    plain_cells = hm.to_vector();
  });
  check_refused_capture(failure, graph, refused);
  CHECK(refused.calls.size() == 6);
  auto expected = numbered_records(n / 2, 500);
  expected[0] = Record{-1, -2.0f, -3, -4.0};
  CHECK(pinned_elements == expected);
  CHECK(pinned_cells == std::vector<int>(12, 8));
  CHECK(pv.capacity() == n);
  CHECK(pm.rows() == 3);
  std::vector<Record> plain_expected(n);
  plain_expected.push_back(Record{5, 6.0f, 7, 8.0});
  CHECK(plain_elements == plain_expected);
  CHECK(plain_cells == std::vector<int>(20, 2));
}
