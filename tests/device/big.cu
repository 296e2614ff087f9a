// coalesce's algorithms past the 32-bit sizes (label big), where other SoA libraries
// have corrupted data: for_each, transform and transform_reduce over 2^32 + 2^20 + 3 elements of
// three columns, a bool among them (26 GB); erase_if over as many; gather by a scattered
// permutation of 2^31 + 2^20 + 3 elements (through records) and with 64-bit indices above 2^32;
// sort_by_key of 2^32 - 1 elements (32-bit indices at their limit), exactly 2^32 and
// 2^32 + 2^20 + 3 (64-bit indices); and stencils over a matrix of more than 2^31 floats (32-bit
// positions) and over rows of more than 2^31 bytes (64-bit positions). Every element is checked
// on the device against the value worked out from its index (a kernel counts the mismatches and
// one copy brings the count back); reductions against an exact integer sum. Sizes and times are
// printed, for information: nothing is asserted on a time.
//
// A case that needs more device memory than is free skips, saying how much (the sorts of 2^32
// need 113 GiB; the others 13 to 81). Under compute-sanitizer every case runs at about 2^16
// elements instead of skipping: memcheck over tens of GB would take hours, and the small run
// still launches every kernel and check, which is what the sanitizers look at.
#include <coalesce/algorithm.hpp>
#include <coalesce/compact.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "coalesce_device_test.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

namespace {

constexpr std::size_t two_to_31 = std::size_t(1) << 31;
constexpr std::size_t two_to_32 = std::size_t(1) << 32;
// Past a boundary by more than any block or tile (2048 elements), and odd.
constexpr std::size_t beyond = (std::size_t(1) << 20) + 3;

// A case's size: `big` on the GPU, `small` under compute-sanitizer.
std::size_t sized(std::size_t big, std::size_t small) { return ct::small_problems() ? small : big; }

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(std::size_t(1) << 30));
  return text;
}

// Beyond what a case's own buffers take: CUB's scratch (a radix sort's histograms and look-back
// state are megabytes), the checks' counters, each allocation's rounding.
constexpr std::size_t headroom = std::size_t(1) << 30;

// Why a case that needs `bytes` of device memory cannot run here, or nothing. coalesce's pool
// keeps what earlier cases freed (cudaMemGetInfo counts it as used), so it is handed back first.
std::optional<std::string> short_of_memory(std::size_t bytes) {
  ct::check_sync("before asking for free memory");
  coalesce::trim_pool();
  std::size_t free = 0, total = 0;
  COALESCE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (free >= bytes + headroom) return std::nullopt;
  return "needs " + gib(bytes + headroom) + " of free device memory; " + gib(free) + " of " + gib(total) + " are free";
}

// Prints how long the device took for what was enqueued since the last lap, having waited for it
// (so that a failure is reported as that step's).
class stopwatch {
 public:
  stopwatch() : start_(now()) {}
  void lap(const std::string& what) {
    ct::check_sync(what.c_str());
    const auto end = now();
    std::printf("  %-78s %9.1f ms\n", what.c_str(), std::chrono::duration<double, std::milli>(end - start_).count());
    std::fflush(stdout);
    start_ = end;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  std::chrono::steady_clock::time_point start_;
};

// --- the test's own kernels: grid-stride loops with 64-bit indices, independent of coalesce's ---

constexpr unsigned check_threads = 256;
constexpr unsigned check_blocks = 4096;  // 2^20 threads, some 2^12 elements each at 2^32

template <class F>
__global__ void __launch_bounds__(check_threads) at_every_index_kernel(std::size_t n, F f) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    f(i);
}

// f(i) for every i < n, on stream 0 (where the containers of this test run).
template <class F>
void at_every_index(std::size_t n, const F& f, const char* what) {
  at_every_index_kernel<F><<<check_blocks, check_threads>>>(n, f);
  ct::check_launch(what);
}

// The block's sum of `sum` and least of `least`, in thread 0: a warp's by shuffles, then the warps'.
__device__ void block_totals(unsigned long long& sum, unsigned long long& least) {
  for (int d = 16; d > 0; d /= 2) {
    sum += __shfl_down_sync(0xffffffffu, sum, d);
    const unsigned long long other = __shfl_down_sync(0xffffffffu, least, d);
    least = other < least ? other : least;
  }
  __shared__ unsigned long long sums[check_threads / 32], leasts[check_threads / 32];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sums[warp] = sum;
    leasts[warp] = least;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sum = 0;
    least = ~0ull;
    for (unsigned w = 0; w < check_threads / 32; ++w) {
      sum += sums[w];
      least = leasts[w] < least ? leasts[w] : least;
    }
  }
}

// result[0] += how many i < n have ok(i) false, result[1] = the least of them (one atomic each a block).
template <class Ok>
__global__ void __launch_bounds__(check_threads)
    count_mismatches_kernel(std::size_t n, Ok ok, unsigned long long* result) {
  unsigned long long bad = 0, first = ~0ull;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (!ok(i)) {
      if (bad == 0) first = i;
      ++bad;
    }
  block_totals(bad, first);
  if (threadIdx.x == 0 && bad != 0) {
    atomicAdd(&result[0], bad);
    atomicMin(&result[1], first);
  }
}

// *total += f(0) + ... + f(n - 1), modulo 2^64: exact, whatever the order.
template <class F>
__global__ void __launch_bounds__(check_threads) sum_kernel(std::size_t n, F f, unsigned long long* total) {
  unsigned long long sum = 0, unused = ~0ull;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    sum += f(i);
  block_totals(sum, unused);
  if (threadIdx.x == 0) atomicAdd(total, sum);
}

// Checks ok(i) for every i < n on the device (a lap of `watch`); one copy brings the count of
// failures back.
template <class Ok>
void check_every_element(stopwatch& watch, std::size_t n, const Ok& ok, const std::string& what) {
  ct::device_buffer<unsigned long long> result(std::vector<unsigned long long>{0ull, ~0ull});
  count_mismatches_kernel<Ok><<<check_blocks, check_threads>>>(n, ok, result.data());
  ct::check_launch(what.c_str());
  watch.lap("checked " + what);
  const auto got = result.download();
  INFO(what << ": " << got[0] << " of " << n << " elements wrong, the first at index " << got[1]);
  CHECK(got[0] == 0);
}

// f(0) + ... + f(n - 1) modulo 2^64, computed by the test's own kernel.
template <class F>
unsigned long long reference_sum(std::size_t n, const F& f) {
  ct::device_buffer<unsigned long long> total(std::vector<unsigned long long>{0ull});
  sum_kernel<F><<<check_blocks, check_threads>>>(n, f, total.data());
  ct::check_launch("the reference sum");
  ct::check_sync("the reference sum");
  return total.download()[0];
}

// splitmix64's finalizer: the values of element i, fresh each run through the seed.
__host__ __device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// --- the elements ----------------------------------------------------------------------------------

// Three columns of 4, 1 and 1 bytes, a bool among them (the known report: bool members corrupted
// above about 80 M particles).
struct cell {
  std::uint32_t value;
  std::uint8_t tag;
  bool alive;
};
COALESCE_FIELDS(cell, value, tag, alive);

// Element i of a cell vector as filled: alive for two indices in three.
struct cell_at {
  std::uint64_t seed;
  __host__ __device__ cell operator()(std::size_t i) const {
    const std::uint64_t h = mix(i ^ seed);
    return cell{std::uint32_t(h), std::uint8_t(h >> 32), i % 3 != 0};
  }
};

// Writes cell_at(i) into every column at i.
struct fill_cells {
  coalesce::soa_view<cell> v;
  cell_at at;
  __device__ void operator()(std::size_t i) const {
    const cell c = at(i);
    v.column<&cell::value>()[i] = c.value;
    v.column<&cell::tag>()[i] = c.tag;
    v.column<&cell::alive>()[i] = c.alive;
  }
};

// Whether element k of `v` is `expected`, the bool compared as its byte (0 or 1, nothing else).
__device__ bool same_cell(const coalesce::soa_view<const cell>& v, std::size_t k, const cell& expected) {
  const auto* alive_bytes = reinterpret_cast<const std::uint8_t*>(v.column<&cell::alive>());
  return v.column<&cell::value>()[k] == expected.value && v.column<&cell::tag>()[k] == expected.tag &&
         alive_bytes[k] == (expected.alive ? 1u : 0u);
}

// Makes every column of `v` 0xFF bytes: an element the algorithm does not write reads back as a
// value no check expects (and as a bool byte that is neither 0 nor 1).
void poison(const coalesce::soa_view<cell>& v) {
  COALESCE_CUDA_CHECK(cudaMemset(v.column<&cell::value>(), 0xFF, v.size() * sizeof(std::uint32_t)));
  COALESCE_CUDA_CHECK(cudaMemset(v.column<&cell::tag>(), 0xFF, v.size()));
  COALESCE_CUDA_CHECK(cudaMemset(v.column<&cell::alive>(), 0xFF, v.size()));
}

// What the for_each below makes of element i.
struct updated_cell_at {
  cell_at before;
  __host__ __device__ cell operator()(std::size_t i) const {
    const cell c = before(i);
    return cell{c.value * 3u + 1u, std::uint8_t(c.tag ^ 0x5Au), !c.alive};
  }
};
struct update_cell {
  __device__ void operator()(coalesce::soa_reference_t<cell> c) const {
    c.value = c.value * 3u + 1u;
    c.tag = std::uint8_t(c.tag ^ 0x5Au);
    c.alive = !c.alive;
  }
};

struct cell_updated {
  coalesce::soa_view<const cell> v;
  updated_cell_at at;
  __device__ bool operator()(std::size_t i) const { return same_cell(v, i, at(i)); }
};

// What the transform writes: every column in one word.
struct cell_word {
  template <class C>
  __host__ __device__ std::uint32_t operator()(const C& c) const {
    const std::uint32_t value = c.value, tag = c.tag;
    const bool alive = c.alive;
    return value ^ (tag << 24) ^ (alive ? 1u : 0u);
  }
};
struct word_of_updated_cell {
  const std::uint32_t* words;
  updated_cell_at at;
  __device__ bool operator()(std::size_t i) const { return words[i] == cell_word{}(at(i)); }
};

// What the reductions fold: each column in its own bits (a sum modulo 2^64), a one, a bool.
struct cell_checksum {
  template <class C>
  __host__ __device__ unsigned long long operator()(const C& c) const {
    const std::uint32_t value = c.value, tag = c.tag;
    const bool alive = c.alive;
    return (static_cast<unsigned long long>(value) << 16) | (static_cast<unsigned long long>(tag) << 1) |
           (alive ? 1ull : 0ull);
  }
};
struct one {
  template <class C>
  __host__ __device__ unsigned long long operator()(const C&) const {
    return 1ull;
  }
};
struct is_alive {
  template <class C>
  __host__ __device__ unsigned long long operator()(const C& c) const {
    const bool alive = c.alive;
    return alive ? 1ull : 0ull;
  }
};
struct plus {
  __host__ __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a + b; }
};
struct checksum_of_updated_cell {
  updated_cell_at at;
  __device__ unsigned long long operator()(std::size_t i) const { return cell_checksum{}(at(i)); }
};

struct dead {
  template <class C>
  __host__ __device__ bool operator()(const C& c) const {
    const bool alive = c.alive;
    return !alive;
  }
};
// erase_if(dead) keeps i = 1, 2, 4, 5, 7, ...: the k-th kept is 3 (k / 2) + 1 + k % 2.
struct kept_cell {
  coalesce::soa_view<const cell> v;
  cell_at at;
  __device__ bool operator()(std::size_t k) const { return same_cell(v, k, at(3 * (k / 2) + 1 + k % 2)); }
};

// The permutations the gathers read: (a j + b) mod n, a prime that does not divide n (so every
// index is hit once), each step a jump of a elements: scattered, a sector per element.
struct scattered_index {
  std::size_t n;
  std::size_t b;
  static constexpr std::uint64_t a = 2654435761u;  // a prime below 2^31.31: a j < 2^64 for every j < 2^32 + 2^20 + 3
  __host__ __device__ std::size_t operator()(std::size_t j) const { return std::size_t((a * j + b) % n); }
};
template <class Index>
struct fill_indices {
  Index* indices;
  scattered_index at;
  __device__ void operator()(std::size_t j) const { indices[j] = static_cast<Index>(at(j)); }
};
struct gathered_cell {
  coalesce::soa_view<const cell> v;
  scattered_index index;
  cell_at at;
  __device__ bool operator()(std::size_t j) const { return same_cell(v, j, at(index(j))); }
};

// One 4-byte column: gather's column walk (records save nothing for one column).
struct word_cell {
  std::uint32_t value;
};
COALESCE_FIELDS(word_cell, value);
struct word_at {
  std::uint64_t seed;
  __host__ __device__ std::uint32_t operator()(std::size_t i) const { return std::uint32_t(mix(i ^ seed)); }
};
struct fill_words {
  std::uint32_t* column;
  word_at at;
  __device__ void operator()(std::size_t i) const { column[i] = at(i); }
};
struct gathered_word {
  const std::uint32_t* column;
  scattered_index index;
  word_at at;
  __device__ bool operator()(std::size_t j) const { return column[j] == at(index(j)); }
};

// One 2-byte column: the sort key (the index's low byte, i & 255) under a tag (high byte). One
// column, so that the sort's gather reads the column and not records, which would take 16 bytes
// an element more: 64 GiB at 2^32. The tag is the XOR of the bytes of i >> 8, the element's rank
// among those of its key, salted: an element from a rank that differs in any one bit (a lost bit
// 31 or 32 of an index among them) carries another tag.
struct keyed {
  std::uint16_t word;
};
COALESCE_FIELDS(keyed, word);
struct keyed_at {
  std::uint8_t salt;
  __host__ __device__ std::uint16_t operator()(std::size_t i) const {
    const std::size_t rank = i >> 8;
    const unsigned tag = unsigned((rank ^ (rank >> 8) ^ (rank >> 16) ^ (rank >> 24)) & 0xFFu) ^ salt;
    return std::uint16_t(tag << 8 | unsigned(i & 0xFFu));
  }
};
struct fill_keyed {
  std::uint16_t* column;
  keyed_at at;
  __device__ void operator()(std::size_t i) const { column[i] = at(i); }
};
struct low_byte {
  template <class E>
  __host__ __device__ std::uint32_t operator()(const E& e) const {
    const std::uint16_t word = e.word;
    return word & 0xFFu;
  }
};
// Position j of n elements stably sorted by i & 255 holds element r * 256 + k, where k is j's key
// and r its rank among the elements of key k: keys below n % 256 have n / 256 + 1 elements, the
// others n / 256, in key order.
struct sorted_keyed {
  const std::uint16_t* column;
  std::size_t n;
  keyed_at at;
  __device__ bool operator()(std::size_t j) const {
    const std::size_t q = n / 256, rem = n % 256, longer = rem * (q + 1);
    const std::size_t key = j < longer ? j / (q + 1) : rem + (j - longer) / q;
    const std::size_t rank = j < longer ? j % (q + 1) : (j - longer) % q;
    return column[j] == at(rank * 256 + key);
  }
};

// --- stencils: small integers, so that float sums are exact --------------------------------------

struct matrix_value {  // input (r, c) of the float stencil: 0 to 15
  std::uint64_t seed;
  __host__ __device__ float operator()(std::size_t r, std::size_t c) const {
    return float(mix((r << 32 | c) ^ seed) & 15u);
  }
};
struct fill_matrix {
  coalesce::pitched_view<float> m;
  matrix_value at;
  __device__ void operator()(std::size_t i) const { m(i / m.cols(), i % m.cols()) = at(i / m.cols(), i % m.cols()); }
};
struct poison_matrix {
  coalesce::pitched_view<float> m;
  __device__ void operator()(std::size_t i) const {
    m(i / m.cols(), i % m.cols()) = __int_as_float(0x7fffffff);
  }  // NaN
};
struct laplacian {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1) - 4.0f * n(0, 0);
  }
};
// The 5-point Laplacian under clamp, from the input's definition.
struct clamped_laplacian {
  coalesce::pitched_view<const float> out;
  matrix_value at;
  __device__ bool operator()(std::size_t i) const {
    const std::size_t rows = out.rows(), cols = out.cols(), r = i / cols, c = i % cols;
    const std::size_t up = r == 0 ? 0 : r - 1, down = r + 1 == rows ? r : r + 1;
    const std::size_t left = c == 0 ? 0 : c - 1, right = c + 1 == cols ? c : c + 1;
    const float expected = at(up, c) + at(down, c) + at(r, left) + at(r, right) - 4.0f * at(r, c);
    return out(r, c) == expected;
  }
};

struct byte_value {  // input (r, c) of the byte stencil: 0 to 49, so that a sum of five is below 255
  std::uint64_t seed;
  std::size_t cols;
  __host__ __device__ unsigned operator()(std::size_t r, std::size_t c) const {
    return unsigned(mix((r * cols + c) ^ seed) % 50u);
  }
};
struct fill_bytes {
  coalesce::pitched_view<std::uint8_t> m;
  byte_value at;
  __device__ void operator()(std::size_t i) const {
    m(i / m.cols(), i % m.cols()) = std::uint8_t(at(i / m.cols(), i % m.cols()));
  }
};
struct five_point_sum {
  template <class N>
  __host__ __device__ unsigned operator()(const N& n) const {
    return unsigned(n(-1, 0)) + unsigned(n(1, 0)) + unsigned(n(0, -1)) + unsigned(n(0, 1)) + unsigned(n(0, 0));
  }
};
// The 5-point sum under periodic, from the input's definition.
struct periodic_sum {
  coalesce::pitched_view<const std::uint8_t> out;
  byte_value at;
  __device__ bool operator()(std::size_t i) const {
    const std::size_t rows = out.rows(), cols = out.cols(), r = i / cols, c = i % cols;
    const std::size_t up = r == 0 ? rows - 1 : r - 1, down = r + 1 == rows ? 0 : r + 1;
    const std::size_t left = c == 0 ? cols - 1 : c - 1, right = c + 1 == cols ? 0 : c + 1;
    const unsigned expected = at(up, c) + at(down, c) + at(r, left) + at(r, right) + at(r, c);
    return out(r, c) == expected;
  }
};

// The sort cases: a vector of n keyed elements, sorted by its low byte, every position checked.
// Bytes: the column and its sorted copy (2 + 2), the keys twice (8) and the indices twice.
std::size_t sort_bytes(std::size_t n) {
  const std::size_t index_bytes = n <= 0xffffffffu ? 4 : 8;  // 32-bit indices while the count fits 32 bits
  return n * (2 + 2 + 8 + 2 * index_bytes);
}

void check_sort(std::size_t n) {
  const auto salt = std::uint8_t(ct::test_seed());
  INFO("seed " << ct::test_seed() << ", " << n << " elements");
  std::printf("sort_by_key of %zu 2-byte elements by their low byte (%s with its scratch):\n", n,
              gib(sort_bytes(n)).c_str());
  coalesce::soa_vector<keyed> v;
  v.resize_for_overwrite(n);
  stopwatch watch;
  at_every_index(n, fill_keyed{v.view().column<&keyed::word>(), keyed_at{salt}}, "filling the keys");
  watch.lap("filled");
  coalesce::sort_by_key(v, low_byte{}, 8);
  watch.lap("sort_by_key on the low byte (end_bit 8)");
  REQUIRE(v.size() == n);
  check_every_element(watch, n, sorted_keyed{v.const_view().column<&keyed::word>(), n, keyed_at{salt}},
                      "every position holds the element a stable sort puts there");
}

}  // namespace

TEST_CASE("for_each, transform and transform_reduce reach every one of 2^32 + 2^20 + 3 elements of three columns",
          "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32 + beyond, 65539);
  const std::size_t bytes =
      n * (sizeof(std::uint32_t) + 2) + n * sizeof(std::uint32_t);  // the columns, transform's output
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed << ", " << n << " elements");
  std::printf("for_each, transform, transform_reduce over %zu elements of 4 + 1 + 1 bytes (%s):\n", n,
              gib(bytes).c_str());

  coalesce::soa_vector<cell> v;
  v.resize_for_overwrite(n);
  stopwatch watch;
  at_every_index(n, fill_cells{v.view(), cell_at{seed}}, "filling the cells");
  watch.lap("filled");
  coalesce::for_each(v, update_cell{});
  watch.lap("for_each: value = 3 value + 1, tag ^= 0x5A, alive = !alive");
  check_every_element(watch, n, cell_updated{v.const_view(), updated_cell_at{cell_at{seed}}},
                      "every column of every element updated");

  ct::device_buffer<std::uint32_t> words(n);
  words.poison();
  watch.lap("allocated and poisoned transform's output");
  coalesce::transform(v.const_view(), cuda::std::span<std::uint32_t>(words.data(), n), cell_word{});
  watch.lap("transform into a span of 32-bit words");
  check_every_element(watch, n, word_of_updated_cell{words.data(), updated_cell_at{cell_at{seed}}},
                      "every word of transform's output");

  const unsigned long long count = coalesce::transform_reduce(v.const_view(), one{}, 0ull, plus{});
  watch.lap("transform_reduce: the count");
  CHECK(count == n);
  const unsigned long long alive = coalesce::transform_reduce(v.const_view(), is_alive{}, 0ull, plus{});
  watch.lap("transform_reduce: the bools");
  CHECK(alive == (n + 2) / 3);  // after the update, alive where i % 3 == 0
  const unsigned long long checksum = coalesce::transform_reduce(v.const_view(), cell_checksum{}, 0ull, plus{});
  watch.lap("transform_reduce: every column's checksum");
  const unsigned long long expected = reference_sum(n, checksum_of_updated_cell{updated_cell_at{cell_at{seed}}});
  watch.lap("the test's own sum of the same, from the elements' definition");
  CHECK(checksum == expected);
}

TEST_CASE("erase_if removes every third of 2^32 + 2^20 + 3 elements, stably, from every column", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32 + beyond, 65539);
  const std::size_t removed = (n + 2) / 3, kept = n - removed;  // dead where i % 3 == 0
  const std::size_t bytes = (n + kept) * (sizeof(std::uint32_t) + 2);  // the vector and its new storage
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed << ", " << n << " elements");
  std::printf("erase_if over %zu elements of 4 + 1 + 1 bytes, %zu kept (%s):\n", n, kept, gib(bytes).c_str());

  coalesce::soa_vector<cell> v;
  v.resize_for_overwrite(n);
  stopwatch watch;
  at_every_index(n, fill_cells{v.view(), cell_at{seed}}, "filling the cells");
  watch.lap("filled");
  const std::size_t count = coalesce::erase_if(v, dead{});
  watch.lap("erase_if(!alive)");
  CHECK(count == removed);
  REQUIRE(v.size() == kept);
  check_every_element(watch, kept, kept_cell{v.const_view(), cell_at{seed}},
                      "every kept element, in order, every column");
}

TEST_CASE("gather by a scattered permutation of 2^31 + 2^20 + 3 elements of three columns moves every element",
          "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_31 + beyond, 65539);
  // The input and the output, 32-bit indices, and the records a scattered gather of three columns
  // stages: 16 bytes an element.
  const std::size_t bytes = 2 * n * (sizeof(std::uint32_t) + 2) + n * sizeof(std::uint32_t) + (n + 1) * 16;
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  const scattered_index index{n, std::size_t(seed % n)};
  INFO("seed " << seed << ", " << n << " elements");
  std::printf("gather of %zu elements of 4 + 1 + 1 bytes by 32-bit indices above 2^31 (%s):\n", n, gib(bytes).c_str());

  coalesce::soa_vector<cell> in, out;
  in.resize_for_overwrite(n);
  out.resize_for_overwrite(n);
  ct::device_buffer<std::uint32_t> indices(n);
  stopwatch watch;
  at_every_index(n, fill_cells{in.view(), cell_at{seed}}, "filling the cells");
  at_every_index(n, fill_indices<std::uint32_t>{indices.data(), index}, "filling the indices");
  poison(out.view());
  watch.lap("filled the input and the indices, poisoned the output");
  coalesce::gather(in.const_view(), cuda::std::span<const std::uint32_t>(indices.data(), n), out.view());
  watch.lap("gather (scattered: through records)");
  check_every_element(watch, n, gathered_cell{out.const_view(), index, cell_at{seed}},
                      "every gathered element, every column");
}

TEST_CASE("gather by 64-bit indices above 2^32 moves every one of 2^32 + 2^20 + 3 elements", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32 + beyond, 65539);
  const std::size_t bytes = 2 * n * sizeof(std::uint32_t) + n * sizeof(std::uint64_t);
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  const scattered_index index{n, std::size_t(seed % n)};
  INFO("seed " << seed << ", " << n << " elements");
  std::printf("gather of %zu 4-byte elements by 64-bit indices (%s):\n", n, gib(bytes).c_str());

  coalesce::soa_vector<word_cell> in, out;
  in.resize_for_overwrite(n);
  out.resize_for_overwrite(n);
  ct::device_buffer<std::uint64_t> indices(n);
  stopwatch watch;
  at_every_index(n, fill_words{in.view().column<&word_cell::value>(), word_at{seed}}, "filling the input");
  at_every_index(n, fill_indices<std::uint64_t>{indices.data(), index}, "filling the indices");
  COALESCE_CUDA_CHECK(cudaMemset(out.view().column<&word_cell::value>(), 0xFF, n * sizeof(std::uint32_t)));
  watch.lap("filled the input and the indices, poisoned the output");
  coalesce::gather(in.const_view(), cuda::std::span<const std::uint64_t>(indices.data(), n), out.view());
  watch.lap("gather (one column)");
  check_every_element(watch, n, gathered_word{out.const_view().column<&word_cell::value>(), index, word_at{seed}},
                      "every gathered element");
}

TEST_CASE("sort_by_key orders 2^32 - 1 elements, the most that 32-bit indices and count take", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32 - 1, 65535);
  if (auto reason = short_of_memory(sort_bytes(n))) COALESCE_SKIP(*reason);
  check_sort(n);
}

TEST_CASE("sort_by_key orders exactly 2^32 elements, which take 64-bit indices (a 32-bit count of them is 0)",
          "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32, 65536);
  if (auto reason = short_of_memory(sort_bytes(n))) COALESCE_SKIP(*reason);
  check_sort(n);
}

TEST_CASE("sort_by_key orders 2^32 + 2^20 + 3 elements, indices above 2^32 among them", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = sized(two_to_32 + beyond, 65539);
  if (auto reason = short_of_memory(sort_bytes(n))) COALESCE_SKIP(*reason);
  check_sort(n);
}

TEST_CASE("a stencil over a matrix of more than 2^31 floats (32-bit positions) is exact at every element", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 32771 x 65541 = 2147844111 elements; odd columns, so each row ends in a partial vector.
  const std::size_t rows = sized(32771, 131), cols = sized(65541, 517);
  const std::size_t pitch = (cols * sizeof(float) + 127) / 128 * 128;  // pitched_matrix's rows: whole 128-byte lines
  const std::size_t bytes = 2 * rows * pitch;
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  const std::size_t n = rows * cols;
  INFO("seed " << seed << ", " << rows << " x " << cols);
  std::printf("stencil<1> under clamp on %zu x %zu floats, %zu elements (%s):\n", rows, cols, n, gib(bytes).c_str());

  coalesce::pitched_matrix<float> in(rows, cols), out(rows, cols);
  stopwatch watch;
  at_every_index(n, fill_matrix{in.view(), matrix_value{seed}}, "filling the input");
  at_every_index(n, poison_matrix{out.view()}, "poisoning the output");
  watch.lap("filled the input, poisoned the output");
  coalesce::stencil<1>(coalesce::clamp, in, out, laplacian{});
  watch.lap("stencil: the 5-point Laplacian");
  check_every_element(watch, n, clamped_laplacian{out.const_view(), matrix_value{seed}}, "every output element");
}

TEST_CASE("a stencil over rows of more than 2^31 bytes (64-bit positions) is exact at every element", "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // Rows of 2^31 + 2^10 + 5 bytes: past what 32-bit positions hold with a grid's step added.
  const std::size_t rows = 3, cols = sized(two_to_31 + 1029, 70001);
  // Rows 16-byte aligned (what the vector walk needs). Not a pitched_matrix: it fills and copies
  // rows with cudaMemcpy2DAsync, which CUDA documents as failing for a pitch above the device's
  // maximum for copies (cudaDevAttrMaxPitch), and zeroes them with cudaMemset2DAsync; this case
  // tests the stencil, not those.
  const std::size_t pitch = (cols + 15) / 16 * 16;
  const std::size_t bytes = 2 * rows * pitch;
  if (auto reason = short_of_memory(bytes)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  const std::size_t n = rows * cols;
  INFO("seed " << seed << ", " << rows << " x " << cols);
  std::printf("stencil<1> under periodic on %zu x %zu bytes, %zu elements (%s):\n", rows, cols, n, gib(bytes).c_str());

  ct::device_buffer<std::uint8_t> in_bytes(rows * pitch), out_bytes(rows * pitch);
  coalesce::pitched_view<std::uint8_t> in(in_bytes.data(), rows, cols, pitch), out(out_bytes.data(), rows, cols, pitch);
  stopwatch watch;
  COALESCE_CUDA_CHECK(cudaMemset(in_bytes.data(), 0, in_bytes.size_bytes()));  // the rows' padding too
  at_every_index(n, fill_bytes{in, byte_value{seed, cols}}, "filling the input");
  out_bytes.poison();  // 0xFF: no sum of five values below 50
  watch.lap("filled the input, poisoned the output");
  coalesce::stencil<1>(coalesce::periodic, in, out, five_point_sum{});
  watch.lap("stencil: the 5-point sum");
  check_every_element(watch, n, periodic_sum{out, byte_value{seed, cols}}, "every output element");
}

TEST_CASE("a pitched_matrix with rows of more than 2^31 bytes is zeroed, filled, copied and read back exactly",
          "[big]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // A pitch past cudaDevAttrMaxPitch (2^31 - 1), which the runtime's 2D copies and fills refuse:
  // coalesce copies such rows one by one. Under the sanitizers the rows are short, and take the
  // 2D calls.
  const std::size_t rows = 3, cols = sized(two_to_31 + 1029, 70001);
  using matrix = coalesce::pitched_matrix<std::uint8_t>;
  const std::size_t pitch = matrix::pitch_for(cols);
  if (auto reason = short_of_memory(2 * rows * pitch)) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed << ", " << rows << " x " << cols << ", pitch " << pitch);
  std::printf("pitched_matrix of %zu x %zu bytes, pitch %zu (%s each):\n", rows, cols, pitch,
              gib(rows * pitch).c_str());
  stopwatch watch;

  matrix a(rows, cols);
  watch.lap("constructed (zeroed)");
  const auto zeroed = a.const_view();
  check_every_element(
      watch, rows * cols, [=] __device__(std::size_t i) { return zeroed(i / cols, i % cols) == 0; }, "every byte zero");

  a.fill(std::uint8_t(7));
  watch.lap("filled with 7");
  check_every_element(
      watch, rows * cols, [=] __device__(std::size_t i) { return zeroed(i / cols, i % cols) == 7; }, "every byte 7");

  // Host bytes that differ from row to row and along each row, from the seed.
  std::vector<std::uint8_t> dense(rows * cols);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = std::uint8_t(mix(seed + i / 4096) >> (8 * (i % 8)));
  a.copy_from(dense);
  watch.lap("copied from the host");
  const matrix b(a);  // device to device
  watch.lap("copied on the device");
  const auto from_host = b.to_vector();
  watch.lap("read back to the host");
  std::size_t wrong = 0, first = dense.size();
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (from_host[i] != dense[i] && wrong++ == 0) first = i;
  INFO(wrong << " of " << dense.size() << " bytes wrong, the first at " << first);
  CHECK(wrong == 0);
}
