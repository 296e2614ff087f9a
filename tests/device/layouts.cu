// Layouts on the device: one functor and one kernel template run on coalesce::vector<Walker> in
// layout::soa, layout::aos, layout::aosoa<32>, layout::aosoa<8> and two layout::splits (the position
// in columns, the rest in records or in tiles of 8), with results equal bit for bit
// to the same code on the host's array of structs: for_each with member functions
// (COALESCE_METHODS), a user's kernel on view[i], transform out of and into each layout,
// transform_reduce, fill, for_each over a subview that starts mid-tile, and convert between every
// pair of layouts. Measured (full scope): the particle update on each layout against the same on
// SoA and on the staged Particle* walk, with the counters' sectors per request, and each
// conversion against cudaMemcpy of the same bytes.
#include <coalesce/algorithm.hpp>
#include <coalesce/compact.hpp>
#include <coalesce/convert.hpp>
#include <coalesce/layout_vector.hpp>
#include <coalesce/model.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/scan.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "particles.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace ct = coalesce::testing;
namespace layout = coalesce::layout;

namespace on_device {

// Mixed leaf sizes (a double among floats, an array field): tiles whose runs differ in width.
struct Walker {
  float x, y, z, vx, vy, vz;
  double charge;
  std::uint32_t tag[2];
  __host__ __device__ float energy() const { return 0.5f * (vx * vx + vy * vy + vz * vz); }
  __host__ __device__ void kick(float ax, float ay, float az, float dt) {
    vx += ax * dt;
    vy += ay * dt;
    vz += az * dt;
  }
  __host__ __device__ void drift(float dt) {
    x += vx * dt;
    y += vy * dt;
    z += vz * dt;
  }
};
COALESCE_FIELDS(Walker, x, y, z, vx, vy, vz, charge, tag);
COALESCE_METHODS(Walker, energy, kick, drift);

}  // namespace on_device

namespace {

// The position hot, in columns; the velocity, charge and tag cold: in records, or in tiles of 8.
using split_records = layout::split<
    layout::fields<&on_device::Walker::x, &on_device::Walker::y, &on_device::Walker::z, &on_device::Walker::tag>>;
using split_tiles = layout::split<layout::fields<&on_device::Walker::x, &on_device::Walker::y, &on_device::Walker::z>,
                                  layout::aosoa<8>>;
// Cold records without gaps (three floats and two words, 20 bytes; split_records' have 4 bytes of
// padding before the double): columns convert into these through shared memory
// (detail/split_convert.hpp), into split_records through the chunk walk.
using split_packed = layout::split<
    layout::fields<&on_device::Walker::x, &on_device::Walker::y, &on_device::Walker::z, &on_device::Walker::charge>>;

using on_device::Walker;

std::vector<Walker> some_walkers(std::size_t n) {
  std::vector<Walker> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Dyadic values of few bits: every product and sum is exact, so host and device agree bit for
    // bit with or without fused multiply-adds.
    const float f = float(i % 1013);
    v[i] = Walker{f, 0.5f * f, -f, 1.0f + f / 1024, -2.0f, f / 1024, double(i) / 8, {std::uint32_t(i), 7u}};
  }
  return v;
}

void require_same(const std::vector<Walker>& got, const std::vector<Walker>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(Walker)) != 0) FAIL(what << ": element " << i << " differs");
}

// The user's kernel, one template for every layout's view.
template <class View>
__global__ void drift_kernel(View walkers, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < walkers.size()) walkers[i].drift(dt);
}

struct kick_all {
  float dt;
  template <class P>
  __host__ __device__ void operator()(P&& p) const {
    p.kick(1.0f, 2.0f, -0.5f, dt);
    p.tag[1] += 1;
  }
};
struct energy_of {
  template <class P>
  __host__ __device__ float operator()(const P& p) const {
    return p.energy();
  }
};
struct charge_of {
  template <class P>
  __host__ __device__ double operator()(const P& p) const {
    return p.charge;
  }
};
struct add {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// Every algorithm above on one layout, checked against the host.
template <class Layout>
void run_everything_on() {
  const std::size_t n = 100003;  // not a whole number of tiles, chunks or blocks
  auto host = some_walkers(n);
  coalesce::vector<Walker, Layout> walkers(host);
  const float dt = 0.125f;

  coalesce::for_each(walkers, kick_all{dt});
  for (auto& w : host) kick_all{dt}(w);
  require_same(walkers.to_vector(), host, "for_each with p.kick");

  drift_kernel<<<unsigned((n + 255) / 256), 256>>>(walkers.view(), dt);
  ct::check_launch();
  for (auto& w : host) w.drift(dt);
  require_same(walkers.to_vector(), host, "a user's kernel with view[i].drift");

  // A subview from element 45 on: mid-tile for tiles of 32 and 8.
  coalesce::for_each(walkers.view().subview(45, n - 100), [=] __device__(auto p) { p.x = p.y + 1.0f; });
  for (std::size_t i = 45; i < n - 55; ++i) host[i].x = host[i].y + 1.0f;
  require_same(walkers.to_vector(), host, "for_each over a subview");

  ct::device_buffer<float> energies(n);
  coalesce::transform(walkers, cuda::std::span<float>(energies.data(), n), energy_of{});
  const auto got = energies.download();
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != host[i].energy()) FAIL("transform: energy " << i);

  double charge = 0;
  for (const auto& w : host) charge += w.charge;  // multiples of 1/8 up to 12500: exact in double
  CHECK(coalesce::transform_reduce(walkers.const_view(), charge_of{}, 0.0, add{}) == charge);
  CHECK(coalesce::transform_reduce(walkers, charge_of{}, 0.0, add{}) == charge);  // the container, on its stream

  // Scans read the proxy too: running sums of the charge (exact in double, as above).
  ct::device_buffer<double> sums(n);
  coalesce::transform_inclusive_scan(walkers.const_view(), cuda::std::span<double>(sums.data(), n), charge_of{}, add{});
  auto scanned = sums.download();
  double running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    running += host[i].charge;
    if (scanned[i] != running) FAIL("transform_inclusive_scan: " << i << ": " << scanned[i] << " != " << running);
  }
  coalesce::transform_exclusive_scan(walkers.const_view(), cuda::std::span<double>(sums.data(), n), charge_of{}, 0.5,
                                     add{});
  scanned = sums.download();
  running = 0.5;
  for (std::size_t i = 0; i < n; ++i) {
    if (scanned[i] != running) FAIL("transform_exclusive_scan: " << i << ": " << scanned[i] << " != " << running);
    running += host[i].charge;
  }

  // Into the layout: a transform writes every leaf of each element.
  coalesce::vector<Walker> source(host);
  coalesce::vector<Walker, Layout> written(n);
  coalesce::transform(source.const_view(), written.view(), [] __device__(auto p) {
    Walker w = coalesce::value(p);
    w.charge *= 2;
    return w;
  });
  auto doubled = host;
  for (auto& w : doubled) w.charge *= 2;
  require_same(written.to_vector(), doubled, "transform into the layout");
  // The same with the containers themselves, both ways: the output is the vector, not a copy.
  coalesce::vector<Walker> back(n);
  coalesce::transform(written, back, [] __device__(auto p) {
    Walker w = coalesce::value(p);
    w.charge *= 2;
    return w;
  });
  coalesce::transform(source, written, [] __device__(auto p) { return coalesce::value(p); });
  for (auto& w : doubled) w.charge *= 2;
  require_same(back.to_vector(), doubled, "transform between containers, into soa");
  require_same(written.to_vector(), host, "transform between containers, into the layout");

  const Walker one{1, 2, 3, 4, 5, 6, 7, {8, 9}};
  coalesce::fill(written, one);
  require_same(written.to_vector(), std::vector<Walker>(n, one), "fill");
}

// from -> to -> back, for a pair of layouts, each time equal to the host's elements.
template <class From, class To>
void convert_both_ways(const std::vector<Walker>& host) {
  const coalesce::vector<Walker, From> from(host);
  coalesce::vector<Walker, To> to;
  coalesce::convert(from, to);  // `to` grows to from.size()
  require_same(to.to_vector(), host, "convert");
  coalesce::vector<Walker, From> back(host.size());
  coalesce::convert(to.const_view(), back.view());
  require_same(back.to_vector(), host, "convert back");
}
template <class From>
void convert_to_every_layout(const std::vector<Walker>& host) {
  convert_both_ways<From, layout::soa>(host);
  convert_both_ways<From, layout::aos>(host);
  convert_both_ways<From, layout::aosoa<32>>(host);
  convert_both_ways<From, layout::aosoa<8>>(host);
  convert_both_ways<From, split_records>(host);
  convert_both_ways<From, split_tiles>(host);
}

}  // namespace

TEST_CASE("one functor and one kernel template on every layout give the host's results") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  SECTION("soa") { run_everything_on<layout::soa>(); }
  SECTION("aos") { run_everything_on<layout::aos>(); }
  SECTION("aosoa<32>") { run_everything_on<layout::aosoa<32>>(); }
  SECTION("aosoa<8>") { run_everything_on<layout::aosoa<8>>(); }
  SECTION("split, cold records") { run_everything_on<split_records>(); }
  SECTION("split, cold tiles") { run_everything_on<split_tiles>(); }
}

TEST_CASE("convert between every pair of layouts is exact, both ways") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto host = some_walkers(70001);
  convert_to_every_layout<layout::soa>(host);
  convert_to_every_layout<layout::aos>(host);
  convert_to_every_layout<layout::aosoa<32>>(host);
  convert_to_every_layout<layout::aosoa<8>>(host);
  convert_to_every_layout<split_records>(host);
  convert_to_every_layout<split_tiles>(host);

  // Columns into a split of packed cold records: whole, and into a subview whose records start 4
  // bytes past a 16-byte boundary (element 5's, 100 bytes in), which the kernel stages unaligned.
  static_assert(coalesce::detail::stages_split_records_v<coalesce::layout_view<Walker, split_packed>>);
  static_assert(!coalesce::detail::stages_split_records_v<coalesce::layout_view<Walker, split_records>>);
  convert_both_ways<layout::soa, split_packed>(host);
  {
    const coalesce::vector<Walker, layout::soa> from(host);
    const auto before = some_walkers(host.size() + 9);
    coalesce::vector<Walker, split_packed> to(before);
    coalesce::convert(from.const_view(), to.view().subview(5, host.size()));
    std::vector<Walker> expected = before;
    std::copy(host.begin(), host.end(), expected.begin() + 5);
    require_same(to.to_vector(), expected, "convert into a subview of a split");
  }

  // Views of different sizes are refused, and nothing is written.
  coalesce::vector<Walker, layout::aos> a(host);
  coalesce::vector<Walker, layout::aosoa<32>> b(10);
  CHECK_THROWS_AS(coalesce::convert(a.const_view(), b.view()), std::invalid_argument);
}

namespace {

// A cell key of x (reads one field): many equal keys, so stability shows.
struct coarse_key {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    return std::uint32_t(float(p.x)) % 64u;
  }
};

template <class From, class To>
void permute_between(const std::vector<Walker>& host, const std::vector<std::uint32_t>& permutation) {
  const std::size_t n = host.size();
  const ct::device_buffer<std::uint32_t> indices(permutation);
  const cuda::std::span<const std::uint32_t> order(indices.data(), n);
  const coalesce::vector<Walker, From> from(host);
  coalesce::vector<Walker, To> to(n);
  coalesce::gather(from, order, to);
  std::vector<Walker> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = host[permutation[i]];
  require_same(to.to_vector(), want, "gather");
  coalesce::vector<Walker, To> back(n);
  coalesce::scatter(to, order, back);  // the inverse permutation: back to the host's order
  require_same(back.to_vector(), host, "scatter");
}
template <class From>
void permute_to_every_layout(const std::vector<Walker>& host, const std::vector<std::uint32_t>& permutation) {
  permute_between<From, layout::soa>(host, permutation);
  permute_between<From, layout::aos>(host, permutation);
  permute_between<From, layout::aosoa<32>>(host, permutation);
  permute_between<From, split_records>(host, permutation);
}

template <class Layout>
void sort_on(const std::vector<Walker>& host) {
  coalesce::vector<Walker, Layout> v(host);
  coalesce::sort_by_key(v, coarse_key{});
  auto want = host;
  std::stable_sort(want.begin(), want.end(),
                   [](const Walker& a, const Walker& b) { return coarse_key{}(a) < coarse_key{}(b); });
  require_same(v.to_vector(), want, "sort_by_key");
}

}  // namespace

TEST_CASE("gather, scatter and sort_by_key on every layout, and between layouts, are exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto host = some_walkers(50021);
  std::vector<std::uint32_t> permutation(host.size());
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(ct::test_seed()));
  permute_to_every_layout<layout::soa>(host, permutation);
  permute_to_every_layout<layout::aos>(host, permutation);
  permute_to_every_layout<layout::aosoa<32>>(host, permutation);
  permute_to_every_layout<split_records>(host, permutation);
  permute_to_every_layout<split_tiles>(host, permutation);
  sort_on<layout::aos>(host);
  sort_on<layout::soa>(host);
  sort_on<layout::aosoa<32>>(host);
  sort_on<layout::aosoa<8>>(host);
  sort_on<split_records>(host);
  sort_on<split_tiles>(host);

  // An input of 2^18 elements or more, gathered whole: from tiles, a split or columns the gather
  // goes through records, staged where the permutation is scattered (a shuffle) and read at each
  // index where it is not (neighbours swapped: the sample finds few jumps).
  static_assert(coalesce::detail::stage_records_for_v<coalesce::layout_view<const Walker, layout::aosoa<32>>>);
  static_assert(coalesce::detail::stage_records_for_v<coalesce::layout_view<const Walker, split_records>>);
  static_assert(coalesce::detail::stage_records_for_v<coalesce::soa_view<const Walker>>);
  static_assert(!coalesce::detail::stage_records_for_v<coalesce::layout_view<const Walker, layout::aos>>);
  const auto large = some_walkers(coalesce::detail::records_from_elements + 3001);
  std::vector<std::uint32_t> shuffled(large.size()), swapped(large.size());
  std::iota(shuffled.begin(), shuffled.end(), 0u);
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(ct::test_seed() + 1));
  for (std::size_t i = 0; i < swapped.size(); ++i) swapped[i] = std::uint32_t(i + 1 < swapped.size() ? i ^ 1 : i);
  for (const auto* order : {&shuffled, &swapped}) {
    permute_to_every_layout<layout::soa>(large, *order);
    permute_to_every_layout<layout::aosoa<32>>(large, *order);
    permute_to_every_layout<split_records>(large, *order);
    permute_between<split_tiles, split_tiles>(large, *order);
  }
}

namespace {

struct x_below {
  float threshold;
  template <class P>
  __host__ __device__ bool operator()(const P& p) const {
    return p.x < threshold;
  }
};

template <class From, class To>
void compact_between(const std::vector<Walker>& host) {
  const float threshold = 300.0f;  // x is i % 1013: about 30% below
  std::vector<Walker> kept, removed_from;
  for (const auto& w : host)
    if (!x_below{threshold}(w)) removed_from.push_back(w);
    else kept.push_back(w);
  coalesce::vector<Walker, From> v(host);
  CHECK(coalesce::erase_if(v, x_below{threshold}) == host.size() - removed_from.size());
  require_same(v.to_vector(), removed_from, "erase_if");
  const coalesce::vector<Walker, From> source(host);
  coalesce::vector<Walker, To> out;
  CHECK(coalesce::copy_if(source, out, x_below{threshold}) == kept.size());
  require_same(out.to_vector(), kept, "copy_if");
}

}  // namespace

TEST_CASE("erase_if and copy_if on every layout, and between layouts, keep the host's elements in order") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto host = some_walkers(70001);
  compact_between<layout::aos, layout::aos>(host);
  compact_between<layout::aos, layout::soa>(host);
  compact_between<layout::soa, layout::aosoa<32>>(host);
  compact_between<layout::aosoa<32>, layout::aos>(host);
  compact_between<layout::aosoa<8>, layout::aosoa<8>>(host);
  compact_between<split_records, split_records>(host);
  compact_between<split_tiles, layout::aos>(host);
  compact_between<layout::soa, split_tiles>(host);
}

TEST_CASE("device layout_vector growth keeps the elements and value-initializes the new ones") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  auto host = some_walkers(45);  // a tile and 13 lanes of the next
  coalesce::vector<Walker, layout::aosoa<32>> tiles(host);
  coalesce::vector<Walker, layout::aos> records(host);
  tiles.resize(200);
  records.resize(200);
  host.resize(200, Walker{});
  require_same(tiles.to_vector(), host, "aosoa resize");
  require_same(records.to_vector(), host, "aos resize");
  tiles.reserve(1000);
  require_same(tiles.to_vector(), host, "aosoa reserve");
  const auto copy = tiles;
  require_same(copy.to_vector(), host, "aosoa copy");
  // A split grows with its columns longer: every hot column and the cold records move.
  host.resize(45);
  coalesce::vector<Walker, split_records> split(host);
  coalesce::vector<Walker, split_tiles> split8(host);
  split.resize(700);
  split8.resize(700);
  host.resize(700, Walker{});
  require_same(split.to_vector(), host, "split resize");
  require_same(split8.to_vector(), host, "split of tiles resize");
}

namespace {

// The particle update of coalesce_bench's "particles" group: 6 float fields read, 3 written.
struct advance_particle {
  float dt;
  template <class P>
  __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

}  // namespace

TEST_CASE("the particle update on tiles and on records keeps up with SoA and with the staged Particle* walk") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? 100000 : std::size_t(32) << 20;
  const auto particles = coalesce_test::random_particles(n);
  coalesce::vector<Particle> soa(particles);
  coalesce::vector<Particle, layout::aosoa<32>> tiles(particles);
  coalesce::vector<Particle, layout::aos> records(particles);
  ct::device_buffer<Particle> raw(particles);
  const advance_particle f{0.01f};
  auto on_soa = [&](cudaStream_t s) { coalesce::for_each(soa.view(), f, s); };
  auto on_tiles = [&](cudaStream_t s) { coalesce::for_each(tiles.view(), f, s); };
  auto on_records = [&](cudaStream_t s) { coalesce::for_each(records.view(), f, s); };
  auto on_pointer = [&](cudaStream_t s) {
    coalesce::for_each(raw.data(), n, [f] __device__(Particle & p) { f(p); }, s);
  };
  on_soa(0), on_tiles(0), on_records(0), on_pointer(0);
  ct::check_sync();
  const auto want = soa.to_vector();
  {
    const auto t = tiles.to_vector(), r = records.to_vector();
    for (std::size_t i = 0; i < n; ++i)
      if (!coalesce_test::same(t[i], want[i]) || !coalesce_test::same(r[i], want[i])) FAIL("update differs at " << i);
  }
  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  // Columns: 16-byte vectors, a warp's request 512 bytes, 16 sectors. Tiles of 32: a warp's request
  // is one whole 128-byte run, 4 sectors. All of them used.
  const auto m = coalesce_test::profiler().measure([&] { on_tiles(0); });
  const auto m_soa = coalesce_test::profiler().measure([&] { on_soa(0); });
  std::printf("\nparticle update: load/store sectors per request, aosoa<32> %.2f / %.2f, soa %.2f / %.2f; DRAM bytes "
              "aosoa<32> %.0f, soa %.0f\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(), m_soa.load_sectors_per_request(),
              m_soa.store_sectors_per_request(), m.dram_bytes_read() + m.dram_bytes_write(),
              m_soa.dram_bytes_read() + m_soa.dram_bytes_write());
  CHECK(m.load_sectors_per_request() == Approx(4.0));
  CHECK(m.store_sectors_per_request() == Approx(4.0));
  CHECK(m_soa.load_sectors_per_request() == Approx(16.0));
  CHECK(m.dram_bytes_read() + m.dram_bytes_write() <= 1.01 * (m_soa.dram_bytes_read() + m_soa.dram_bytes_write()));

  ct::bandwidth_meter meter;
  const double bytes = double(n) * (6 + 3) * sizeof(float);
  const double record_bytes = 2.0 * double(n) * sizeof(Particle);  // staged records: read and written whole
  double soa_ratio = 0, tiles_ratio = 0, records_ratio = 0, pointer_ratio = 0;
  for (int round = 0; round < 3; ++round) {
    soa_ratio = std::max(soa_ratio, meter.measure(on_soa, bytes).ratio_to_memcpy);
    tiles_ratio = std::max(tiles_ratio, meter.measure(on_tiles, bytes).ratio_to_memcpy);
    records_ratio = std::max(records_ratio, meter.measure(on_records, record_bytes).ratio_to_memcpy);
    pointer_ratio = std::max(pointer_ratio, meter.measure(on_pointer, record_bytes).ratio_to_memcpy);
  }
  std::printf("particle update, ratio to cudaMemcpy (%.0f GB/s): soa %.3f, aosoa<32> %.3f (%.3f of soa); "
              "aos %.3f, staged Particle* %.3f (%.3f of it)\n",
              meter.memcpy_gigabytes_per_s(), soa_ratio, tiles_ratio, tiles_ratio / soa_ratio, records_ratio,
              pointer_ratio, records_ratio / pointer_ratio);
  {  // Wider tiles, for the record: how the ratio moves with a run's length.
    coalesce::vector<Particle, layout::aosoa<64>> tiles64(particles);
    coalesce::vector<Particle, layout::aosoa<128>> tiles128(particles);
    auto on_64 = [&](cudaStream_t s) { coalesce::for_each(tiles64.view(), f, s); };
    auto on_128 = [&](cudaStream_t s) { coalesce::for_each(tiles128.view(), f, s); };
    double r64 = 0, r128 = 0;
    for (int round = 0; round < 3; ++round) {
      r64 = std::max(r64, meter.measure(on_64, bytes).ratio_to_memcpy);
      r128 = std::max(r128, meter.measure(on_128, bytes).ratio_to_memcpy);
    }
    std::printf("particle update, ratio to cudaMemcpy: aosoa<64> %.3f, aosoa<128> %.3f\n", r64, r128);
  }
  CHECK(tiles_ratio >= 0.98 * soa_ratio);
  CHECK(records_ratio >= 0.95 * pointer_ratio);
}

TEST_CASE("convert between layouts of 32 M particles runs at copy bandwidth") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  COALESCE_REQUIRE_TIMING();
  const std::size_t n = std::size_t(32) << 20;
  const auto particles = coalesce_test::random_particles(n);
  coalesce::vector<Particle> soa(particles);
  coalesce::vector<Particle, layout::aosoa<32>> tiles(particles);
  coalesce::vector<Particle, layout::aos> records(particles);
  coalesce::vector<Particle> soa_out(n);
  coalesce::vector<Particle, layout::aosoa<32>> tiles_out(n);
  coalesce::vector<Particle, layout::aos> records_out(n);
  ct::bandwidth_meter meter;
  const double bytes = 2.0 * double(n) * sizeof(Particle);
  struct row {
    const char* name;
    double ratio;
  };
  auto measure = [&](const char* name, auto&& from, auto&& to) {
    auto launch = [&](cudaStream_t s) { coalesce::convert(from.const_view(), to.view(), s); };
    launch(0);
    double best = 0;
    for (int round = 0; round < 3; ++round) best = std::max(best, meter.measure(launch, bytes).ratio_to_memcpy);
    std::printf("convert %s: %.3f of cudaMemcpy\n", name, best);
    return row{name, best};
  };
  std::printf("\n");
  const row rows[] = {measure("soa -> aos", soa, records_out),         measure("aos -> soa", records, soa_out),
                      measure("soa -> aosoa<32>", soa, tiles_out),     measure("aosoa<32> -> soa", tiles, soa_out),
                      measure("aos -> aosoa<32>", records, tiles_out), measure("aosoa<32> -> aos", tiles, records_out)};
  for (const row& r : rows) {
    INFO(r.name);
    CHECK(r.ratio >= 0.95);
  }
}

namespace {

// One element a thread, its vx read: what model::field_access prices for each layout.
template <class View>
__global__ void read_vx(View particles, float* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < particles.size()) out[i] = particles[i].vx;
}

template <class Layout>
void hold_the_model_to_the_counters(const std::vector<Particle>& particles, float* out) {
  const coalesce::vector<Particle, Layout> v(particles);
  const std::size_t n = particles.size();
  const auto view = v.const_view();
  const auto m = coalesce_test::profiler().measure([&] { read_vx<<<unsigned((n + 255) / 256), 256>>>(view, out); });
  const auto predicted =
      coalesce::model::field_access<Particle, Layout, 3>(0, unsigned(n), offsetof(Particle, vx)).sectors_per_request();
  std::printf("reading vx, one element a thread: load sectors per request %.2f, the model %.2f\n",
              m.load_sectors_per_request(), predicted);
  CHECK(m.load_sectors_per_request() == Approx(predicted).epsilon(0.01));
}

}  // namespace

TEST_CASE("the model's sectors per request for one field of each layout hold against the counters") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  const std::size_t n = std::size_t(1) << 20;
  const auto particles = coalesce_test::random_particles(n);
  ct::device_buffer<float> out(n);
  std::printf("\n");
  hold_the_model_to_the_counters<layout::soa>(particles, out.data());
  hold_the_model_to_the_counters<layout::aosoa<32>>(particles, out.data());
  hold_the_model_to_the_counters<layout::aosoa<8>>(particles, out.data());
  hold_the_model_to_the_counters<layout::aos>(particles, out.data());
}
