// The host-side arithmetic of iterated stencils (detail/stencil_fusion.hpp): the fused walk's
// region and tile for each radius and element size, the sweeps a pass fuses, and how steps split
// into passes so that the result lands where single sweeps leave it. Then the fused walk's rules
// at the edge, replayed on the host: a pass computed tile by tile in a region with a shrinking
// halo, as stencil_fused_kernel does, equals single sweeps bit for bit under every policy. The
// kernel itself is checked on a GPU by tests/device/stencil_iterate.cu.
#include <coalesce/boundary.hpp>
#include <coalesce/detail/stencil_fusion.hpp>

#include "coalesce_test.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace d = coalesce::detail;

TEST_CASE("the fused walk's region is 64 x 128 floats or 64 x 64 doubles, twice, in 64 KiB") {
  using floats = d::fused_geometry<1, 4>;
  STATIC_REQUIRE(floats::supported);
  STATIC_REQUIRE(floats::rows_per_thread == 8);
  STATIC_REQUIRE(floats::region_rows == 64);
  STATIC_REQUIRE(floats::region_cols == 128);
  STATIC_REQUIRE(floats::shared_bytes == 64 * 1024);
  STATIC_REQUIRE(floats::blocks_per_sm == 3);
  using doubles = d::fused_geometry<1, 8>;
  STATIC_REQUIRE(doubles::region_rows == 64);
  STATIC_REQUIRE(doubles::region_cols == 64);
  STATIC_REQUIRE(doubles::shared_bytes == 64 * 1024);
  // Radius 2: the floats' window, 12 x 5, still fits 8 rows a thread; the doubles' takes 4.
  STATIC_REQUIRE(d::fused_geometry<2, 4>::rows_per_thread == 8);
  STATIC_REQUIRE(d::fused_geometry<2, 4>::blocks_per_sm == 2);
  STATIC_REQUIRE(d::fused_geometry<2, 8>::rows_per_thread == 4);
  STATIC_REQUIRE(d::fused_geometry<2, 8>::region_rows == 32);
  STATIC_REQUIRE(d::fused_geometry<3, 4>::rows_per_thread == 4);
  // What the walk does not take: elements of other sizes, windows beyond the register budget.
  STATIC_REQUIRE(!d::fused_geometry<1, 2>::supported);
  STATIC_REQUIRE(!d::fused_geometry<1, 12>::supported);
  STATIC_REQUIRE(!d::fused_geometry<4, 4>::supported);
  STATIC_REQUIRE(!d::fused_geometry<3, 8>::supported);
}

TEST_CASE("a pass of k sweeps writes the region less k halos of R, and keeps a tile of 8 or more") {
  using floats = d::fused_geometry<1, 4>;
  STATIC_REQUIRE(floats::tile_rows(4) == 56);
  STATIC_REQUIRE(floats::tile_cols(4) == 120);
  STATIC_REQUIRE(floats::most_sweeps() == 28);
  STATIC_REQUIRE(d::fused_geometry<2, 4>::tile_rows(2) == 56);
  STATIC_REQUIRE(d::fused_geometry<2, 4>::most_sweeps() == 14);
  STATIC_REQUIRE(d::fused_geometry<2, 8>::most_sweeps() == 6);
  STATIC_REQUIRE(d::fused_geometry<1, 2>::most_sweeps() == 1);
}

namespace {

// Every thread row of the fused walk's block, every sweep of the most a pass holds: each output
// row the sweep computes reads, through its window, exactly the region rows li - R .. li + R, and
// every window row lies in the region (its shared memory), computed or not.
template <int R, std::size_t Size>
void check_window_rows() {
  using g = d::fused_geometry<R, Size>;
  constexpr int L = g::rows_per_thread, H = g::region_rows;
  for (int y = 0; y < int(d::fused_threads_y); ++y) {
    const int first_row = y * L;
    const d::fused_window_rows<R, L, H> rows(first_row);
    for (int i = 0; i < L + 2 * R; ++i) {
      CHECK(rows.row(first_row, i) >= 0);
      CHECK(rows.row(first_row, i) < H);
    }
    for (int s = 1; s <= g::most_sweeps(); ++s)
      for (int l = 0; l < L; ++l) {
        const int li = first_row + l;
        if (li < s * R || li >= H - s * R) continue;
        for (int dy = -R; dy <= R; ++dy) CHECK(rows.row(first_row, l + R + dy) == li + dy);
      }
  }
}

}  // namespace

TEST_CASE("a thread's window reads the rows around each output it computes, and nothing beyond the region") {
  check_window_rows<1, 4>();
  check_window_rows<2, 4>();
  check_window_rows<3, 4>();
  check_window_rows<1, 8>();
  check_window_rows<2, 8>();
}

TEST_CASE("a thread's rows in a sweep are visited once each, those outside it never") {
  constexpr int L = 8;
  for (int first_row = 0; first_row < 64; first_row += L)
    for (int lo = 0; lo <= 8; ++lo)
      for (int end = 56; end <= 64; ++end) {
        std::vector<int> visits(L, 0);
        d::for_rows_in<L>(first_row, lo, end, [&](int l, int li) {
          CHECK(li == first_row + l);
          ++visits[std::size_t(l)];
        });
        for (int l = 0; l < L; ++l) {
          const int li = first_row + l;
          CHECK(visits[std::size_t(l)] == (li >= lo && li < end ? 1 : 0));
        }
      }
}

TEST_CASE("the automatic choice fuses 5 sweeps at radius 1 and 3 at radius 2 on floats, none where it cannot gain") {
  STATIC_REQUIRE(d::automatic_fused_sweeps<1, 4>() == 5);
  STATIC_REQUIRE(d::automatic_fused_sweeps<2, 4>() == 3);
  STATIC_REQUIRE(d::automatic_fused_sweeps<1, 8>() == 4);
  STATIC_REQUIRE(d::automatic_fused_sweeps<2, 8>() == 2);
  STATIC_REQUIRE(d::automatic_fused_sweeps<3, 4>() == 2);
  STATIC_REQUIRE(d::automatic_fused_sweeps<3, 8>() == 1);  // the walk cannot take it: single sweeps
  STATIC_REQUIRE(d::automatic_fused_sweeps<1, 2>() == 1);
  // The chosen k is the least modelled cost among those the walk can fuse.
  for (int k = 1; k <= d::fused_geometry<1, 4>::most_sweeps(); ++k)
    CHECK(d::fused_pass_cost<1, 4>(k) >= d::fused_pass_cost<1, 4>(5));
  // And fusing 5 sweeps is modelled at more than 3.5 times the band walk's 8 B of DRAM a float sweep.
  const double band_walk = 8.0 / d::fused_dram_bytes_per_clock;
  CHECK(band_walk / d::fused_pass_cost<1, 4>(5) > 3.5);
}

TEST_CASE("steps split into passes of at most k whose count has the parity of steps") {
  STATIC_REQUIRE(d::plan_fused_passes(0, 4).passes == 0);
  constexpr auto one = d::plan_fused_passes(3, 4);  // one pass: 3 sweeps u -> v
  STATIC_REQUIRE(one.passes == 1 && one.sweeps == 3 && one.longer == 0);
  constexpr auto four = d::plan_fused_passes(4, 4);  // one pass would leave the result in v
  STATIC_REQUIRE(four.passes == 2 && four.sweeps == 2 && four.longer == 0);
  constexpr auto seven = d::plan_fused_passes(7, 4);  // 3 + 2 + 2
  STATIC_REQUIRE(seven.passes == 3 && seven.sweeps_of(0) == 3 && seven.sweeps_of(1) == 2 && seven.sweeps_of(2) == 2);
  constexpr auto hundred = d::plan_fused_passes(100, 4);  // 26 passes: 22 of 4, 4 of 3
  STATIC_REQUIRE(hundred.passes == 26 && hundred.longest() == 4 && hundred.longer == 22);
  for (std::size_t k = 1; k <= 9; ++k)
    for (std::size_t steps = 1; steps <= 300; ++steps) {
      const auto plan = d::plan_fused_passes(steps, k);
      std::size_t sum = 0;
      for (std::size_t p = 0; p < plan.passes; ++p) {
        const std::size_t s = plan.sweeps_of(p);
        CHECK(s >= 1);
        CHECK(s <= k);
        sum += s;
      }
      CHECK(sum == steps);
      CHECK(plan.passes % 2 == steps % 2);
      CHECK(plan.passes <= (steps + k - 1) / k + 1);
    }
}

// --- the fused walk's edge rules, replayed on the host ------------------------------------------

namespace {

// A radius-1 9-point box and a radius-2 13-point star: sums, then one multiply.
struct box {
  static constexpr int radius = 1;
  template <class N>
  float operator()(const N& n) const {
    return (1.0f / 9.0f) *
           (n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -1) + n(0, 0) + n(0, 1) + n(1, -1) + n(1, 0) + n(1, 1));
  }
};
struct star {
  static constexpr int radius = 2;
  template <class N>
  float operator()(const N& n) const {
    return (1.0f / 13.0f) * (n(-2, 0) + n(-1, -1) + n(-1, 0) + n(-1, 1) + n(0, -2) + n(0, -1) + n(0, 0) + n(0, 1) +
                             n(0, 2) + n(1, -1) + n(1, 0) + n(1, 1) + n(2, 0));
  }
};

struct matrix {
  long long rows, cols;
  std::vector<float> v;
  float& at(long long r, long long c) { return v[std::size_t(r * cols + c)]; }
  float at(long long r, long long c) const { return v[std::size_t(r * cols + c)]; }
};

template <class Policy>
constexpr bool is_interior = std::is_same_v<Policy, coalesce::interior_t>;

// What a single sweep reads at (i, j) of `in` under the policy.
template <class Policy>
float read(const Policy& policy, const matrix& in, long long i, long long j) {
  const long long r = coalesce::boundary_index(policy, i, in.rows), c = coalesce::boundary_index(policy, j, in.cols);
  if constexpr (coalesce::is_constant_policy_v<Policy>)
    if (r < 0 || c < 0) return policy.value;
  return in.at(r, c);
}

// A neighbourhood of a dense array, as f sees it.
struct window {
  const float* centre;
  long long stride;
  float operator()(int dr, int dc) const { return centre[dr * stride + dc]; }
};

// One single sweep, as coalesce::stencil<R>(policy, in, out, f) computes it.
template <int R, class Policy, class F>
void single_sweep(const Policy& policy, const matrix& in, matrix& out, const F& f) {
  std::vector<float> patch((2 * R + 1) * (2 * R + 1));
  for (long long i = 0; i < in.rows; ++i)
    for (long long j = 0; j < in.cols; ++j) {
      if constexpr (is_interior<Policy>)
        if (!coalesce::interior_contains(R, i, in.rows) || !coalesce::interior_contains(R, j, in.cols)) continue;
      for (int dr = -R; dr <= R; ++dr)
        for (int dc = -R; dc <= R; ++dc) patch[(dr + R) * (2 * R + 1) + dc + R] = read(policy, in, i + dr, j + dc);
      out.at(i, j) = f(window{&patch[R * (2 * R + 1) + R], 2 * R + 1});
    }
}

// One pass of k sweeps from `in` (time t0) into `out`, tile by tile, as stencil_fused_kernel does
// it: a region of h x w (the tile and k halos of R) loaded as a single sweep reads it, each sweep
// computing f everywhere in a region R smaller on each side, then the edge's elements set, and
// the last sweep storing the tile's elements that single sweeps store.
template <int R, class Policy, class F>
void fused_pass(const Policy& policy, const matrix& in, matrix& out, const matrix* border, std::size_t t0, int k, int h,
                int w, const F& f) {
  const long long rows = in.rows, cols = in.cols, tile_rows = h - 2 * k * R, tile_cols = w - 2 * k * R;
  const auto decided_by_edge = [&](long long i, long long j) {
    if constexpr (is_interior<Policy>)
      return !coalesce::interior_contains(R, i, rows) || !coalesce::interior_contains(R, j, cols);
    else return i < 0 || i >= rows || j < 0 || j >= cols;
  };
  for (long long r0 = 0; r0 < rows; r0 += tile_rows)
    for (long long c0 = 0; c0 < cols; c0 += tile_cols) {
      const long long top = r0 - k * R, left = c0 - k * R;
      std::vector<float> from(std::size_t(h * w)), to(std::size_t(h * w));
      const auto set_edge = [&](std::vector<float>& region, int s) {
        for (int li = s * R; li < h - s * R; ++li)
          for (int lj = s * R; lj < w - s * R; ++lj) {
            const long long i = top + li, j = left + lj;
            if (!decided_by_edge(i, j)) continue;
            const long long ci = coalesce::boundary_index(coalesce::clamp, i, rows),
                            cj = coalesce::boundary_index(coalesce::clamp, j, cols);
            float& e = region[std::size_t(li * w + lj)];
            if constexpr (is_interior<Policy>) e = border[(t0 + std::size_t(s)) & 1].at(ci, cj);
            else if constexpr (coalesce::is_constant_policy_v<Policy>) e = policy.value;
            else if constexpr (std::is_same_v<Policy, coalesce::clamp_t>) {
              REQUIRE(ci - top >= s * R);  // the nearest edge element is in the sweep's region
              REQUIRE(ci - top < h - s * R);
              REQUIRE(cj - left >= s * R);
              REQUIRE(cj - left < w - s * R);
              e = region[std::size_t((ci - top) * w + (cj - left))];
            }
          }
      };
      for (int li = 0; li < h; ++li)
        for (int lj = 0; lj < w; ++lj) from[std::size_t(li * w + lj)] = read(policy, in, top + li, left + lj);
      if constexpr (is_interior<Policy>) set_edge(from, 0);
      for (int s = 1; s <= k; ++s) {
        for (int li = s * R; li < h - s * R; ++li)
          for (int lj = s * R; lj < w - s * R; ++lj) {
            const float value = f(window{&from[std::size_t(li * w + lj)], w});
            const long long i = top + li, j = left + lj;
            if (s < k) to[std::size_t(li * w + lj)] = value;
            else if (i < rows && j < cols && !(is_interior<Policy> && decided_by_edge(i, j))) out.at(i, j) = value;
          }
        if (s < k && !std::is_same_v<Policy, coalesce::periodic_t>) set_edge(to, s);
        std::swap(from, to);
      }
    }
}

template <class Shape, class Policy>
void check_fused_equals_single(const Policy& policy, long long rows, long long cols, std::size_t steps, int k, int h,
                               int w) {
  constexpr int R = Shape::radius;
  INFO("radius " << R << ", " << rows << " x " << cols << ", " << steps << " steps, k = " << k << ", region " << h
                 << " x " << w);
  matrix u{rows, cols, {}}, v{rows, cols, {}};
  std::uint32_t state = 12345;
  for (long long i = 0; i < rows * cols; ++i) {
    state = state * 1664525u + 1013904223u;
    u.v.push_back(float(state >> 8) / float(1 << 24));
    v.v.push_back(-7.0f - float(i % 5));  // a border unlike u's
  }
  matrix a = u, b = v;  // single sweeps
  for (std::size_t s = 0; s < steps; ++s) {
    single_sweep<R>(policy, a, b, Shape{});
    std::swap(a, b);
  }
  const matrix& expected = a;  // u's after an even number, v's after an odd one

  const matrix border[2] = {u, v};
  matrix x = u, y = v;
  const auto plan = d::plan_fused_passes(steps, std::size_t(k));
  std::size_t t0 = 0;
  for (std::size_t p = 0; p < plan.passes; ++p) {
    const int sweeps = int(plan.sweeps_of(p));
    fused_pass<R>(policy, x, y, border, t0, sweeps, h, w, Shape{});
    t0 += std::size_t(sweeps);
    std::swap(x, y);
  }
  const matrix& result = x;
  for (long long i = 0; i < rows; ++i)
    for (long long j = 0; j < cols; ++j)
      if (result.at(i, j) != expected.at(i, j))
        FAIL("(" << i << ", " << j << "): fused " << result.at(i, j) << ", single sweeps " << expected.at(i, j));
}

template <class Shape>
void check_every_policy(long long rows, long long cols, std::size_t steps, int k, int h, int w) {
  check_fused_equals_single<Shape>(coalesce::clamp, rows, cols, steps, k, h, w);
  check_fused_equals_single<Shape>(coalesce::periodic, rows, cols, steps, k, h, w);
  check_fused_equals_single<Shape>(coalesce::constant(1.5f), rows, cols, steps, k, h, w);
  if (rows > 2 * Shape::radius && cols > 2 * Shape::radius)
    check_fused_equals_single<Shape>(coalesce::interior, rows, cols, steps, k, h, w);
}

}  // namespace

TEST_CASE("a pass of fused sweeps equals single sweeps bit for bit under every policy, on the host") {
  // Small regions (16 x 24), so that tiles are many and shapes span several of them, beyond the
  // edge on every side; shapes not multiples of a tile, narrower than the halo, one row.
  for (const auto& [rows, cols] : {std::pair<long long, long long>{37, 53}, {37, 5}, {1, 40}, {6, 7}, {29, 1}})
    for (const std::size_t steps : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(7), std::size_t(9)}) {
      check_every_policy<box>(rows, cols, steps, 3, 16, 24);
      check_every_policy<box>(rows, cols, steps, 2, 16, 24);
      check_every_policy<star>(rows, cols, steps, 2, 16, 24);
    }
}
