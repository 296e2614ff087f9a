// coalesce::for_each_pair: every particle meets every other exactly once and never itself, for
// sizes below, at and past the tile (sums of integers, so exact), with flat and nested particles;
// softened gravity agrees with a double-precision host sum; a wrong-sized out and containers on
// different streams are refused; and, measured at full size, all-pairs gravity against the plain
// kernel a user writes and the tiled GPU Gems kernel, each hand-written kernel at its best block.
#include <coalesce/for_each_pair.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "coalesce_test.hpp"
#include "particle_competitors.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace pairs_test {

// Seven fields, of which gravity reads four: the velocities must cost the inner loop nothing.
struct Body {
  float x, y, z, m;
  float vx, vy, vz;
};
COALESCE_FIELDS(Body, x, y, z, m, vx, vy, vz);

// Body's first four fields: a view of them over a Body vector's columns is all f below reads.
struct Position {
  float x, y, z, m;
};
COALESCE_FIELDS(Position, x, y, z, m);

// What the counting f sums for each i.
struct Tally {
  unsigned count;
  float mass, dx, yz;
};
COALESCE_FIELDS(Tally, count, mass, dx, yz);

struct Accel {
  float x, y, z;
};
COALESCE_FIELDS(Accel, x, y, z);

// Nested and of mixed widths: a float3 (three leaves) and a double.
struct Star {
  float3 pos;
  double mass;
};
COALESCE_FIELDS(Star, pos, mass);

struct StarTally {
  unsigned count;
  double mass;
  float dz;
};
COALESCE_FIELDS(StarTally, count, mass, dz);

}  // namespace pairs_test

namespace ct = coalesce::testing;
using pairs_test::Accel;
using pairs_test::Body;
using pairs_test::Position;
using pairs_test::Star;
using pairs_test::StarTally;
using pairs_test::Tally;

namespace {

// Bodies with small integer coordinates and masses: every sum below is of integers under 2^24,
// exact in float in any order.
std::vector<Body> integer_bodies(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto in = [&](int lo, int hi) { return float(lo + int(random() % unsigned(hi - lo))); };
  std::vector<Body> bodies(n);
  for (auto& b : bodies) b = Body{in(-16, 16), in(-8, 8), in(-8, 8), in(1, 9), in(-99, 99), in(-99, 99), in(-99, 99)};
  return bodies;
}

// The counting f, what expected_tally sums (the first test case writes it as a lambda).
struct count_pairs {
  template <class P, class A>
  __device__ void operator()(const P& p_i, const P& p_j, A& a) const {
    a.count += 1;
    a.mass += p_j.m;
    a.dx += p_j.x - p_i.x;
    a.yz += p_j.y * p_i.z;
  }
};

// Bodies in the cube [-1, 1)^3, masses in [0.5, 1.5).
std::vector<Body> random_bodies(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> position(-1.0f, 1.0f), mass(0.5f, 1.5f);
  std::vector<Body> bodies(n);
  for (auto& b : bodies) {
    const float x = position(random), y = position(random), z = position(random);
    b = Body{x, y, z, mass(random), position(random), position(random), position(random)};
  }
  return bodies;
}

// What i's tally must hold: n - 1 partners, the others' mass, sum of (x_j - x_i), sum of y_j * z_i.
Tally expected_tally(const std::vector<Body>& bodies, std::size_t i, double sum_m, double sum_x, double sum_y) {
  const auto n = double(bodies.size());
  const Body& b = bodies[i];
  return Tally{unsigned(bodies.size() - 1), float(sum_m - b.m), float(sum_x - b.x - (n - 1) * b.x),
               float((sum_y - b.y) * b.z)};
}

// Every tally exactly as expected_tally says.
void check_tallies(const std::vector<Tally>& got, const std::vector<Body>& host) {
  REQUIRE(got.size() == host.size());
  double sum_m = 0, sum_x = 0, sum_y = 0;
  for (const auto& b : host) sum_m += b.m, sum_x += b.x, sum_y += b.y;
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Tally e = expected_tally(host, i, sum_m, sum_x, sum_y);
    const bool same = got[i].count == e.count && got[i].mass == e.mass && got[i].dx == e.dx && got[i].yz == e.yz;
    if (!same && wrong++ == 0) first = i;
  }
  if (wrong > 0) {
    const Tally e = expected_tally(host, first, sum_m, sum_x, sum_y);
    INFO(wrong << " wrong; the first, body " << first << ": count " << got[first].count << " (" << e.count << "), mass "
               << got[first].mass << " (" << e.mass << "), dx " << got[first].dx << " (" << e.dx << "), yz "
               << got[first].yz << " (" << e.yz << ")");
    CHECK(wrong == 0);
  }
}

// out poisoned: a count no tally has, NaN sums.
template <class A>
std::vector<A> poisoned(std::size_t n) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if constexpr (std::is_same_v<A, Tally>) {
    return std::vector<A>(n, Tally{0xdeadbeefu, nan, nan, nan});
  } else {
    return std::vector<A>(n, Accel{nan, nan, nan});
  }
}

// Softened gravity in double, for every body: the acceleration, and the sum of the magnitudes
// of its terms (what a float sum's rounding is relative to).
struct reference_gravity {
  std::vector<double> ax, ay, az, scale;
};
reference_gravity gravity_in_double(const std::vector<Body>& bodies) {
  const std::size_t n = bodies.size();
  reference_gravity r{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double dx = double(bodies[j].x) - bodies[i].x, dy = double(bodies[j].y) - bodies[i].y,
                   dz = double(bodies[j].z) - bodies[i].z;
      const double r2 = double(competitors::gravity_softening2) + dx * dx + dy * dy + dz * dz;
      const double s = bodies[j].m / (r2 * std::sqrt(r2));
      r.ax[i] += dx * s;
      r.ay[i] += dy * s;
      r.az[i] += dz * s;
      r.scale[i] += bodies[j].m / r2;  // >= |d| * s
    }
  return r;
}

// The largest difference between two accelerations of a body, as a share of `scale` there.
double worst_difference(const std::vector<Accel>& a, const std::vector<Accel>& b, const std::vector<double>& scale) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::max(
        {std::abs(double(a[i].x) - b[i].x), std::abs(double(a[i].y) - b[i].y), std::abs(double(a[i].z) - b[i].z)});
    worst = std::max(worst, d / scale[i]);
  }
  return worst;
}

// A scale for agreement where no double reference is affordable: each body's acceleration
// magnitude plus the root mean square over all bodies (so that a body whose forces cancel is not
// held to a relative tolerance of its tiny sum).
std::vector<double> agreement_scale(const std::vector<Accel>& a) {
  double sum = 0.0;
  for (const auto& v : a) sum += double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z;
  const double rms = std::sqrt(sum / double(a.size()));
  std::vector<double> scale(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    scale[i] = std::sqrt(double(a[i].x) * a[i].x + double(a[i].y) * a[i].y + double(a[i].z) * a[i].z) + rms;
  return scale;
}

}  // namespace

TEST_CASE("for_each_pair: every particle meets every other exactly once and never itself") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed);
  for (const std::size_t n : {0, 1, 2, 31, 255, 256, 257, 511, 512, 513, 1000, 5003}) {
    INFO(n << " bodies");
    const auto host = integer_bodies(n, seed + n);
    const coalesce::soa_vector<Body> bodies(host);
    coalesce::soa_vector<Tally> out(poisoned<Tally>(n));
    coalesce::for_each_pair(bodies, out, [] __device__(const auto& p_i, const auto& p_j, auto& a) {
      a.count += 1;
      a.mass += p_j.m;
      a.dx += p_j.x - p_i.x;
      a.yz += p_j.y * p_i.z;
    });
    check_tallies(out.to_vector(), host);
  }
}

TEST_CASE("for_each_pair: a view of only the fields f reads, over the same columns, gives the same sums") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed);
  const std::size_t n = 1000;
  const auto host = integer_bodies(n, seed);
  const coalesce::soa_vector<Body> bodies(host);
  const auto c = bodies.const_view().columns();
  const coalesce::soa_view<const Position> positions({{c[0], c[1], c[2], c[3]}}, n);
  coalesce::soa_vector<Tally> out(poisoned<Tally>(n));
  coalesce::for_each_pair(positions, out.view(), count_pairs{}, out.stream());
  check_tallies(out.to_vector(), host);
}

TEST_CASE("for_each_pair: nested fields and a double column are staged and summed exactly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed);
  for (const std::size_t n : {257, 1000}) {
    INFO(n << " stars");
    std::mt19937_64 random(seed + n);
    std::vector<Star> host(n);
    for (auto& s : host) s = Star{{0.0f, 0.0f, float(int(random() % 64) - 32)}, double(1 + random() % 1000)};
    const coalesce::soa_vector<Star> stars(host);
    coalesce::soa_vector<StarTally> out(std::vector<StarTally>(n, StarTally{0xdeadbeefu, -1.0, -1.0f}));
    coalesce::for_each_pair(stars, out, [] __device__(const auto& p_i, const auto& p_j, auto& a) {
      a.count += 1;
      a.mass += p_j.mass;
      a.dz += p_j.pos.z - p_i.pos.z;
    });
    const auto got = out.to_vector();
    double sum_m = 0, sum_z = 0;
    for (const auto& s : host) sum_m += s.mass, sum_z += s.pos.z;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double dz = sum_z - host[i].pos.z - double(n - 1) * host[i].pos.z;
      if (got[i].count != n - 1 || got[i].mass != sum_m - host[i].mass || double(got[i].dz) != dz) ++wrong;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("for_each_pair: softened gravity agrees with a double-precision host sum to 1e-4") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed);
  const std::size_t n = 3001;  // 11 full tiles and a partial one
  const auto host = random_bodies(n, seed);
  const coalesce::soa_vector<Body> bodies(host);
  coalesce::soa_vector<Accel> accel(poisoned<Accel>(n));
  cudaStream_t stream = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  coalesce::for_each_pair(bodies.const_view(), accel.view(), competitors::softened_gravity{}, stream);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
  const auto got = accel.to_vector();
  const auto expected = gravity_in_double(host);
  std::vector<Accel> narrowed(n);
  for (std::size_t i = 0; i < n; ++i)
    narrowed[i] = Accel{float(expected.ax[i]), float(expected.ay[i]), float(expected.az[i])};
  // Each float term is within a few ulp (rsqrtf: 2), and 3000 of them are summed.
  const double worst = worst_difference(got, narrowed, expected.scale);
  INFO("worst difference " << worst << " of the sum of the terms' magnitudes");
  CHECK(worst <= 1e-4);
}

TEST_CASE("for_each_pair: an out of another size and containers on different streams are refused") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const coalesce::soa_vector<Body> bodies(integer_bodies(100, 1));
  const auto message_of = [](const auto& call) {
    std::string message;
    try {
      call();
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    return message;
  };
  coalesce::soa_vector<Accel> short_out(99);
  const std::string sizes =
      message_of([&] { coalesce::for_each_pair(bodies, short_out, competitors::softened_gravity{}); });
  CHECK(sizes.find("out has 99 elements for 100 particles") != std::string::npos);
  CHECK(sizes.find("one per particle") != std::string::npos);

  cudaStream_t other = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  {
    coalesce::soa_vector<Accel, coalesce::device_space, coalesce::pool_resource> elsewhere(
        100, coalesce::pool_resource(other));
    const std::string streams =
        message_of([&] { coalesce::for_each_pair(bodies, elsewhere, competitors::softened_gravity{}); });
    CHECK(streams.find("different streams") != std::string::npos);
    CHECK(streams.find("pass their views and the stream") != std::string::npos);
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(other));
  ct::check_sync("for_each_pair refusals");
}

TEST_CASE("for_each_pair: all-pairs gravity against the plain kernel and the hand-written tiled kernel") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::uint64_t seed = ct::test_seed();
  INFO("seed " << seed);
  const std::vector<std::size_t> sizes = ct::small_problems()
                                             ? std::vector<std::size_t>{std::size_t(8) << 10}
                                             : std::vector<std::size_t>{std::size_t(64) << 10, std::size_t(512) << 10};
  for (const std::size_t n : sizes) {
    INFO(n << " bodies");
    const auto host = random_bodies(n, seed + n);
    const coalesce::soa_vector<Body> bodies(host);
    coalesce::soa_vector<Accel> mine(poisoned<Accel>(n)), plain(poisoned<Accel>(n)), tiled(poisoned<Accel>(n));
    const auto in = bodies.const_view();
    const float *x = in.column<&Body::x>(), *y = in.column<&Body::y>(), *z = in.column<&Body::z>(),
                *m = in.column<&Body::m>();
    const auto out = [](coalesce::soa_vector<Accel>& a) {
      const auto v = a.view();
      return std::vector<float*>{v.column<&Accel::x>(), v.column<&Accel::y>(), v.column<&Accel::z>()};
    };
    const auto p = out(plain), t = out(tiled);
    const unsigned count = unsigned(n);
    const auto run_mine = [&](cudaStream_t s) {
      coalesce::for_each_pair(in, mine.view(), competitors::softened_gravity{}, s);
    };
    const auto run_plain = [&](unsigned threads) {
      return
          [&, threads](cudaStream_t s) { competitors::plain_gravity(x, y, z, m, p[0], p[1], p[2], count, threads, s); };
    };
    const auto run_tiled = [&](unsigned threads) {
      return
          [&, threads](cudaStream_t s) { competitors::tiled_gravity(x, y, z, m, t[0], t[1], t[2], count, threads, s); };
    };
    const std::vector<unsigned> plain_blocks{128, 256}, tiled_blocks{128, 256, 512};
    run_mine(nullptr);
    for (const unsigned b : plain_blocks) run_plain(b)(nullptr);
    for (const unsigned b : tiled_blocks) run_tiled(b)(nullptr);
    ct::check_launch("all-pairs gravity");
    const auto a = mine.to_vector(), b = plain.to_vector(), c = tiled.to_vector();
    // The same arithmetic in all three, the j of each i summed in an order each chooses.
    const auto scale = agreement_scale(b);
    const double mine_vs_plain = worst_difference(a, b, scale), tiled_vs_plain = worst_difference(c, b, scale);
    INFO("worst difference to the plain kernel: coalesce " << mine_vs_plain << ", tiled " << tiled_vs_plain);
    CHECK(mine_vs_plain <= 1e-4);
    CHECK(tiled_vs_plain <= 1e-4);

    COALESCE_REQUIRE_TIMING();
    // At 512 K bodies a launch takes about a tenth of a second: fewer samples.
    const ct::timing_options options{n > (std::size_t(64) << 10) ? 1 : 3, n > (std::size_t(64) << 10) ? 5 : 20};
    const auto best = [&](const auto& run, const std::vector<unsigned>& choices, unsigned& chosen) {
      double fastest = 0.0;
      for (const unsigned threads : choices) {
        const double ms = ct::median(ct::time_launches_ms(run(threads), options));
        if (fastest == 0.0 || ms < fastest) fastest = ms, chosen = threads;
      }
      return fastest;
    };
    unsigned plain_threads = 0, tiled_threads = 0;
    const double coalesce_ms = ct::median(ct::time_launches_ms(run_mine, options));
    const double plain_ms = best(run_plain, plain_blocks, plain_threads);
    const double tiled_ms = best(run_tiled, tiled_blocks, tiled_threads);
    const double pairs = double(n) * double(n);
    std::printf("for_each_pair, softened gravity, %zu float bodies: coalesce %.3f ms (%.1f G pairs/s), plain %.3f ms "
                "(%u threads a block), tiled %.3f ms (%u threads a block); plain / coalesce %.2fx, tiled / coalesce "
                "%.2fx\n",
                n, coalesce_ms, pairs / coalesce_ms * 1e-6, plain_ms, plain_threads, tiled_ms, tiled_threads,
                plain_ms / coalesce_ms, tiled_ms / coalesce_ms);
    // The issue's targets: the tiled kernel's speed (within 5%), and so at least 1.3x the plain one.
    CHECK(coalesce_ms <= plain_ms / 1.3);
    CHECK(coalesce_ms <= tiled_ms / 0.95);
  }
}
