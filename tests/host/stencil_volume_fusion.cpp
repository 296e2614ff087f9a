// The host-side arithmetic of iterated stencils on volumes (detail/stencil_volume_fusion.hpp): the
// fused volume walk's region, rings, queues and shared memory for each radius and element size, the
// sweeps a pass fuses, and the schedule of a block's walk along z, its steady steps included. Then
// the walk itself, replayed on the host with that schedule: sweeps advancing one plane a step, each
// lagging the one before by R + 1 planes, in rings of 2R + 2 planes and queues of the 2R + 1 newest,
// the edge's planes filled or read from the edge plane, the in-plane edge set as the matrix walk
// sets it. The replay equals single sweeps bit for bit under every policy; the kernel that follows
// the same schedule is checked on a GPU by tests/device/stencil_iterate_volume.cu.
#include <coalesce/boundary.hpp>
#include <coalesce/detail/stencil_volume_fusion.hpp>

#include "coalesce_test.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace d = coalesce::detail;

TEST_CASE("the fused volume walk holds regions of 32 x 32 elements, padded, in rings of 2R + 2") {
  using floats = d::fused_volume_geometry<1, 4>;
  STATIC_REQUIRE(floats::region_rows == 32);
  STATIC_REQUIRE(floats::region_cols == 32);
  STATIC_REQUIRE(floats::ring_planes == 4);
  STATIC_REQUIRE(floats::plane_bytes == 34 * 32 * 4);  // a row of padding above and below
  // 68 KiB: sweeps 0 .. 3 keep rings, with a row of slack before and after them
  STATIC_REQUIRE(floats::shared_bytes(4) == 4 * 4 * 34 * 32 * 4 + 2 * 32 * 4);
  STATIC_REQUIRE(floats::supported);
  using doubles = d::fused_volume_geometry<1, 8>;
  STATIC_REQUIRE(doubles::plane_bytes == 34 * 32 * 8);
  using wide = d::fused_volume_geometry<2, 4>;
  STATIC_REQUIRE(wide::ring_planes == 6);
  STATIC_REQUIRE(wide::shared_bytes(2) == 2 * 6 * 36 * 32 * 4 + 2 * 32 * 4);  // 54 KiB
  STATIC_REQUIRE(d::fused_volume_geometry<2, 8>::supported);
  // What the walk does not take: other element sizes, radii beyond 2.
  STATIC_REQUIRE(!d::fused_volume_geometry<1, 2>::supported);
  STATIC_REQUIRE(!d::fused_volume_geometry<3, 4>::supported);
  STATIC_REQUIRE(d::fused_volume_geometry<3, 4>::most_sweeps() == 1);
}

TEST_CASE("a volume pass fuses at most 4 sweeps, keeps a tile of 8 or more, and holds its queues in 32 registers "
          "where they fit") {
  using floats = d::fused_volume_geometry<1, 4>;
  STATIC_REQUIRE(floats::tile_rows(3) == 26);
  STATIC_REQUIRE(floats::tile_cols(3) == 26);
  STATIC_REQUIRE(floats::most_sweeps() == 4);  // the tile would allow 12
  STATIC_REQUIRE(d::fused_volume_geometry<2, 4>::most_sweeps() == 4);  // a tile of 16
  STATIC_REQUIRE(d::fused_volume_geometry<2, 8>::most_sweeps() == 4);  // 216 KiB of rings
  // Queues of (2R + 1) k words: two blocks a multiprocessor up to 16 of them.
  STATIC_REQUIRE(floats::queue_words(4) == 12);
  STATIC_REQUIRE(floats::blocks_per_sm(4) == 2);
  STATIC_REQUIRE(d::fused_volume_geometry<2, 4>::blocks_per_sm(3) == 2);
  STATIC_REQUIRE(d::fused_volume_geometry<2, 4>::blocks_per_sm(4) == 1);
  STATIC_REQUIRE(d::fused_volume_geometry<1, 8>::blocks_per_sm(2) == 2);
  STATIC_REQUIRE(d::fused_volume_geometry<1, 8>::blocks_per_sm(3) == 1);
}

TEST_CASE("the automatic choice fuses 4 sweeps of floats at radius 1 and 2 of doubles, and none at radius 2") {
  constexpr std::size_t h200 = 227 * 1024, a100 = 163 * 1024, sm86 = 99 * 1024, sm75 = 64 * 1024;
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 4>(h200) == 4);
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 4>(a100) == 4);
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 8>(h200) == 2);
  // Radius 2: a step's latency over the tile of 3 sweeps is modelled slower than a single sweep's
  // DRAM time, so single sweeps.
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<2, 4>(h200) == 1);
  // Where two blocks' rings of 3 sweeps do not fit, k = 2 alone is modelled slower than single
  // sweeps.
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 4>(sm86) == 1);
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 4>(sm75) == 1);
  STATIC_REQUIRE(d::automatic_fused_volume_sweeps<1, 2>(h200) == 1);
  // The step's latency bounds every k at radius 1 (above its DRAM and shared-memory clocks), so the
  // cost falls as the tile's useful work grows with k; one block a multiprocessor doubles it.
  for (int k = 2; k <= 4; ++k) CHECK(d::fused_volume_pass_cost<1, 4>(k) >= d::fused_volume_pass_cost<1, 4>(4));
  CHECK(d::fused_volume_pass_cost<1, 4>(4) == Approx(d::fused_volume_step_clocks / 2 / (4.0 * 24 * 24)));
  const double single_sweep = 8.0 / d::fused_dram_bytes_per_clock;
  CHECK(single_sweep / d::fused_volume_pass_cost<1, 4>(4) > 1.25);
}

namespace {

// Whether step j of a schedule is steady, as the kernel's unrolled steps assume: every sweep
// computes, and reads planes of the sweep before that were computed as themselves.
template <int R>
bool steady(const d::volume_pass_schedule<R>& s, long long j) {
  for (int sweep = 0; sweep <= s.k; ++sweep) {
    const long long q = s.plane(sweep, j);
    if (s.work(sweep, q) != d::plane_work::compute) return false;
    if (sweep == 0) continue;
    for (int dz = -R; dz <= R; ++dz)
      if (s.source_plane(q, dz) != q + dz || s.work(sweep - 1, q + dz) != d::plane_work::compute) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the schedule: each sweep lags the one before by R + 1 planes and reads only planes written earlier") {
  using schedule = d::volume_pass_schedule<1>;
  for (const auto edge :
       {d::volume_edge::periodic, d::volume_edge::clamp, d::volume_edge::constant, d::volume_edge::interior})
    for (const long long out_lo : {0LL, 5LL, 40LL})
      for (const int k : {1, 2, 3, 5}) {
        const long long depth = 48, out_hi = out_lo + 8 < depth ? out_lo + 8 : depth;
        schedule s{edge, depth, out_lo, out_hi, k};
        s.origin = s.clean() ? 0 : s.first_steady();
        // Every plane of every sweep's range is taken at exactly one step; the last sweep takes
        // the chunk's output planes.
        for (int sweep = 0; sweep <= k; ++sweep) {
          long long taken = 0;
          for (long long j = 0; j < s.steps(); ++j)
            if (s.work(sweep, s.plane(sweep, j)) != d::plane_work::none) ++taken;
          CHECK(taken == s.hi(sweep) - s.lo(sweep));
        }
        CHECK(s.lo(k) <= out_lo);
        CHECK(s.hi(k) == out_hi);
        // What sweep s reads of sweep s - 1 was taken at an earlier step, and its ring slot is not
        // the one sweep s - 1 writes at this step.
        for (long long j = 0; j < s.steps(); ++j)
          for (int sweep = 1; sweep <= k; ++sweep) {
            const long long q = s.plane(sweep, j);
            if (s.work(sweep, q) != d::plane_work::compute) continue;
            for (int dz = -1; dz <= 1; ++dz) {
              const long long p = s.source_plane(q, dz);
              CHECK(s.work(sweep - 1, p) != d::plane_work::none);
              CHECK(p <= s.plane(sweep - 1, j - 1));
              CHECK(s.slot(p) != s.slot(s.plane(sweep - 1, j)));
            }
          }
        // The steady steps are exactly those of the range, and at the origin and every ring's
        // length after it every sweep's plane is in slot 0 (the kernel's slots at compile time).
        INFO("edge " << int(edge) << ", out_lo " << out_lo << ", k " << k);
        CHECK(s.first_steady() <= s.steady_end());
        for (long long j = 0; j < s.steps(); ++j) CHECK(steady(s, j) == (j >= s.first_steady() && j < s.steady_end()));
        for (long long j = s.origin; j < s.steps(); j += schedule::ring)
          for (int sweep = 0; sweep <= k; ++sweep) CHECK(s.slot(s.plane(sweep, j)) == (-sweep * 2 % 4 + 4) % 4);
        // A clean chunk's steps are ramp steps: each sweep computes at [ramp_first, ramp_end) and
        // takes nothing elsewhere, reading only planes of the sweep before computed as themselves.
        if (!s.clean()) continue;
        CHECK(s.first_steady() == schedule::ramp_first(k));
        CHECK(s.steady_end() == s.ramp_end(0));
        for (long long j = 0; j < s.steps() + schedule::ring; ++j)
          for (int sweep = 0; sweep <= k; ++sweep) {
            const long long q = s.plane(sweep, j);
            const bool computes = j >= schedule::ramp_first(sweep) && j < s.ramp_end(sweep);
            CHECK(s.work(sweep, q) == (computes ? d::plane_work::compute : d::plane_work::none));
            if (!computes || sweep == 0) continue;
            for (int dz = -1; dz <= 1; ++dz) {
              CHECK(s.source_plane(q, dz) == q + dz);
              CHECK(s.work(sweep - 1, q + dz) == d::plane_work::compute);
            }
          }
      }
  // Which chunks are clean: those whose sweeps' planes stay inside the volume (inside its interior
  // under interior).
  CHECK_FALSE((schedule{d::volume_edge::clamp, 48, 0, 8, 2}.clean()));
  CHECK((schedule{d::volume_edge::clamp, 48, 2, 10, 2}.clean()));
  CHECK_FALSE((schedule{d::volume_edge::interior, 48, 2, 10, 2}.clean()));
  CHECK((schedule{d::volume_edge::interior, 48, 3, 10, 2}.clean()));
  CHECK((schedule{d::volume_edge::periodic, 48, 38, 46, 2}.clean()));
  CHECK_FALSE((schedule{d::volume_edge::periodic, 48, 38, 47, 2}.clean()));
  // A chunk in the middle of a deep volume is steady but for the steps at its ends: while the
  // sweeps start (k (2R + 1) steps) and after sweep 0 has run out (the last kR steps).
  const schedule middle{d::volume_edge::clamp, 512, 64, 128, 4};
  CHECK(middle.first_steady() == 4 * 3);
  CHECK(middle.steady_end() == middle.steps() - 4 * 1);
  CHECK(middle.steady_end() - middle.first_steady() == 64 - 4);
}

// --- the fused volume walk, replayed on the host -----------------------------------------------

namespace {

// A radius-1 7-point star, a radius-1 27-point box and a radius-2 13-point star: sums, then one
// multiply.
struct seven_point {
  static constexpr int radius = 1;
  template <class N>
  float operator()(const N& n) const {
    return (1.0f / 7.0f) *
           (n(0, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(0, -1, 0) + n(0, 1, 0) + n(0, 0, -1) + n(0, 0, 1));
  }
};
struct box {
  static constexpr int radius = 1;
  template <class N>
  float operator()(const N& n) const {
    float sum = 0.0f;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) sum += n(dz, dy, dx);
    return (1.0f / 27.0f) * sum;
  }
};
struct wide_star {
  static constexpr int radius = 2;
  template <class N>
  float operator()(const N& n) const {
    return (1.0f / 13.0f) *
           (n(0, 0, 0) + n(-2, 0, 0) + n(-1, 0, 0) + n(1, 0, 0) + n(2, 0, 0) + n(0, -2, 0) + n(0, -1, 0) + n(0, 1, 0) +
            n(0, 2, 0) + n(0, 0, -2) + n(0, 0, -1) + n(0, 0, 1) + n(0, 0, 2));
  }
};

struct volume {
  long long depth, rows, cols;
  std::vector<float> v;
  float& at(long long z, long long y, long long x) { return v[std::size_t((z * rows + y) * cols + x)]; }
  float at(long long z, long long y, long long x) const { return v[std::size_t((z * rows + y) * cols + x)]; }
};

template <class Policy>
constexpr bool is_interior = std::is_same_v<Policy, coalesce::interior_t>;

template <class Policy>
float read(const Policy& policy, const volume& in, long long z, long long y, long long x) {
  const long long pz = coalesce::boundary_index(policy, z, in.depth), py = coalesce::boundary_index(policy, y, in.rows),
                  px = coalesce::boundary_index(policy, x, in.cols);
  if constexpr (coalesce::is_constant_policy_v<Policy>)
    if (pz < 0 || py < 0 || px < 0) return policy.value;
  return in.at(pz, py, px);
}

// A neighbourhood of a dense array, as f sees it.
struct window {
  const float* centre;
  long long plane_stride, row_stride;
  float operator()(int dz, int dy, int dx) const { return centre[dz * plane_stride + dy * row_stride + dx]; }
};

// The fused walk's neighbourhood in a steady step: the position's own column from the queue (the
// planes q - R .. q + R of the sweep before, column[dz + R]), the rest from the ring.
template <int R>
struct queued_window {
  window ring;
  float column[2 * R + 1];
  float operator()(int dz, int dy, int dx) const { return dy == 0 && dx == 0 ? column[dz + R] : ring(dz, dy, dx); }
};

template <int R, class Policy, class F>
void single_sweep(const Policy& policy, const volume& in, volume& out, const F& f) {
  constexpr int S = 2 * R + 1;
  std::vector<float> patch(S * S * S);
  for (long long z = 0; z < in.depth; ++z)
    for (long long y = 0; y < in.rows; ++y)
      for (long long x = 0; x < in.cols; ++x) {
        if constexpr (is_interior<Policy>)
          if (!coalesce::interior_contains(R, z, in.depth) || !coalesce::interior_contains(R, y, in.rows) ||
              !coalesce::interior_contains(R, x, in.cols))
            continue;
        for (int dz = -R; dz <= R; ++dz)
          for (int dy = -R; dy <= R; ++dy)
            for (int dx = -R; dx <= R; ++dx)
              patch[((dz + R) * S + dy + R) * S + dx + R] = read(policy, in, z + dz, y + dy, x + dx);
        out.at(z, y, x) = f(window{&patch[(R * S + R) * S + R], S * S, S});
      }
}

// One pass of k sweeps from `in` (time t0) into `out`, as stencil_fused_volume_kernel does it:
// for each tile of h x w planes' regions and each chunk of `chunk` planes, the schedule's steps,
// sweeps taken in reverse order within a step (so that a read of a slot written at the same step
// would see the old plane, as a racing kernel might). Each sweep but the last pushes its plane
// (what its ring holds, the edge set) into a queue of the 2R + 1 newest at every step, as a poison
// value where it takes none; in the steady steps a sweep reads its positions' own columns from the
// queue of the sweep before, as the kernel does.
template <int R, class Policy, class F>
void fused_pass(const Policy& policy, const volume& in, volume& out, const volume* border, std::size_t t0, int k, int h,
                int w, long long chunk, const F& f) {
  const long long depth = in.depth, rows = in.rows, cols = in.cols;
  const long long tile_rows = h - 2 * k * R, tile_cols = w - 2 * k * R;
  constexpr d::volume_edge edge = d::volume_edge_of<Policy>();
  using schedule = d::volume_pass_schedule<R>;
  const std::size_t plane_size = std::size_t(h * w);
  const auto in_plane_edge = [&](long long y, long long x) {
    if constexpr (is_interior<Policy>)
      return !coalesce::interior_contains(R, y, rows) || !coalesce::interior_contains(R, x, cols);
    else return y < 0 || y >= rows || x < 0 || x >= cols;
  };
  for (long long r0 = 0; r0 < rows; r0 += tile_rows)
    for (long long c0 = 0; c0 < cols; c0 += tile_cols)
      for (long long z0 = 0; z0 < depth; z0 += chunk) {
        const long long top = r0 - k * R, left = c0 - k * R;
        schedule s{edge, depth, z0, z0 + chunk < depth ? z0 + chunk : depth, k};
        s.origin = s.clean() ? 0 : s.first_steady();
        // rings[sweep][slot]: planes of h x w, sweeps 0 .. k - 1.
        std::vector<std::vector<float>> rings(std::size_t(k * schedule::ring), std::vector<float>(plane_size, -99.0f));
        const auto plane_of = [&](int sweep, long long q) -> std::vector<float>& {
          return rings[std::size_t(sweep * schedule::ring + s.slot(q))];
        };
        // queues[sweep][i]: planes of h x w, the newest at i = 2R.
        constexpr int S = 2 * R + 1;
        std::vector<std::vector<float>> queues(std::size_t(k * S), std::vector<float>(plane_size, -77.0f));
        const auto push = [&](int sweep, long long q, d::plane_work work) {
          for (int i = 0; i + 1 < S; ++i) queues[std::size_t(sweep * S + i)] = queues[std::size_t(sweep * S + i + 1)];
          std::vector<float>& newest = queues[std::size_t(sweep * S + S - 1)];
          if (work == d::plane_work::none) std::fill(newest.begin(), newest.end(), -1e30f);
          else newest = plane_of(sweep, q);
        };
        const auto set_edge = [&](std::vector<float>& plane, int sweep, long long q) {
          for (int li = sweep * R; li < h - sweep * R; ++li)
            for (int lj = sweep * R; lj < w - sweep * R; ++lj) {
              const long long y = top + li, x = left + lj;
              if (!in_plane_edge(y, x)) continue;
              const long long cy = coalesce::boundary_index(coalesce::clamp, y, rows),
                              cx = coalesce::boundary_index(coalesce::clamp, x, cols);
              float& e = plane[std::size_t(li * w + lj)];
              if constexpr (is_interior<Policy>) e = border[(t0 + std::size_t(sweep)) & 1].at(q, cy, cx);
              else if constexpr (coalesce::is_constant_policy_v<Policy>) e = policy.value;
              else if constexpr (std::is_same_v<Policy, coalesce::clamp_t>)
                e = plane[std::size_t((cy - top) * w + (cx - left))];
            }
        };
        for (long long j = 0; j < s.steps(); ++j) {
          const bool steady = j >= s.first_steady() && j < s.steady_end();
          // Steady steps and every step of a clean chunk (its ramp steps) read the queue.
          const bool from_queue = steady || s.clean();
          // f's neighbourhood of position `at` of sweep `sweep`'s plane, from `planes` (the ring's
          // planes q - R .. q + R of the sweep before, copied) and in steady steps the queue.
          const auto value_at = [&](int sweep, const std::vector<float>& planes, std::size_t at) {
            const window ring{&planes[std::size_t(R) * plane_size + at], (long long)plane_size, w};
            if (!from_queue) return f(ring);
            queued_window<R> n{ring, {}};
            for (int i = 0; i < S; ++i) n.column[i] = queues[std::size_t((sweep - 1) * S + i)][at];
            return f(n);
          };
          for (int sweep = k; sweep >= 0; --sweep) {
            const long long q = s.plane(sweep, j);
            const d::plane_work work = s.work(sweep, q);
            if (steady) REQUIRE(work == d::plane_work::compute);
            if (work == d::plane_work::none) {
              if (sweep < k) push(sweep, q, work);
              continue;
            }
            if (sweep == k) {  // the tile, stored where single sweeps store
              if (work != d::plane_work::compute) continue;
              std::vector<float> planes(std::size_t(2 * R + 1) * plane_size);
              for (int dz = -R; dz <= R; ++dz) {
                const auto& from = plane_of(sweep - 1, s.source_plane(q, dz));
                std::copy(from.begin(), from.end(), planes.begin() + std::ptrdiff_t(std::size_t(dz + R) * plane_size));
              }
              for (int li = k * R; li < h - k * R; ++li)
                for (int lj = k * R; lj < w - k * R; ++lj) {
                  const long long y = top + li, x = left + lj;
                  if (y >= rows || x >= cols || (is_interior<Policy> && in_plane_edge(y, x))) continue;
                  out.at(q, y, x) = value_at(sweep, planes, std::size_t(li * w + lj));
                }
              continue;
            }
            std::vector<float>& to = plane_of(sweep, q);
            if (sweep == 0) {
              for (int li = 0; li < h; ++li)
                for (int lj = 0; lj < w; ++lj) {
                  const long long y = top + li, x = left + lj;
                  float& e = to[std::size_t(li * w + lj)];
                  if (work == d::plane_work::fill) {  // interior's border planes
                    e = border[t0 & 1].at(q, coalesce::boundary_index(coalesce::clamp, y, rows),
                                          coalesce::boundary_index(coalesce::clamp, x, cols));
                  } else {
                    e = read(policy, in, q, y, x);
                  }
                }
              if (is_interior<Policy> && work == d::plane_work::compute) set_edge(to, 0, q);
              push(0, q, work);
              continue;
            }
            if (work == d::plane_work::fill) {
              for (int li = sweep * R; li < h - sweep * R; ++li)
                for (int lj = sweep * R; lj < w - sweep * R; ++lj) {
                  float& e = to[std::size_t(li * w + lj)];
                  if constexpr (is_interior<Policy>)
                    e = border[(t0 + std::size_t(sweep)) & 1].at(
                        q, coalesce::boundary_index(coalesce::clamp, top + li, rows),
                        coalesce::boundary_index(coalesce::clamp, left + lj, cols));
                  else if constexpr (coalesce::is_constant_policy_v<Policy>) e = policy.value;
                  else FAIL("only constant and interior fill planes");
                }
              push(sweep, q, work);
              continue;
            }
            std::vector<float> planes(std::size_t(2 * R + 1) * plane_size);
            for (int dz = -R; dz <= R; ++dz) {
              const auto& from = plane_of(sweep - 1, s.source_plane(q, dz));
              std::copy(from.begin(), from.end(), planes.begin() + std::ptrdiff_t(std::size_t(dz + R) * plane_size));
            }
            for (int li = sweep * R; li < h - sweep * R; ++li)
              for (int lj = sweep * R; lj < w - sweep * R; ++lj)
                to[std::size_t(li * w + lj)] = value_at(sweep, planes, std::size_t(li * w + lj));
            if (!std::is_same_v<Policy, coalesce::periodic_t>) set_edge(to, sweep, q);
            push(sweep, q, work);
          }
        }
      }
}

template <class Shape, class Policy>
void check_fused_equals_single(const Policy& policy, long long depth, long long rows, long long cols, std::size_t steps,
                               int k, int h, int w, long long chunk) {
  constexpr int R = Shape::radius;
  INFO("radius " << R << ", " << depth << " x " << rows << " x " << cols << ", " << steps << " steps, k = " << k
                 << ", region " << h << " x " << w << ", chunks of " << chunk << " planes");
  volume u{depth, rows, cols, {}}, v{depth, rows, cols, {}};
  std::uint32_t state = 12345;
  for (long long i = 0; i < depth * rows * cols; ++i) {
    state = state * 1664525u + 1013904223u;
    u.v.push_back(float(state >> 8) / float(1 << 24));
    v.v.push_back(-7.0f - float(i % 5));  // a border unlike u's
  }
  volume a = u, b = v;
  for (std::size_t s = 0; s < steps; ++s) {
    single_sweep<R>(policy, a, b, Shape{});
    std::swap(a, b);
  }
  const volume border[2] = {u, v};
  volume x = u, y = v;
  const auto plan = d::plan_fused_passes(steps, std::size_t(k));
  std::size_t t0 = 0;
  for (std::size_t p = 0; p < plan.passes; ++p) {
    const int sweeps = int(plan.sweeps_of(p));
    fused_pass<R>(policy, x, y, border, t0, sweeps, h, w, chunk, Shape{});
    t0 += std::size_t(sweeps);
    std::swap(x, y);
  }
  for (long long z = 0; z < depth; ++z)
    for (long long i = 0; i < rows; ++i)
      for (long long j = 0; j < cols; ++j)
        if (x.at(z, i, j) != a.at(z, i, j))
          FAIL("(" << z << ", " << i << ", " << j << "): fused " << x.at(z, i, j) << ", single sweeps "
                   << a.at(z, i, j));
}

template <class Shape>
void check_every_policy(long long depth, long long rows, long long cols, std::size_t steps, int k, int h, int w,
                        long long chunk) {
  check_fused_equals_single<Shape>(coalesce::clamp, depth, rows, cols, steps, k, h, w, chunk);
  check_fused_equals_single<Shape>(coalesce::periodic, depth, rows, cols, steps, k, h, w, chunk);
  check_fused_equals_single<Shape>(coalesce::constant(1.5f), depth, rows, cols, steps, k, h, w, chunk);
  const long long r2 = 2 * Shape::radius;
  if (depth > r2 && rows > r2 && cols > r2)
    check_fused_equals_single<Shape>(coalesce::interior, depth, rows, cols, steps, k, h, w, chunk);
}

}  // namespace

TEST_CASE("a volume pass of fused sweeps equals single sweeps bit for bit under every policy, on the host") {
  // Small regions (12 x 16) and chunks of 4 planes, so that tiles and chunks are many and shapes
  // span several, beyond the edge on every side; shapes not multiples of either, one plane deep,
  // one row high, narrower than a halo; and one deep enough for clean chunks (every step a ramp or
  // steady step) at every k and radius.
  struct shape {
    long long depth, rows, cols;
  };
  for (const shape& sh :
       {shape{11, 13, 17}, shape{1, 9, 20}, shape{6, 1, 7}, shape{9, 5, 3}, shape{2, 2, 2}, shape{30, 7, 9}})
    for (const std::size_t steps : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(7)}) {
      check_every_policy<seven_point>(sh.depth, sh.rows, sh.cols, steps, 2, 12, 16, 4);
      check_every_policy<seven_point>(sh.depth, sh.rows, sh.cols, steps, 3, 12, 16, 5);
      check_every_policy<box>(sh.depth, sh.rows, sh.cols, steps, 2, 12, 16, 4);
      check_every_policy<wide_star>(sh.depth, sh.rows, sh.cols, steps, 2, 12, 16, 3);
    }
}
