// coalesce::stencil along a line (issue 32, point 4): cuda::std::spans in and out, and a column of
// a soa_view through column_span. Exact against the host reference for radius 1, 2 and 3 under
// every boundary policy, at every length from 1 up and at every head (spans starting 0 to 3
// elements into an allocation, so some take the element walk); two inputs; doubles; a shape with
// no interior element refused under interior, in place refused; and the bandwidth against the
// hand-written line stencils (tests/support/line_stencils.hpp) in the same process.
#include <coalesce/soa.hpp>
#include <coalesce/soa_span.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "line_stencils.hpp"
#include "targets.hpp"

#include <cuda/std/span>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::five_point_line;
using coalesce_test::three_point_line;

struct Column3 {
  float u, v, w;
};
COALESCE_FIELDS(Column3, u, v, w);

namespace {

// A radius-3 shape with signs that differ by side, so a neighbour read from the wrong side shows
// (sums and differences only: nothing nvcc may contract into a fused multiply-add).
struct seven_point_weighted {
  static constexpr int radius = 3;
  template <class N>
  __host__ __device__ auto operator()(const N& n) const {
    using T = typename N::value_type;
    return T(0.125) * ((((n(-3) - n(3)) + (n(-2) + n(2))) - (n(-1) - n(1))) + n(0));
  }
};

template <class T>
std::size_t count_wrong(const std::vector<T>& got, const std::vector<T>& want, std::size_t& first) {
  std::size_t wrong = 0;
  first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]) && wrong++ == 0) first = i;
  return wrong;
}

// stencil<R>(policy, span, span, shape) on `n` values starting `head` elements into their
// allocations, against the host.
template <class Shape, class T, class Policy>
void check_line(const Policy& policy, std::size_t n, std::size_t head, const std::string& policy_name) {
  constexpr int R = Shape::radius;
  const auto values = ct::random_values<T>(n + head);
  const std::vector<T> in_host(values.begin() + std::ptrdiff_t(head), values.end());
  ct::device_buffer<T> in(values), out(std::vector<T>(n + head, T(-7)));
  std::vector<T> want(n, T(-7));
  coalesce_test::reference_line_stencil<R>(policy, in_host, want, Shape{});
  coalesce::stencil<R>(policy, cuda::std::span<const T>(in.data() + head, n), cuda::std::span<T>(out.data() + head, n),
                       [] __device__(auto nb) { return Shape{}(nb); });
  const auto all = out.download();
  const std::vector<T> got(all.begin() + std::ptrdiff_t(head), all.end());
  std::size_t first = 0;
  const std::size_t wrong = count_wrong(got, want, first);
  INFO("radius " << R << ", " << policy_name << ", " << n << " elements from " << head << " in: " << wrong
                 << " wrong, the first at " << first);
  CHECK(wrong == 0);
  for (std::size_t i = 0; i < head; ++i) CHECK(all[i] == T(-7));  // nothing before the span written
}

template <class Shape, class T>
void check_every_policy(std::size_t n, std::size_t head) {
  check_line<Shape, T>(coalesce::clamp, n, head, "clamp");
  check_line<Shape, T>(coalesce::periodic, n, head, "periodic");
  check_line<Shape, T>(coalesce::constant(T(3)), n, head, "constant(3)");
  if (n > 2 * std::size_t(Shape::radius)) check_line<Shape, T>(coalesce::interior, n, head, "interior");
}

}  // namespace

TEST_CASE(
    "stencil along a span equals the host reference for radius 1, 2 and 3 under every policy, every length and head") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 17, 1023, 4099, 1000003};
  for (const std::size_t n : lengths) {
    if (ct::small_problems() && n > 4099) continue;  // racecheck takes minutes over a million
    for (std::size_t head = 0; head < 4; ++head) {
      check_every_policy<three_point_line, float>(n, head);
      check_every_policy<five_point_line, float>(n, head);
      check_every_policy<seven_point_weighted, float>(n, head);
    }
    check_every_policy<three_point_line, double>(n, 0);
    check_every_policy<seven_point_weighted, double>(n, 1);  // R = 3 wider than 2 doubles: the element walk
  }
}

TEST_CASE("stencil along a line takes two inputs, and a soa_view's columns in and out") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 100003;
  const auto u = ct::random_values<float>(n, 11), v = ct::random_values<float>(n, 12);
  std::vector<Column3> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = {u[i], v[i], -1.0f};
  coalesce::soa_vector<Column3> columns(rows);
  // w = u(-1) - v(1), periodic: two inputs, columns of one vector, the output a third.
  coalesce::stencil<1>(coalesce::periodic,
                       coalesce::inputs(coalesce::column_span<&Column3::u>(columns.const_view()),
                                        coalesce::column_span<&Column3::v>(columns.const_view())),
                       coalesce::column_span<&Column3::w>(columns.view()),
                       [] __device__(auto a, auto b) { return a(-1) - b(1); });
  const auto got = columns.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float want = u[(i + n - 1) % n] - v[(i + 1) % n];
    wrong += got[i].w != want || got[i].u != u[i] || got[i].v != v[i];
  }
  CHECK(wrong == 0);
}

TEST_CASE("stencil along a line refuses a line with no interior element under interior, and in place") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  ct::device_buffer<float> in(std::vector<float>(8, 1.0f)), out(std::vector<float>(8, -7.0f));
  const auto f = [] __device__(auto nb) { return nb(-2) + nb(2); };
  try {
    coalesce::stencil<2>(coalesce::interior, cuda::std::span<const float>(in.data(), 4),
                         cuda::std::span<float>(out.data(), 4), f);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("the output is 4 elements") != std::string::npos);
    CHECK(what.find("coalesce::interior") != std::string::npos);
  }
  CHECK_THROWS_AS(coalesce::stencil<1>(cuda::std::span<const float>(out.data(), 8),
                                       cuda::std::span<float>(out.data() + 1, 7), f),
                  std::invalid_argument);  // shapes differ
  CHECK_THROWS_AS(coalesce::stencil<1>(cuda::std::span<const float>(out.data(), 8),
                                       cuda::std::span<float>(out.data(), 8), f),
                  std::invalid_argument);  // in place
  ct::check_sync("the refusals");
  for (const float x : out.download()) CHECK(x == -7.0f);  // nothing was launched
}

// f for coalesce::stencil: the shape itself (a functor: a device lambda cannot be defined in the
// template below).
template <class Shape>
struct apply_shape {
  template <class N>
  __device__ auto operator()(const N& nb) const {
    return Shape{}(nb);
  }
};

template <class Shape>
void measure_line(const char* name, ct::device_buffer<float>& in, ct::device_buffer<float>& out, std::size_t n) {
  const cuda::std::span<const float> in_span(in.data(), n);
  const cuda::std::span<float> out_span(out.data(), n);
  const auto library = [=](cudaStream_t s) {
    coalesce::stencil<Shape::radius>(coalesce::clamp, in_span, out_span, apply_shape<Shape>{}, s);
  };
  // Every competitor once, its result against coalesce's.
  library(0);
  const auto ours = out.download();
  std::vector<coalesce_test::candidate> competitors;
  for (auto& c : coalesce_test::competitors::line_stencil_clamped<Shape>(in.data(), out.data(), (long long)n)) {
    c.launch(0);
    ct::check_sync(c.name.c_str());
    INFO(name << ": " << c.name);
    CHECK(out.download() == ours);
    competitors.push_back({c.name, ct::row_role::competitor, c.launch});
  }
  COALESCE_REQUIRE_TIMING();
  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(
      meter, std::string(name) + " along a line of " + std::to_string(n) + " floats, clamp", library, competitors,
      2.0 * double(n) * sizeof(float));
  CHECK(c.library >= coalesce_test::targets::line_stencil_of_memcpy);
  CHECK(c.versus_best_competitor() >= coalesce_test::targets::versus_best_competitor);
}

TEST_CASE("stencil along a line reaches the hand-written line stencils and its share of cudaMemcpy") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = ct::small_problems() ? (std::size_t(1) << 16) + 3 : std::size_t(62500000);
  ct::device_buffer<float> in(ct::random_values<float>(n)), out(n);
  measure_line<three_point_line>("3-point mean", in, out, n);
  measure_line<five_point_line>("5-point mean", in, out, n);
}
