// for_each moves only the columns f touches (issue 32, point 1): a column f only writes is stored
// and never loaded, a column it only reads is never stored, a column it reads and writes is
// stored where its bits changed. Hardware counters for the bytes each form moves; exact results
// against the host, with writes made on a condition, at every position a walk has: the chunks, the
// heads and tails of sub-views, the element-by-element fallback for columns that never align
// alike, and a 12-byte column staged through shared memory. Also what f may do beside its element:
// atomics into a captured buffer.
#include <coalesce/algorithm.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

// BabelStream's three arrays as the columns of one vector.
struct Stream3 {
  float a, b, c;
};
COALESCE_FIELDS(Stream3, a, b, c);

// A 12-byte leaf kept whole (staged through shared memory a warp at a time) beside numbers.
struct Vec3 {
  float x, y, z;
};
template <>
struct coalesce::keep_whole<Vec3> : std::true_type {};
struct Staged {
  Vec3 p;
  float q;
  std::int32_t k;
};
COALESCE_FIELDS(Staged, p, q, k);

namespace {

std::vector<Stream3> whole_numbers(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 draw(ct::test_seed() + salt);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<Stream3> v(n);
  for (auto& s : v) s = {float(value(draw)), float(value(draw)), float(value(draw))};
  return v;
}

bool same(const Stream3& x, const Stream3& y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

// The forms of f, each with what the host expects of it.
struct copy_a_into_c {  // BabelStream's Copy: c is only written
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a;
  }
  static Stream3 on_host(Stream3 s) { return {s.a, s.b, s.a}; }
};
struct add_into_c {  // Add: a and b read, c only written
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a + e.b;
  }
};
struct read_then_write_c {  // c read, then written: stored where it changed
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.c + e.a;
  }
};
struct rewrite_c_unchanged {  // c read and written back with the bits it had (no -0 in the data): never stored
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.c + 0.0f;
  }
};
struct assign_whole {  // every field written, none read: nothing loaded
  template <class E>
  __device__ void operator()(E&& e) const {
    e = Stream3{1.0f, 2.0f, 3.0f};
  }
};
// Written only where a condition holds, c also read afterwards, b written through a reference.
struct on_condition {
  template <class E>
  __device__ void operator()(E&& e) const {
    if (e.a > 0) e.c = e.a * 2;
    const float t = e.c;
    if (int(e.a) % 3 == 0) {
      float& b = e.b;
      b = t - 1;
    }
  }
  static Stream3 on_host(Stream3 s) {
    if (s.a > 0) s.c = s.a * 2;
    if (int(s.a) % 3 == 0) s.b = s.c - 1;
    return s;
  }
};
// Named the old way: takes the element as view[i]'s type, through its conversion.
struct named_reference {
  __device__ void operator()(coalesce::soa_reference_t<Stream3> e) const { e.c = e.a; }
};

template <class F>
void check_against_host(const std::vector<Stream3>& before, const std::vector<Stream3>& got, std::size_t first,
                        std::size_t count, const std::string& what) {
  REQUIRE(got.size() == before.size());
  std::size_t wrong = 0, at = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool inside = i >= first && i < first + count;
    if (!same(got[i], inside ? F::on_host(before[i]) : before[i]) && wrong++ == 0) at = i;
  }
  INFO(what << ": " << wrong << " of " << got.size() << " elements wrong, the first at " << at);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("for_each loads only the columns f reads and stores only those it writes") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = std::size_t(1) << 24;
  const auto start = whole_numbers(n, 1);
  coalesce::soa_vector<Stream3> v(start);
  const auto reset = [&] { v.assign(coalesce::soa_vector<Stream3, coalesce::host_space>(start)); };
  // Results first, exact.
  coalesce::for_each(v, copy_a_into_c{});
  check_against_host<copy_a_into_c>(start, v.to_vector(), 0, n, "e.c = e.a");
  reset();
  coalesce::for_each(v, named_reference{});
  check_against_host<copy_a_into_c>(start, v.to_vector(), 0, n, "e.c = e.a, f taking soa_reference_t");

  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  const double column = double(n) * sizeof(float) / 32;  // sectors of one column
  struct form {
    const char* what;
    std::function<void()> launch;
    double loads, stores;  // in columns
  };
  const std::vector<form> forms = {
      {"e.c = e.a", [&] { coalesce::for_each(v, copy_a_into_c{}); }, 1, 1},
      {"e.c = e.a + e.b", [&] { coalesce::for_each(v, add_into_c{}); }, 2, 1},
      {"e.c = e.c + e.a", [&] { coalesce::for_each(v, read_then_write_c{}); }, 2, 1},
      {"e.c = e.c + 0 (unchanged)", [&] { coalesce::for_each(v, rewrite_c_unchanged{}); }, 1, 0},
      {"e = Stream3{...}", [&] { coalesce::for_each(v, assign_whole{}); }, 0, 3},
      // The old way still works, and loads what it writes, as before.
      {"e.c = e.a, f taking soa_reference_t", [&] { coalesce::for_each(v, named_reference{}); }, 2, 1},
  };
  for (const auto& f : forms) {
    reset();  // c differs from a + c everywhere a is not 0: every store the form makes happens
    const auto counts = coalesce_test::profiler().measure(f.launch);
    std::printf("for_each %-38s %.0f load sectors (%.0f columns), %.0f store sectors (%.0f columns)\n", f.what,
                counts.global_load_sectors(), f.loads, counts.global_store_sectors(), f.stores);
    INFO(f.what);
    CHECK(counts.global_load_sectors() == Approx(f.loads * column).epsilon(0.001).margin(64));
    // e.c = e.c + e.a stores where a is not 0: whole numbers in [-1000, 1000], so a sector
    // (8 floats) is skipped only where 8 neighbours are all 0.
    CHECK(counts.global_store_sectors() == Approx(f.stores * column).epsilon(0.001).margin(64));
  }
}

TEST_CASE(
    "writes made on a condition are exact in the chunks, the heads and tails, and the element-by-element fallback") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 4099;
  const auto start = whole_numbers(n, 2);
  coalesce::soa_vector<Stream3> v(start);
  // Sub-views starting 0 to 4 elements in and ending short of the end: every head and tail.
  for (std::size_t first = 0; first < 5; ++first) {
    v.assign(coalesce::soa_vector<Stream3, coalesce::host_space>(start));
    const std::size_t count = n - first - (first % 3);
    coalesce::for_each(v.view().subview(first, count), on_condition{});
    check_against_host<on_condition>(start, v.to_vector(), first, count, "sub-view from " + std::to_string(first));
    v.assign(coalesce::soa_vector<Stream3, coalesce::host_space>(start));
    coalesce::for_each(v.view().subview(first, count), copy_a_into_c{});
    check_against_host<copy_a_into_c>(start, v.to_vector(), first, count,
                                      "e.c = e.a, sub-view from " + std::to_string(first));
  }
  // Columns that never align alike (b one element on from a and c): element by element.
  v.assign(coalesce::soa_vector<Stream3, coalesce::host_space>(start));
  auto columns = v.view().columns();
  columns[1] = static_cast<float*>(columns[1]) + 1;
  const coalesce::soa_view<Stream3> skewed(columns, n - 1);
  std::vector<Stream3> expected = start;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const Stream3 seen{start[i].a, start[i + 1].b, start[i].c};
    const Stream3 after = on_condition::on_host(seen);
    expected[i].a = after.a;
    expected[i + 1].b = after.b;
    expected[i].c = after.c;
  }
  coalesce::for_each(skewed, on_condition{});
  const auto got = v.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += !same(got[i], expected[i]);
  CHECK(wrong == 0);
}

TEST_CASE("a 12-byte column staged through shared memory is exact when f writes it on a condition or overwrites it") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  std::vector<Staged> start(n);
  for (std::size_t i = 0; i < n; ++i)
    start[i] = {{float(i), float(i % 7), -float(i)}, float(i % 5), std::int32_t(i % 11)};
  coalesce::soa_vector<Staged> v(start);
  coalesce::for_each(v, [] __device__(auto&& s) {
    if (s.k % 2 == 0) s.p = Vec3{s.q, s.q, s.q};  // the staged column, written on a condition
    s.q = float(s.k);                              // overwritten everywhere
  });
  auto got = v.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Staged want = start[i];
    if (want.k % 2 == 0) want.p = {want.q, want.q, want.q};
    want.q = float(want.k);
    wrong += got[i].p.x != want.p.x || got[i].p.y != want.p.y || got[i].p.z != want.p.z || got[i].q != want.q ||
             got[i].k != want.k;
  }
  CHECK(wrong == 0);
}

TEST_CASE("f may write other memory through what it captures: atomics into a device buffer") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 1000003;
  const auto start = whole_numbers(n, 3);
  coalesce::soa_vector<Stream3> v(start);
  ct::device_buffer<unsigned long long> positives(std::vector<unsigned long long>{0});
  unsigned long long* count = positives.data();
  coalesce::for_each(v, [count] __device__(auto&& e) {
    if (e.a > 0) atomicAdd(count, 1ull);
    e.c = e.a;
  });
  unsigned long long want = 0;
  for (const auto& s : start) want += s.a > 0;
  CHECK(positives.download()[0] == want);
  check_against_host<copy_a_into_c>(start, v.to_vector(), 0, n, "e.c = e.a beside the atomics");
}
