// transform and transform_reduce over coalesce::inputs(a, b, ...), and transform into a soa_view
// (issue 32, point 2): several inputs of one shape (spans, soa_views, pitched views, volumes,
// containers), f called with one element of each; a soa_view output written whole, its columns
// stored and never loaded; an input that is the output (in place) allowed, any other overlap
// refused; shapes that differ refused, naming them. Integer-valued data, so that every
// comparison is exact, against results the host computes itself; hardware counters for the bytes
// each form loads and stores.
#include <coalesce/algorithm.hpp>
#include <coalesce/inputs.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_span.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cuda/std/functional>
#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

// BabelStream's three arrays as the columns of one vector.
struct Stream3 {
  double a, b, c;
};
COALESCE_FIELDS(Stream3, a, b, c);

// Two outputs of different sizes, and a 12-byte leaf kept whole (staged through shared memory).
struct Vec3 {
  float x, y, z;
};
template <>
struct coalesce::keep_whole<Vec3> : std::true_type {};
struct Split {
  Vec3 p;
  std::int32_t k;
  double w;
};
COALESCE_FIELDS(Split, p, k, w);

namespace {

std::vector<double> whole_numbers(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 draw(ct::test_seed() + salt);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<double> v(n);
  for (auto& x : v) x = value(draw);
  return v;
}

void check_doubles(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  std::size_t wrong = 0, first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && wrong++ == 0) first = i;
  INFO(what << ": " << wrong << " of " << got.size() << " wrong, the first at " << first);
  CHECK(wrong == 0);
}

struct triad {
  double scalar;
  __device__ double operator()(double b, double c) const { return b + scalar * c; }
};
// Three inputs of three kinds: a span, a soa_view's element, a pitched... (here: another span).
struct mixed {
  __device__ double operator()(double a, coalesce::soa_reference_t<const Stream3> s, double z) const {
    return a * 3 + s.b - s.c * 2 + z;
  }
};
// One input, a whole struct out (f returns the output's element).
struct spread {
  __device__ Split operator()(double a, double b) const {
    return Split{Vec3{float(a), float(b), float(a - b)}, std::int32_t(a) * 7, a * b};
  }
};
struct dot {
  __device__ double operator()(double a, double b) const { return a * b; }
};

}  // namespace

TEST_CASE("transform of two spans into a third computes c = b + s c at every position, heads and tails included") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n :
       {std::size_t(1), std::size_t(3), std::size_t(31), std::size_t(4097), std::size_t(1000003)}) {
    for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      const auto b = whole_numbers(n + offset, 1), c = whole_numbers(n + offset, 2);
      ct::device_buffer<double> db(b), dc(c), out(n + offset);
      out.poison();
      const cuda::std::span<const double> sb(db.data() + offset, n), sc(dc.data() + offset, n);
      coalesce::transform(coalesce::inputs(sb, sc), cuda::std::span<double>(out.data() + offset, n), triad{3.0});
      ct::check_sync("transform of two inputs");
      const auto got = out.download();
      std::vector<double> want(got.begin(), got.begin() + offset);  // not written: still the poison
      for (std::size_t i = 0; i < n; ++i) want.push_back(b[offset + i] + 3.0 * c[offset + i]);
      INFO("n = " << n << ", offset " << offset);
      std::vector<double> tail(got.begin() + offset, got.end()), want_tail(want.begin() + offset, want.end());
      check_doubles(tail, want_tail, "the output");
    }
  }
}

TEST_CASE(
    "transform takes a span, a soa_view and a container's column together, and writes a column of the vector in place") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto a = whole_numbers(n, 3), b = whole_numbers(n, 4), c = whole_numbers(n, 5), z = whole_numbers(n, 6);
  std::vector<Stream3> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = Stream3{a[i], b[i], c[i]};
  coalesce::soa_vector<Stream3> v(rows);
  ct::device_buffer<double> dz(z);
  const auto sa = coalesce::column_span<&Stream3::a>(v.const_view());
  const auto out = coalesce::column_span<&Stream3::a>(v.view());  // the first input's own column: in place
  coalesce::transform(coalesce::inputs(sa, v, cuda::std::span<const double>(dz.data(), n)), out, mixed{});
  const auto got = v.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double want = a[i] * 3 + b[i] - c[i] * 2 + z[i];
    wrong += got[i].a != want || got[i].b != b[i] || got[i].c != c[i];
  }
  CHECK(wrong == 0);
}

TEST_CASE("transform into a soa_view writes every column of f's result, a staged 12-byte column among them") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(5), std::size_t(257), std::size_t(1 << 20)}) {
    const auto a = whole_numbers(n, 7), b = whole_numbers(n, 8);
    ct::device_buffer<double> da(a), db(b);
    coalesce::soa_vector<Split> out(n);
    coalesce::for_each(out, [] __device__(auto&& e) {  // poison: what transform misses stays wrong
      e.p = Vec3{-1.f, -1.f, -1.f};
      e.k = -1;
      e.w = -1;
    });
    coalesce::transform(coalesce::inputs(cuda::std::span<const double>(da.data(), n),
                                         cuda::std::span<const double>(db.data(), n)),
                        out.view(), spread{});
    const auto got = out.to_vector();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Split& s = got[i];
      wrong += s.p.x != float(a[i]) || s.p.y != float(b[i]) || s.p.z != float(a[i] - b[i]) ||
               s.k != std::int32_t(a[i]) * 7 || s.w != a[i] * b[i];
    }
    INFO("n = " << n);
    CHECK(wrong == 0);
  }
}

TEST_CASE("transform over inputs of pitched matrices and of volumes walks their rows") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 37, cols = 1001;
  const auto x = whole_numbers(rows * cols, 9), y = whole_numbers(rows * cols, 10);
  coalesce::pitched_matrix<double> mx(x, rows, cols), my(y, rows, cols), out(rows, cols);
  coalesce::transform(coalesce::inputs(mx, my.view()), out.view(), dot{});
  auto got = out.to_vector();
  std::vector<double> want(rows * cols);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = x[i] * y[i];
  check_doubles(got, want, "the matrix");

  const std::size_t depth = 5, height = 9, width = 131;
  const auto p = whole_numbers(depth * height * width, 11), q = whole_numbers(depth * height * width, 12);
  coalesce::pitched_volume<double> vp(p, depth, height, width), vq(q, depth, height, width), vout(depth, height, width);
  coalesce::transform(coalesce::inputs(vp.const_view(), vq), vout.view(), triad{-2.0});
  got = vout.to_vector();
  want.assign(p.size(), 0.0);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = p[i] - 2.0 * q[i];
  check_doubles(got, want, "the volume");
}

TEST_CASE("transform_reduce over inputs(a, b) is the dot product, exact in whole numbers") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1000001)}) {
    const auto a = whole_numbers(n, 13), b = whole_numbers(n, 14);
    ct::device_buffer<double> da(a), db(b);
    double want = 0.5;
    for (std::size_t i = 0; i < n; ++i) want += a[i] * b[i];  // |sum| < 2^53: exact in any order
    const double got = coalesce::transform_reduce(coalesce::inputs(cuda::std::span<const double>(da.data(), n),
                                                                   cuda::std::span<const double>(db.data(), n)),
                                                  dot{}, 0.5, cuda::std::plus<>{});
    INFO("n = " << n);
    CHECK(got == want);
  }
}

TEST_CASE(
    "inputs of different shapes, and an input that overlaps the output without being it, are refused before any launch") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 1000;
  ct::device_buffer<double> a(std::vector<double>(n, 1.0)), b(std::vector<double>(n, 2.0));
  const cuda::std::span<const double> sa(a.data(), n), sb(b.data(), n - 1);
  try {
    coalesce::transform(coalesce::inputs(sa, sb), cuda::std::span<double>(b.data(), n), triad{1.0});
    FAIL("transform over inputs of 1000 and 999 elements did not throw");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("1 x 1000, 1 x 999") != std::string::npos);
  }
  try {
    // The output one element past the input: element i would read what thread i - 1 wrote.
    coalesce::transform(cuda::std::span<const double>(a.data(), n - 1), cuda::std::span<double>(a.data() + 1, n - 1),
                        [] __device__(double x) { return x + 1; });
    FAIL("transform into its own input shifted by one did not throw");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("overlaps the output") != std::string::npos);
  }
  ct::check_sync("the refusals");
  const auto untouched = a.download();
  CHECK(std::count(untouched.begin(), untouched.end(), 1.0) == std::ptrdiff_t(n));
}

TEST_CASE(
    "transform of two inputs loads the two and stores the one; into a soa_view it loads none of the output's columns") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = std::size_t(1) << 24;
  ct::device_buffer<double> a(whole_numbers(n, 15)), b(whole_numbers(n, 16)), c(n);
  coalesce::soa_vector<Stream3> v(n);
  const cuda::std::span<const double> sa(a.data(), n), sb(b.data(), n);
  const auto add = [&] {
    coalesce::transform(coalesce::inputs(sa, sb), cuda::std::span<double>(c.data(), n), triad{1.0});
  };
  const auto into_columns = [&] {
    coalesce::transform(coalesce::inputs(sa, sb), v.view(),
                        [] __device__(double x, double y) { return Stream3{x, y, x + y}; });
  };
  add();
  into_columns();
  ct::check_sync("the launches");
  COALESCE_REQUIRE_COUNTERS(coalesce_test::profiler());
  const double column_sectors = double(n) * sizeof(double) / 32;
  const auto two_in = coalesce_test::profiler().measure(add);
  std::printf("\ntransform(inputs(a, b), c) over %zu doubles: %.0f load sectors (2 columns: %.0f), %.0f store sectors "
              "(1 column: %.0f), %.2f sectors a load request\n",
              n, two_in.global_load_sectors(), 2 * column_sectors, two_in.global_store_sectors(), column_sectors,
              two_in.load_sectors_per_request());
  CHECK(two_in.global_load_sectors() == Approx(2 * column_sectors).epsilon(0.001));
  CHECK(two_in.global_store_sectors() == Approx(column_sectors).epsilon(0.001));
  CHECK(two_in.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  const auto three_out = coalesce_test::profiler().measure(into_columns);
  std::printf("transform(inputs(a, b), soa_view of 3 columns): %.0f load sectors (2 columns: %.0f), %.0f store sectors "
              "(3 columns: %.0f)\n",
              three_out.global_load_sectors(), 2 * column_sectors, three_out.global_store_sectors(),
              3 * column_sectors);
  CHECK(three_out.global_load_sectors() == Approx(2 * column_sectors).epsilon(0.001));
  CHECK(three_out.global_store_sectors() == Approx(3 * column_sectors).epsilon(0.001));
}

TEST_CASE("for_each and transform over a subview touch exactly its elements, its columns offset from their alignment") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003, first = 3, count = n - 8;
  const auto a = whole_numbers(n, 17), b = whole_numbers(n, 18);
  std::vector<Stream3> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = Stream3{a[i], b[i], 0.0};
  coalesce::soa_vector<Stream3> v(rows);
  const auto part = v.view().subview(first, count);
  coalesce::for_each(part, [] __device__(auto&& e) { e.c = e.a - e.b; });
  ct::device_buffer<double> out(n);
  out.poison();
  coalesce::transform(coalesce::inputs(part, coalesce::column_span<&Stream3::b>(part)),
                      cuda::std::span<double>(out.data() + first, count),
                      [] __device__(coalesce::soa_reference_t<const Stream3> e, double bb) { return e.c * 2 + bb; });
  const auto got = v.to_vector();
  const auto written = out.download();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool inside = i >= first && i < first + count;
    const double c = inside ? a[i] - b[i] : 0.0;
    wrong += got[i].c != c || got[i].a != a[i] || got[i].b != b[i];
    if (inside) wrong += written[i] != c * 2 + b[i];
    else wrong += !(written[i] != written[i]);  // still the poison (a NaN)
  }
  CHECK(wrong == 0);
}
