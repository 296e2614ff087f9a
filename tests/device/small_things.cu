// The small things a new user reaches for first (issue 32, point 6): coalesce::fill, asynchronous
// and capturable, for views and every device container; the standard function
// objects (std::plus<> and kin) as the operation of transform_reduce and of the four scans;
// device_value<T>, which receives a reduction's result in device memory and hands it to the host
// when asked, also from a CUDA graph replayed with new data; and what for_each's f may do with
// memory other than its element (atomics into a captured histogram or a device_value, plain
// writes through a captured span). Integer data, so that every comparison is exact, against
// results the host computes itself.
#include <coalesce/algorithm.hpp>
#include <coalesce/device_value.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/scan.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;

// A particle's cell in a binning: its own index (so that f can write to the slot of a captured
// array that belongs to it), its bin, and a weight.
struct Cell {
  std::int32_t index, bin, weight;
};
COALESCE_FIELDS(Cell, index, bin, weight);

namespace {

constexpr std::int32_t bins = 61;

// n cells with random bins and weights in [-1000, 1000], drawn from the test's seed.
std::vector<Cell> random_cells(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 draw(ct::test_seed() + salt);
  std::uniform_int_distribution<std::int32_t> bin(0, bins - 1), weight(-1000, 1000);
  std::vector<Cell> cells(n);
  for (std::size_t i = 0; i < n; ++i) cells[i] = Cell{std::int32_t(i), bin(draw), weight(draw)};
  return cells;
}

// A non-blocking stream (nothing on the legacy stream orders it), destroyed last: declare it
// before the containers that free on it.
class owned_stream {
 public:
  owned_stream() { COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  ~owned_stream() { (void)cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_{};
};

// Writes `value` over what `destination` (device memory) holds, ordered on `stream`: the
// poison a replay must overwrite.
template <class T>
void poison(T* destination, T value, cudaStream_t stream) {
  COALESCE_CUDA_CHECK(cudaMemcpyAsync(destination, &value, sizeof(T), cudaMemcpyHostToDevice, stream));
}

// What a device_value's T{} is when T has default member initializers.
struct with_defaults {
  std::int32_t a = 7;
  std::int32_t b = -3;
};

// What for_each's f deposits into a device_value: how often f ran, and a sum.
struct deposit {
  unsigned long long calls;
  unsigned long long sum;
};

using owned_graph = std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)>;
using owned_graph_exec = std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)>;

std::size_t kernel_nodes(cudaGraph_t graph) {
  std::size_t count = 0;
  COALESCE_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  COALESCE_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::size_t kernels = 0;
  for (const cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    COALESCE_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    kernels += type == cudaGraphNodeTypeKernel ? 1 : 0;
  }
  return kernels;
}

}  // namespace

TEST_CASE(
    "std::plus<>, multiplies, minus and the bitwise and logical function objects are transform_reduce's op in device code") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const std::size_t n = 100003;
  std::mt19937_64 draw(ct::test_seed());
  std::uniform_int_distribution<std::int32_t> value(-1000000, 1000000);
  std::vector<std::int32_t> values(n);
  for (auto& v : values) v = value(draw);
  ct::device_buffer<std::int32_t> column(values);
  const cuda::std::span<const std::int32_t> s(column.data(), n);

  std::int64_t sum = 7;
  std::uint64_t product = 1;  // of odd numbers, wrapping: exact in any grouping
  std::uint32_t all_and = 0xffffffffu, any_or = 0, parity = 0;
  const std::int32_t target = values[n / 2];
  bool all_in_range = true, all_positive = true, any_target = false, any_beyond = false;
  for (const std::int32_t v : values) {
    sum += v;
    product *= 2 * std::uint64_t(std::int64_t(v)) + 1;
    all_and &= std::uint32_t(v) | 0x80000001u;
    any_or |= std::uint32_t(v) & 0x0f0f0f0fu;
    parity ^= std::uint32_t(v);
    all_in_range = all_in_range && v >= -1000000;
    all_positive = all_positive && v > 0;
    any_target = any_target || v == target;
    any_beyond = any_beyond || v > 1000000;
  }

  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(7), std::plus<>{}) == sum);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(7), std::plus<std::int64_t>{}) ==
        sum);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return 2 * std::uint64_t(std::int64_t(x)) + 1; }, std::uint64_t(1),
            std::multiplies<>{}) == product);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::uint32_t(x) | 0x80000001u; }, 0xffffffffu,
            std::bit_and<>{}) == all_and);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::uint32_t(x) & 0x0f0f0f0fu; }, 0u,
            std::bit_or<std::uint32_t>{}) == any_or);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return std::uint32_t(x); }, 0u, std::bit_xor<>{}) == parity);
  // Each logical operation once where it holds and once where it does not (as the host found).
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return x >= -1000000; }, true, std::logical_and<>{}) == all_in_range);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return x > 0; }, true, std::logical_and<bool>{}) == all_positive);
  CHECK(coalesce::transform_reduce(
            s, [=] __device__(std::int32_t x) { return x == target; }, false, std::logical_or<>{}) == any_target);
  CHECK(coalesce::transform_reduce(
            s, [] __device__(std::int32_t x) { return x > 1000000; }, false, std::logical_or<bool>{}) == any_beyond);
  // minus is not associative, so one element only: init - f(e0), whatever the grouping.
  CHECK(coalesce::transform_reduce(
            s.first(1), [] __device__(std::int32_t x) { return std::int64_t(x); }, std::int64_t(10), std::minus<>{}) ==
        10 - std::int64_t(values[0]));

  // A container on its stream, and a soa_view's named fields.
  const auto cells = random_cells(n, 1);
  const coalesce::soa_vector<Cell> v(cells);
  std::int64_t weights = 0;
  for (const auto& c : cells) weights += c.weight;
  CHECK(coalesce::transform_reduce(
            v, [] __device__(auto c) { return std::int64_t(c.weight); }, std::int64_t(0), std::plus<>{}) == weights);
}

TEST_CASE(
    "std::plus<>, std::multiplies and std::bit_xor are the scans' op in device code: columns, in place, f of a soa_view's elements") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const std::size_t n = 100003;
  std::mt19937_64 draw(ct::test_seed() + 2);
  std::uniform_int_distribution<std::int32_t> value(-1000, 1000);
  std::vector<std::int32_t> values(n);
  for (auto& v : values) v = value(draw);
  ct::device_buffer<std::int32_t> in(values);
  ct::device_buffer<std::int64_t> out(n);
  const cuda::std::span<const std::int32_t> column(in.data(), n);
  const cuda::std::span<std::int64_t> sums(out.data(), n);

  out.poison();
  coalesce::inclusive_scan(column, sums, std::plus<>{});
  ct::check_sync();
  std::vector<std::int64_t> got = out.download();
  std::int64_t running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    running += values[i];
    if (got[i] != running) FAIL("inclusive sum " << i << ": " << got[i] << ", host " << running);
  }

  out.poison();
  coalesce::exclusive_scan(column, sums, 5, std::plus<std::int64_t>{});
  ct::check_sync();
  got = out.download();
  running = 5;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] != running) FAIL("exclusive sum " << i << ": " << got[i] << ", host " << running);
    running += values[i];
  }

  // Products of odd numbers wrap exactly in any grouping; in place.
  std::vector<std::uint64_t> odd(n);
  for (std::size_t i = 0; i < n; ++i) odd[i] = 2 * std::uint64_t(std::int64_t(values[i]) + 1000) + 1;
  ct::device_buffer<std::uint64_t> products(odd);
  const cuda::std::span<std::uint64_t> both(products.data(), n);
  coalesce::inclusive_scan(both, both, std::multiplies<>{});
  ct::check_sync();
  const auto scanned = products.download();
  std::uint64_t product = 1;
  for (std::size_t i = 0; i < n; ++i) {
    product *= odd[i];
    if (scanned[i] != product) FAIL("running product " << i << ": " << scanned[i] << ", host " << product);
  }

  // f of a soa_view's elements.
  const auto cells = random_cells(n, 3);
  const coalesce::soa_vector<Cell> v(cells);
  out.poison();
  coalesce::transform_inclusive_scan(
      v.view(), sums, [] __device__(auto c) { return std::int64_t(c.weight); }, std::plus<>{});
  ct::device_buffer<std::uint32_t> parities(n);
  parities.poison();
  const cuda::std::span<std::uint32_t> parity_span(parities.data(), n);
  coalesce::transform_exclusive_scan(
      v.view(), parity_span, [] __device__(auto c) { return std::uint32_t(c.bin) << 3; }, 0x55u, std::bit_xor<>{});
  ct::check_sync();
  got = out.download();
  const auto parity = parities.download();
  running = 0;
  std::uint32_t bits = 0x55u;
  for (std::size_t i = 0; i < n; ++i) {
    running += cells[i].weight;
    if (got[i] != running) FAIL("transform inclusive sum " << i << ": " << got[i] << ", host " << running);
    if (parity[i] != bits) FAIL("transform exclusive xor " << i << ": " << parity[i] << ", host " << bits);
    bits ^= std::uint32_t(cells[i].bin) << 3;
  }
}

TEST_CASE(
    "device_value holds its initial value (T{} by default) on its resource's stream; get() reads what the device wrote; a move leaves the source without one") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  coalesce::device_value<std::int64_t> a(-42, on_stream);
  CHECK(a.stream() == stream.get());
  REQUIRE(a.data() != nullptr);
  CHECK(a.get() == -42);

  const coalesce::device_value<std::int64_t> zero;
  CHECK(zero.stream() == cudaStream_t{});
  CHECK(zero.get() == 0);
  const coalesce::device_value<with_defaults> defaults(on_stream);
  CHECK(defaults.get().a == 7);
  CHECK(defaults.get().b == -3);

  // A kernel on the value's (non-blocking) stream writes it; get() waits for that stream.
  std::int64_t* const slot = a.data();
  coalesce::for_each_index(
      cuda::std::span<std::int64_t>(slot, 1), [=] __device__(std::size_t i) { slot[i] = 123456789012; }, a.stream());
  CHECK(a.get() == 123456789012);

  coalesce::device_value<std::int64_t> b(std::move(a));
  CHECK(b.data() == slot);
  CHECK(b.stream() == stream.get());
  CHECK(b.get() == 123456789012);
  CHECK(a.data() == nullptr);
  CHECK(a.stream() == stream.get());
  CHECK_THROWS_AS(a.get(), std::logic_error);
  a = std::move(b);
  CHECK(a.data() == slot);
  CHECK(a.get() == 123456789012);
  CHECK(b.data() == nullptr);
}

TEST_CASE("transform_reduce into a device_value runs on its stream and waits for nothing; get() reads the result") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const std::size_t n = 100003;
  const auto cells = random_cells(n, 4);
  const coalesce::soa_vector<Cell> v(cells, on_stream);
  coalesce::device_value<std::int64_t> total(std::int64_t(0x5a5a5a5a5a5a5a5a), on_stream);
  // init takes the value's type: an int here.
  coalesce::transform_reduce(
      v.view(), [] __device__(auto c) { return std::int64_t(c.weight) * (c.bin + 1); }, -5, std::plus<>{}, total);
  std::int64_t expected = -5;
  for (const auto& c : cells) expected += std::int64_t(c.weight) * (c.bin + 1);
  CHECK(total.get() == expected);
}

TEST_CASE(
    "a reduction into a device_value captured once replays ten times on new data, get() reading each replay's result") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const std::size_t n = 100003;
  coalesce::soa_vector<Cell> cells(random_cells(n, 5), on_stream);
  coalesce::device_value<std::int64_t> total(std::int64_t(0), on_stream);
  const auto weigh = [] __device__(auto c) { return std::int64_t(c.weight) * (c.bin + 1); };

  cudaGraph_t captured = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  try {
    coalesce::transform_reduce(cells.view(), weigh, std::int64_t(-5), std::plus<>{}, total);
    // What a capture cannot record refuses before it does anything, and the capture goes on.
    CHECK_THROWS_AS(total.get(), std::logic_error);
    CHECK_THROWS_AS(coalesce::device_value<std::int64_t>(0, on_stream), std::logic_error);
  } catch (...) {
    (void)cudaStreamEndCapture(stream.get(), &captured);
    if (captured != nullptr) (void)cudaGraphDestroy(captured);
    throw;
  }
  COALESCE_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &captured));
  const owned_graph graph(captured, &cudaGraphDestroy);
  CHECK(kernel_nodes(graph.get()) >= 1);
  cudaGraphExec_t instantiated = nullptr;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(&instantiated, graph.get(), 0));
  const owned_graph_exec exec(instantiated, &cudaGraphExecDestroy);

  for (int replay = 0; replay < 10; ++replay) {
    const auto data = random_cells(n, 100 + std::uint64_t(replay));
    cells.assign(coalesce::soa_vector<Cell, coalesce::host_space>(data));  // in place: the graph reads these columns
    std::int64_t expected = -5;
    for (const auto& c : data) expected += std::int64_t(c.weight) * (c.bin + 1);
    poison(total.data(), std::int64_t(0x5a5a5a5a5a5a5a5a), stream.get());  // the replay must overwrite it
    COALESCE_CUDA_CHECK(cudaGraphLaunch(exec.get(), stream.get()));
    const std::int64_t got = total.get();
    if (got != expected) FAIL("replay " << replay << ": " << got << ", host " << expected);
  }
}

TEST_CASE(
    "for_each's f may add atomically into a captured histogram and write its own slot of a captured span, besides its element") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const std::size_t n = 100003;
  const auto cells = random_cells(n, 6);
  coalesce::soa_vector<Cell> v(cells);
  ct::device_buffer<unsigned> counts(std::vector<unsigned>(bins, 0u));
  ct::device_buffer<std::int32_t> slots(n);
  slots.poison();
  const cuda::std::span<unsigned> histogram(counts.data(), bins);
  const cuda::std::span<std::int32_t> tripled(slots.data(), n);
  coalesce::for_each(v, [=] __device__(auto c) {
    atomicAdd(&histogram[c.bin], 1u);  // many elements, one bin: an atomic
    tripled[c.index] = 3 * c.weight;   // one element, one slot: a plain store
    c.weight += 1;                     // and its own element, as always
  });
  ct::check_sync();

  std::vector<unsigned> expected(bins, 0u);
  for (const auto& c : cells) ++expected[std::size_t(c.bin)];
  CHECK(counts.download() == expected);
  const auto slot_values = slots.download();
  const auto after = v.to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    if (slot_values[i] != 3 * cells[i].weight)
      FAIL("slot " << i << ": " << slot_values[i] << ", host " << 3 * cells[i].weight);
    if (after[i].weight != cells[i].weight + 1 || after[i].bin != cells[i].bin || after[i].index != cells[i].index)
      FAIL("element " << i << " after f: weight " << after[i].weight << ", host " << cells[i].weight + 1);
  }
}

TEST_CASE(
    "for_each over a pitched_matrix calls f once per element, never on the rows' padding: atomics into a device_value count them") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  INFO("seed " << ct::test_seed());
  const std::size_t rows = 301, cols = 333;  // 1332-byte rows, pitched to 1408: padding in every row
  std::mt19937_64 draw(ct::test_seed() + 7);
  std::uniform_int_distribution<std::int32_t> value(-1000, 1000);
  std::vector<std::int32_t> dense(rows * cols);
  for (auto& x : dense) x = value(draw);
  coalesce::pitched_matrix<std::int32_t> m(dense, rows, cols);
  REQUIRE(m.pitch_bytes() > cols * sizeof(std::int32_t));
  coalesce::device_value<deposit> into(deposit{0, 0});
  deposit* const d = into.data();
  // +1000: a padding zero that reached f would add 1000, and a call.
  coalesce::for_each(m, [=] __device__(const std::int32_t& x) {
    atomicAdd(&d->calls, 1ull);
    atomicAdd(&d->sum, static_cast<unsigned long long>(x + 1000));
  });
  unsigned long long sum = 0;
  for (const std::int32_t x : dense) sum += static_cast<unsigned long long>(x + 1000);
  const deposit got = into.get();  // on stream 0, the matrix's
  CHECK(got.calls == rows * cols);
  CHECK(got.sum == sum);
  CHECK(m.to_vector() == dense);  // f only read its element: nothing was stored
}

TEST_CASE(
    "coalesce::fill sets every element of a soa_vector, a pitched_matrix, a volume and a subspan, and nothing else") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(100003)}) {
    coalesce::soa_vector<Cell> cells(random_cells(n, 11));
    coalesce::fill(cells, Cell{-3, 17, 41});
    const auto got = cells.to_vector();
    const auto wrong = std::count_if(got.begin(), got.end(),
                                     [](const Cell& c) { return c.index != -3 || c.bin != 17 || c.weight != 41; });
    INFO("n = " << n);
    CHECK(wrong == 0);
  }
  // A matrix whose rows end inside a 128-byte line (padding after each), and a volume.
  coalesce::pitched_matrix<std::int32_t> m(37, 1001);
  coalesce::fill(m, std::int32_t(-7));
  auto values = m.to_vector();
  CHECK(std::count(values.begin(), values.end(), -7) == std::ptrdiff_t(values.size()));
  coalesce::fill(m.view().block(3, 5, 10, 20), std::int32_t(9));  // a block: only it changes
  values = m.to_vector();
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < 37; ++r)
    for (std::size_t c = 0; c < 1001; ++c) {
      const bool inside = r >= 3 && r < 13 && c >= 5 && c < 25;
      wrong += values[r * 1001 + c] != (inside ? 9 : -7);
    }
  CHECK(wrong == 0);
  coalesce::pitched_volume<float> volume(3, 9, 130);
  coalesce::fill(volume, 2.5f);
  const auto cube = volume.to_vector();
  CHECK(std::count(cube.begin(), cube.end(), 2.5f) == std::ptrdiff_t(cube.size()));
  // Zero is fill with T{}; a subspan leaves the elements around it alone.
  std::vector<std::int32_t> ones(1000, 1);
  ct::device_buffer<std::int32_t> buffer(ones);
  coalesce::fill(cuda::std::span<std::int32_t>(buffer.data() + 1, 997), std::int32_t{});
  ct::check_sync("filling a subspan");
  const auto around = buffer.download();
  CHECK(around[0] == 1);
  CHECK(around[998] == 1);
  CHECK(around[999] == 1);
  CHECK(std::count(around.begin() + 1, around.begin() + 998, 0) == 997);
}

// A struct with 3 bytes of padding after its char.
struct padded {
  char tag;
  float value;
};

TEST_CASE("coalesce::zero clears every byte of a soa_vector, a matrix of padded structs and a span, and nothing else") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  coalesce::soa_vector<Cell> cells(random_cells(100003, 12));
  coalesce::zero(cells);
  const auto got = cells.to_vector();
  CHECK(std::count_if(got.begin(), got.end(),
                      [](const Cell& c) { return c.index != 0 || c.bin != 0 || c.weight != 0; }) == 0);
  // A struct with padding, 3 bytes after its char: zero clears those too.
  static_assert(sizeof(padded) == 8);
  std::vector<padded> marked(33 * 45);
  std::memset(static_cast<void*>(marked.data()), 0x5a, marked.size() * sizeof(padded));
  coalesce::pitched_matrix<padded> m(marked, 33, 45);
  coalesce::zero(m);
  const auto bytes = m.to_vector();
  std::vector<unsigned char> raw(bytes.size() * sizeof(padded));
  std::memcpy(raw.data(), bytes.data(), raw.size());
  CHECK(std::count(raw.begin(), raw.end(), 0) == std::ptrdiff_t(raw.size()));
  std::vector<float> ones(100, 1.0f);
  ct::device_buffer<float> buffer(ones);
  coalesce::zero(cuda::std::span<float>(buffer.data() + 2, 90));
  ct::check_sync("zeroing a subspan");
  const auto around = buffer.download();
  CHECK(std::count(around.begin(), around.end(), 0.0f) == 90);
  CHECK(around[1] == 1.0f);
  CHECK(around[92] == 1.0f);
}

TEST_CASE(
    "coalesce::fill captured into a graph sets the vector at each of ten replays, between which the program changes it") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const owned_stream stream;
  const coalesce::pool_resource on_stream(stream.get());
  const std::size_t n = 100003;
  coalesce::soa_vector<Cell> cells(random_cells(n, 12), on_stream);
  cudaGraph_t captured = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  try {
    coalesce::fill(cells, Cell{1, 2, 3});
  } catch (...) {
    (void)cudaStreamEndCapture(stream.get(), &captured);
    if (captured != nullptr) (void)cudaGraphDestroy(captured);
    throw;
  }
  COALESCE_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &captured));
  const owned_graph graph(captured, &cudaGraphDestroy);
  CHECK(kernel_nodes(graph.get()) == 1);
  cudaGraphExec_t instantiated = nullptr;
  COALESCE_CUDA_CHECK(cudaGraphInstantiate(&instantiated, graph.get(), 0));
  const owned_graph_exec exec(instantiated, &cudaGraphExecDestroy);
  for (int replay = 0; replay < 10; ++replay) {
    cells.assign(coalesce::soa_vector<Cell, coalesce::host_space>(random_cells(n, 200 + std::uint64_t(replay))));
    COALESCE_CUDA_CHECK(cudaGraphLaunch(exec.get(), stream.get()));
    const auto got = cells.to_vector();
    const auto wrong = std::count_if(got.begin(), got.end(),
                                     [](const Cell& c) { return c.index != 1 || c.bin != 2 || c.weight != 3; });
    if (wrong != 0) FAIL("replay " << replay << ": " << wrong << " elements not filled");
  }
}
