// coalesce::erase_if, copy_if, sort_by_key, gather and scatter on a device soa_vector of particles:
// every column equals a host reference (std::copy_if, std::stable_sort, index loops) exactly, at
// 0, 1 and 1000003 elements, for nothing, 10%, 50% and everything removed, keys with duplicates
// (stability), a nearly sorted key, 64-bit keys and fewer key bits, a random permutation and
// repeated indices; and the compaction's stores are coalesced and write the kept bytes once
// (hardware counters).
#include <coalesce/compact.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "particles.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::profiler;
using coalesce_test::random_particles;
using coalesce_test::same;
using coalesce_test::x_below;

namespace {

// One of 64 cells along x: many particles share a key, so only a stable sort keeps their order.
struct cell_of_x {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float x = p.x;
    return std::uint32_t((x + 1.0f) * 32.0f) & 63u;
  }
};
// 64 cells in the low 6 bits under a high bit that varies: with end_bit 6 the sort sees only the cell.
struct cell_under_noise {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float y = p.y;
    return cell_of_x{}(p) | (y < 0.0f ? 0x80000000u : 0u);
  }
};
// Cells of y above cells of x, 20 bits each, in a 64-bit key.
struct cell_of_y_then_x {
  template <class P>
  __host__ __device__ std::uint64_t operator()(const P& p) const {
    const float x = p.x, y = p.y;
    return std::uint64_t(std::uint32_t((y + 1.0f) * 1000.0f)) << 40 |
           std::uint64_t(std::uint32_t((x + 1.0f) * 500000.0f));
  }
};
// A key that is x scaled to 2^24 (x >= 0 in the nearly sorted input).
struct x_fixed_point {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float x = p.x;
    return std::uint32_t(x * 16777216.0f);
  }
};

std::vector<std::size_t> sizes() { return {0, 1, ct::small_problems() ? std::size_t(10007) : std::size_t(1000003)}; }

bool same_particles(const std::vector<Particle>& got, const std::vector<Particle>& expected) {
  if (got.size() != expected.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], expected[i])) return false;
  return true;
}

// The host reference of a stable sort by key.
template <class Key>
std::vector<Particle> stably_sorted(const std::vector<Particle>& particles, const Key& key, int end_bit) {
  using key_type = decltype(key(particles[0]));
  const key_type mask =
      end_bit >= int(sizeof(key_type) * 8) ? key_type(~key_type(0)) : key_type((key_type(1) << end_bit) - 1);
  std::vector<Particle> sorted = particles;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Particle& a, const Particle& b) { return (key(a) & mask) < (key(b) & mask); });
  return sorted;
}

template <class Key>
void check_sort(const std::vector<Particle>& particles, const Key& key, int end_bit, const std::string& what) {
  coalesce::soa_vector<Particle> v(particles);
  if (end_bit > 0) coalesce::sort_by_key(v, key, end_bit);
  else coalesce::sort_by_key(v, key);
  ct::check_sync(what.c_str());
  const int bits = end_bit > 0 ? end_bit : int(sizeof(decltype(key(particles[0]))) * 8);
  if (!same_particles(v.to_vector(), stably_sorted(particles, key, bits)))
    FAIL(what << ", " << particles.size() << " particles: not the stable sort");
}

}  // namespace

TEST_CASE("erase_if removes stably from every column, and copy_if keeps the rest, at every size and fraction") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : sizes()) {
    const auto particles = random_particles(n);
    for (const float threshold : {-2.0f, -0.8f, 0.0f, 2.0f}) {  // none, 10%, 50%, all removed
      const x_below removed{threshold};
      std::vector<Particle> kept, taken;
      for (const auto& p : particles) (removed(p) ? taken : kept).push_back(p);
      INFO(n << " particles, x < " << threshold << " removed");

      coalesce::soa_vector<Particle> v(particles);
      const std::size_t count = coalesce::erase_if(v, removed);
      ct::check_sync("erase_if");
      CHECK(count == taken.size());
      CHECK(v.size() == kept.size());
      CHECK(same_particles(v.to_vector(), kept));

      // copy_if from the original into a vector that held something else, then from a vector into itself.
      const coalesce::soa_vector<Particle> original(particles);
      coalesce::soa_vector<Particle> out(random_particles(7));
      CHECK(coalesce::copy_if(original.view(), out, removed) == taken.size());
      ct::check_sync("copy_if");
      CHECK(same_particles(out.to_vector(), taken));
      coalesce::soa_vector<Particle> self(particles);
      CHECK(coalesce::copy_if(self.view(), self, removed) == taken.size());
      ct::check_sync("copy_if into its own input");
      CHECK(same_particles(self.to_vector(), taken));
    }
  }
}

TEST_CASE("erase_if runs on the container's stream, a device lambda as its predicate") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto particles = random_particles(n);
  cudaStream_t stream{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    coalesce::soa_vector<Particle> v(particles, coalesce::pool_resource(stream));
    // A device lambda as the predicate: what a user writes.
    const std::size_t count = coalesce::erase_if(v, [] __device__(auto p) { return p.vx > 0.0f || p.z < -0.5f; });
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<Particle> kept;
    for (const auto& p : particles)
      if (!(p.vx > 0.0f || p.z < -0.5f)) kept.push_back(p);
    CHECK(count == n - kept.size());
    CHECK(same_particles(v.to_vector(), kept));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("sort_by_key is a stable sort of every column: duplicate, nearly sorted, 64-bit and shortened keys") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : sizes()) {
    const auto particles = random_particles(n);
    check_sort(particles, cell_of_x{}, 0, "64 cells of x (duplicates)");
    check_sort(particles, cell_of_y_then_x{}, 0, "a 64-bit key");
    check_sort(particles, cell_under_noise{}, 6, "6 of 32 key bits");

    // Nearly sorted: x rising with the index, 1% of the particles swapped with a random other.
    auto nearly = particles;
    for (std::size_t i = 0; i < n; ++i) nearly[i].x = float(i) / float(n + 1);
    std::mt19937_64 engine(ct::test_seed());
    for (std::size_t k = 0; k < n / 100; ++k) std::swap(nearly[engine() % n], nearly[engine() % n]);
    check_sort(nearly, x_fixed_point{}, 0, "a nearly sorted key");
  }
  coalesce::soa_vector<Particle> v(random_particles(10));
  CHECK_THROWS_AS(coalesce::sort_by_key(v, cell_of_x{}, 0), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::sort_by_key(v, cell_of_x{}, 33), std::invalid_argument);
  // A device lambda with its key type spelled out.
  coalesce::sort_by_key(v, [] __device__(auto p) -> std::uint32_t { return p.vx > 0.0f ? 1u : 0u; });
  ct::check_sync("sort_by_key with a device lambda");
  const auto sorted = v.to_vector();
  CHECK(std::is_partitioned(sorted.begin(), sorted.end(), [](const Particle& p) { return !(p.vx > 0.0f); }));
}

TEST_CASE("gather and scatter permute every column: a random permutation, repeated indices, 32- and 64-bit indices") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : sizes()) {
    INFO(n << " particles");
    const auto particles = random_particles(n);
    const coalesce::soa_vector<Particle> in(particles);
    std::vector<std::uint32_t> permutation(n);
    std::iota(permutation.begin(), permutation.end(), 0u);
    std::mt19937_64 engine(ct::test_seed());
    std::shuffle(permutation.begin(), permutation.end(), engine);
    std::vector<std::size_t> repeated(n + n / 3);  // more outputs than inputs, every index many times
    for (auto& r : repeated) r = n == 0 ? 0 : std::size_t(engine() % (n / 10 + 1));
    if (n == 0) repeated.clear();

    const ct::device_buffer<std::uint32_t> permutation_on_device(permutation);
    const ct::device_buffer<std::size_t> repeated_on_device(repeated);
    const cuda::std::span<const std::uint32_t> by_permutation(permutation_on_device.data(), n);
    const cuda::std::span<const std::size_t> by_repeated(repeated_on_device.data(), repeated.size());

    coalesce::soa_vector<Particle> gathered(n);
    coalesce::gather(in.view(), by_permutation, gathered.view());
    ct::check_sync("gather by a permutation");
    std::vector<Particle> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = particles[permutation[i]];
    CHECK(same_particles(gathered.to_vector(), expected));

    coalesce::soa_vector<Particle> many(repeated.size());
    coalesce::gather(in, by_repeated, many);
    ct::check_sync("gather by repeated indices");
    expected.assign(repeated.size(), Particle{});
    for (std::size_t i = 0; i < repeated.size(); ++i) expected[i] = particles[repeated[i]];
    CHECK(same_particles(many.to_vector(), expected));

    coalesce::soa_vector<Particle> scattered(n);
    coalesce::scatter(in.view(), by_permutation, scattered.view());
    ct::check_sync("scatter by a permutation");
    expected.assign(n, Particle{});
    for (std::size_t i = 0; i < n; ++i) expected[permutation[i]] = particles[i];
    CHECK(same_particles(scattered.to_vector(), expected));

    // Scatter undoes gather by the same permutation.
    coalesce::soa_vector<Particle> back(n);
    coalesce::scatter(gathered, by_permutation, back);
    ct::check_sync("scatter back");
    CHECK(same_particles(back.to_vector(), particles));
  }
  coalesce::soa_vector<Particle> in(random_particles(10)), out(9);
  const ct::device_buffer<std::uint32_t> indices(std::vector<std::uint32_t>(10, 0u));
  const cuda::std::span<const std::uint32_t> ten(indices.data(), 10);
  CHECK_THROWS_AS(coalesce::gather(in.view(), ten, out.view()), std::invalid_argument);
  CHECK_THROWS_AS(coalesce::scatter(out.view(), ten, in.view()), std::invalid_argument);
}

TEST_CASE("the compaction's stores are coalesced and write each kept byte once (hardware counters)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 4096 : std::size_t(1) << 24;  // 384 MiB of particles, 8x the L2
  const auto particles = random_particles(n);
  const coalesce::soa_vector<Particle> original(particles);
  coalesce::soa_vector<Particle> out;
  // Everything kept: every round's 32 lanes store 32 neighbouring floats of each column, a
  // 128-byte-aligned line (tiles of 2048 start on one), so 4 sectors per request; the count and
  // the scan add a few one-sector stores per tile.
  const auto keep_all = [&] { coalesce::copy_if(original.view(), out, x_below{2.0f}); };
  keep_all();
  ct::check_sync();
  REQUIRE(out.size() == n);
  coalesce::soa_vector<Particle> v(particles);
  std::size_t removed = 0;
  const auto erase_tenth = [&] { removed = coalesce::erase_if(v, x_below{-0.8f}); };
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto all = profiler().measure(keep_all);
  const auto tenth = profiler().measure(erase_tenth);
  const double kept_bytes = double(n - removed) * sizeof(Particle);
  std::printf("\ncopy_if keeping all of %zu particles: store sectors per request %.2f\n"
              "erase_if removing %zu: DRAM written %.1f MB (the kept elements: %.1f MB), read %.1f MB (all 6 "
              "columns and x again: %.1f MB)\n",
              n, all.store_sectors_per_request(), removed, tenth.dram_bytes_write() / 1e6, kept_bytes / 1e6,
              tenth.dram_bytes_read() / 1e6, 28.0 * double(n) / 1e6);
  CHECK(all.store_sectors_per_request() == Approx(4.0).epsilon(0.02));
  // The rounds' runs meet at partial sectors, which L2 merges before DRAM: the kept bytes, once.
  // Up to the L2's size of them may still be in L2 when the measurement ends, hence the low bound.
  CHECK(tenth.dram_bytes_write() <= 1.05 * kept_bytes);
  CHECK(tenth.dram_bytes_write() >= 0.80 * kept_bytes);
  // Reads: x to count, then every column once to move.
  CHECK(tenth.dram_bytes_read() <= 1.05 * 28.0 * double(n));
}

// The particle count of the counter cases: under a sanitizer, the smallest input for which records
// are considered (records_from_elements).
std::size_t counted_gather_size() {
  return ct::small_problems() ? coalesce::detail::records_from_elements + 5 : std::size_t(1) << 24;
}

// A gather of random particles by `permutation`, run once on construction and checked element by
// element against the host; run() gathers again, for the counters.
struct checked_gather {
  std::vector<Particle> particles;
  coalesce::soa_vector<Particle> in, out;
  ct::device_buffer<std::uint32_t> indices;

  checked_gather(const std::vector<std::uint32_t>& permutation, const char* what)
      : particles(random_particles(permutation.size())), in(particles), out(permutation.size()), indices(permutation) {
    run();
    ct::check_sync(what);
    const auto got = out.to_vector();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!coalesce_test::same(got[i], particles[permutation[i]]))
        FAIL("element " << i << " is not input element " << permutation[i]);
  }
  void run() {
    coalesce::gather(in.view(), cuda::std::span<const std::uint32_t>(indices.data(), out.size()), out.view());
  }
};

TEST_CASE(
    "a scattered gather goes through records: one record read per particle, not a sector per column (hardware counters)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = counted_gather_size();
  std::vector<std::uint32_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(ct::test_seed()));
  checked_gather gather(permutation, "a scattered gather");
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { gather.run(); });
  // The records: every column read once (24 bytes a particle) and written as one 32-byte record;
  // then the index (4 bytes) and one record per particle, scattered. DRAM serves a scattered
  // sector in 64 bytes on an H200 (the column gather of the benchmark: about 60 bytes per
  // particle and column); the output is written once (24 bytes).
  const double reads = (24.0 + 4.0 + 64.0) * double(n), writes = (32.0 + 24.0) * double(n);
  std::printf("\na gather of %zu particles by a random permutation: DRAM read %.1f MB (model %.1f MB; a column at a "
              "time: about %.1f MB), written %.1f MB (model %.1f MB)\n",
              n, m.dram_bytes_read() / 1e6, reads / 1e6, (4.0 + 6.0 * 64.0) * double(n) / 1e6,
              m.dram_bytes_write() / 1e6, writes / 1e6);
  CHECK(m.dram_bytes_read() <= 1.10 * reads);
  CHECK(m.dram_bytes_write() <= 1.05 * writes);
}

TEST_CASE("a nearly sorted gather stays on the columns: each index read once, each column once (hardware counters)") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = counted_gather_size();
  // In order, then 1% of the positions swapped with a random other: about 4% of the consecutive
  // indices jump, well under the eighth that makes a gather scattered.
  std::vector<std::uint32_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::mt19937_64 engine(ct::test_seed());
  for (std::size_t k = 0; k < n / 100; ++k) std::swap(permutation[engine() % n], permutation[engine() % n]);
  checked_gather gather(permutation, "a nearly sorted gather");
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { gather.run(); });
  // No records: the output written once (24 bytes a particle), where staging records would write
  // 32 more. Reads: the index and the six columns, in order (28 bytes), and for the 2% of
  // particles that moved far, a 64-byte DRAM access per column.
  const double writes = 24.0 * double(n), reads = (28.0 + 0.02 * 6.0 * 64.0) * double(n);
  std::printf("\na gather of %zu particles by a nearly sorted permutation: DRAM read %.1f MB (model %.1f MB), written "
              "%.1f MB (model %.1f MB; through records: %.1f MB)\n",
              n, m.dram_bytes_read() / 1e6, reads / 1e6, m.dram_bytes_write() / 1e6, writes / 1e6,
              56.0 * double(n) / 1e6);
  CHECK(m.dram_bytes_write() <= 1.05 * writes);
  CHECK(m.dram_bytes_read() <= 1.10 * reads);
}
