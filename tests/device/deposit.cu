// coalesce::deposit: every particle's contributions reach the grid, exactly where the sums are
// exact (integers; dyadic weights in float), into a matrix, a volume and a span, for particles in
// cell order and shuffled, with lanes that add different numbers of times; and, measured at full
// size, a cloud-in-cell deposit against the plain kernel a user writes (one atomicAdd per
// contribution): faster on particles sorted by cell, and on shuffled ones, whose neighbouring
// adds go out as float2 atomics.
#include <coalesce/deposit.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
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
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

struct Charge {
  float x, y, q;
};
COALESCE_FIELDS(Charge, x, y, q);

namespace ct = coalesce::testing;

namespace {

// Particles in a cols x rows box, positions on a quarter-cell lattice (so that cloud-in-cell
// weights are multiples of 1/16: float sums of small integer charges stay exact), charges 1 to 4;
// in cell order or shuffled.
std::vector<Charge> lattice_charges(std::size_t n, std::size_t rows, std::size_t cols, bool sorted,
                                    std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<Charge> p(n);
  for (auto& c : p) {
    // Cloud-in-cell reaches (r + 1, c + 1): keep a margin of one cell.
    const auto qx = float(random() % ((cols - 1) * 4)) / 4.0f;
    const auto qy = float(random() % ((rows - 1) * 4)) / 4.0f;
    c = Charge{qx, qy, float(1 + random() % 4)};
  }
  if (sorted)
    std::sort(p.begin(), p.end(), [](const Charge& a, const Charge& b) {
      return std::make_pair(int(a.y), int(a.x)) < std::make_pair(int(b.y), int(b.x));
    });
  return p;
}

// Sorted, then one particle in a hundred swapped with a random other: most chunks of a block
// have small boxes, some a box of the whole grid (the staged deposit's fallback, mid-run).
std::vector<Charge> mostly_sorted(std::size_t n, std::size_t rows, std::size_t cols, std::uint64_t seed) {
  auto p = lattice_charges(n, rows, cols, true, seed);
  std::mt19937_64 random(seed + 1);
  for (std::size_t k = 0; k < n / 100; ++k) std::swap(p[random() % n], p[random() % n]);
  return p;
}

// The host model's accumulator: a dense rows x cols grid.
struct dense_accumulator {
  std::vector<float>* grid;
  std::size_t cols;
  void add(std::size_t r, std::size_t c, float v) const { (*grid)[r * cols + c] += v; }
};

// The host's serial deposit of f (cloud-in-cell unless said) over the particles in order.
template <class F = competitors::cloud_in_cell>
std::vector<float> model_deposit(const std::vector<Charge>& p, std::size_t rows, std::size_t cols, const F& f = {}) {
  std::vector<float> grid(rows * cols, 0.0f);
  const dense_accumulator acc{&grid, cols};
  for (const auto& c : p) f(c, acc);
  return grid;
}

// Global reductions (atomics) as the L2 receives them: requests, summed over the chip.
constexpr const char* l2_reduction_requests = "lts__t_requests_op_red.sum";

ct::counter_profiler& profiler() {
  static ct::counter_profiler instance({l2_reduction_requests});
  return instance;
}

void check_grid(const std::vector<float>& got, const std::vector<float>& expected) {
  REQUIRE(got.size() == expected.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i] && wrong++ == 0) first = i;
  INFO("first differing element " << first << ": " << got[first] << ", expected " << expected[first]);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("deposit: a cloud-in-cell deposit into a matrix equals the host's sums exactly, sorted or shuffled") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 67, cols = 130;  // not multiples of a warp or a block
  for (const bool sorted : {true, false})
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(100003)}) {
      INFO((sorted ? "sorted" : "shuffled") << ", " << n << " particles");
      const auto host = lattice_charges(n, rows, cols, sorted, 7 + n);
      const coalesce::soa_vector<Charge> particles(host);
      coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
      coalesce::deposit(particles, rho, competitors::cloud_in_cell{});
      check_grid(rho.to_vector(), model_deposit(host, rows, cols));
    }
  for (const std::size_t n : {std::size_t(5000), std::size_t(200003)}) {
    INFO("mostly sorted, " << n << " particles, float and double grids");
    const auto host = mostly_sorted(n, rows, cols, 5 + n);
    const coalesce::soa_vector<Charge> particles(host);
    const auto expected = model_deposit(host, rows, cols);
    coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
    coalesce::deposit(particles, rho, competitors::cloud_in_cell{});
    check_grid(rho.to_vector(), expected);
    coalesce::pitched_matrix<double> rho64(rows, cols, 0.0);
    coalesce::deposit(particles, rho64, competitors::cloud_in_cell{});
    const auto got64 = rho64.to_vector();
    std::vector<float> narrowed(got64.begin(), got64.end());  // exact: the sums are exact in float
    check_grid(narrowed, expected);
  }
}

// The particle's charge as a 4 x 4 stencil around its cell (16 adds, more than the stage keeps in
// registers), weights of 1/16 (exact): the host's and the device's sums agree bit for bit.
struct wide_stencil {
  std::size_t rows, cols;
  // The stencil's index k of 4 around i (from i - 1), kept inside [0, n).
  __host__ __device__ static std::size_t inside(std::size_t i, std::size_t k, std::size_t n) {
    const std::size_t j = i + k < 1 ? 0 : i + k - 1;
    return j < n ? j : n - 1;
  }
#pragma nv_exec_check_disable
  template <class P, class Acc>
  __host__ __device__ void operator()(const P& p, const Acc& acc) const {
    const auto c = std::size_t(p.x), r = std::size_t(p.y);
    for (std::size_t k = 0; k < 16; ++k) acc.add(inside(r, k / 4, rows), inside(c, k % 4, cols), p.q / 16.0f);
  }
};

// Odd charges only: a particle adds four times or not at all.
struct odd_charges_only {
#pragma nv_exec_check_disable
  template <class P, class Acc>
  __host__ __device__ void operator()(const P& p, const Acc& acc) const {
    if (int(p.q) % 2 == 1) competitors::cloud_in_cell{}(p, acc);
  }
};

TEST_CASE("deposit: every path of the matrix stage sums exactly what the host does") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 300007;
  SECTION("rows wider than the register-run stage takes (the warp-sum stage), sorted and shuffled") {
    const std::size_t rows = 12, cols = 5000;  // a row of 5000 floats: more than half the stage
    for (const bool sorted : {true, false}) {
      INFO((sorted ? "sorted" : "shuffled"));
      const auto host = lattice_charges(n, rows, cols, sorted, 41);
      const coalesce::soa_vector<Charge> particles(host);
      coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
      coalesce::deposit(particles, rho, competitors::cloud_in_cell{});
      check_grid(rho.to_vector(), model_deposit(host, rows, cols));
    }
  }
  const std::size_t rows = 67, cols = 130;
  const auto host = lattice_charges(n, rows, cols, true, 43);
  const coalesce::soa_vector<Charge> particles(host);
  SECTION("columns that do not load four particles at once (a view from particle 1 on)") {
    const std::vector<Charge> rest(host.begin() + 1, host.end());
    coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
    coalesce::deposit(particles.const_view().subview(1), rho.view(), competitors::cloud_in_cell{});
    check_grid(rho.to_vector(), model_deposit(rest, rows, cols));
  }
  SECTION("sixteen adds a particle, more than the registers keep") {
    coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
    coalesce::deposit(particles, rho, wide_stencil{rows, cols});
    check_grid(rho.to_vector(), model_deposit(host, rows, cols, wide_stencil{rows, cols}));
  }
  SECTION("particles that add nothing, and a chunk whose first and last particle add nothing") {
    auto odd = host;
    for (std::size_t i = 0; i < 8192 && i < odd.size(); ++i) odd[i].q = 2.0f;  // the first chunk(s) add nothing
    const coalesce::soa_vector<Charge> some(odd);
    coalesce::pitched_matrix<float> rho(rows, cols, 0.0f);
    coalesce::deposit(some, rho, odd_charges_only{});
    check_grid(rho.to_vector(), model_deposit(odd, rows, cols, odd_charges_only{}));
  }
  SECTION("integer grids: counts of particles a cell") {
    coalesce::pitched_matrix<int> counts(rows, cols, 0);
    coalesce::pitched_matrix<unsigned long long> wide(rows, cols, 0ull);
    coalesce::deposit(particles, counts,
                      [] __device__(auto p, auto acc) { acc.add(std::size_t(p.y), std::size_t(p.x), 1); });
    coalesce::deposit(particles, wide,
                      [] __device__(auto p, auto acc) { acc.add(std::size_t(p.y), std::size_t(p.x), 1ull << 33); });
    std::vector<int> expected(rows * cols, 0);
    for (const auto& c : host) ++expected[std::size_t(c.y) * cols + std::size_t(c.x)];
    CHECK(counts.to_vector() == expected);
    const auto got = wide.to_vector();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != (unsigned long long)(expected[i]) << 33) ++wrong;
    CHECK(wrong == 0);
  }
}

TEST_CASE("deposit: float2 and float4 grids, each component the sum a scalar grid of it gets") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 67, cols = 130;
  for (const bool sorted : {true, false}) {
    INFO((sorted ? "sorted" : "shuffled"));
    const auto host = lattice_charges(200003, rows, cols, sorted, 17);
    const coalesce::soa_vector<Charge> particles(host);
    // (q, 2q) at the cloud-in-cell points: both components exact in float.
    coalesce::pitched_matrix<float2> pair(rows, cols, float2{0.0f, 0.0f});
    coalesce::deposit(particles, pair, [] __device__(auto p, auto acc) {
      const float x = p.x, y = p.y, q = p.q;
      const auto c = std::size_t(x), r = std::size_t(y);
      const float wx = x - float(c), wy = y - float(r);
      const float w[4] = {(1.0f - wx) * (1.0f - wy), wx * (1.0f - wy), (1.0f - wx) * wy, wx * wy};
      for (unsigned k = 0; k < 4; ++k) acc.add(r + k / 2, c + k % 2, float2{q * w[k], 2.0f * q * w[k]});
    });
    const auto expected = model_deposit(host, rows, cols);
    const auto got = pair.to_vector();
    std::vector<float> xs(got.size()), ys(got.size()), doubled(expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      xs[i] = got[i].x;
      ys[i] = got[i].y;
      doubled[i] = 2.0f * expected[i];
    }
    check_grid(xs, expected);
    check_grid(ys, doubled);
  }
  // A float4 volume (the plain path): a count in x, the charge in y, -q in z, 4q in w.
  const std::size_t depth = 3, height = 9, width = 33, n = 50001;
  std::mt19937_64 random(19);
  std::vector<Charge> host(n);
  for (auto& c : host) c = Charge{float(random() % width), float(random() % height), float(random() % 7)};
  const coalesce::soa_vector<Charge> particles(host);
  coalesce::pitched_volume<float4> sums(depth, height, width, float4{0, 0, 0, 0});
  coalesce::deposit(particles.const_view(), sums.view(), [] __device__(auto p, auto acc) {
    const float q = p.q;
    acc.add(std::size_t(q) % 3, std::size_t(p.y), std::size_t(p.x), float4{1.0f, q, -q, 4.0f * q});
  });
  std::vector<float4> expected(depth * height * width, float4{0, 0, 0, 0});
  for (const auto& c : host) {
    auto& e = expected[(std::size_t(c.q) % 3 * height + std::size_t(c.y)) * width + std::size_t(c.x)];
    e.x += 1.0f;
    e.y += c.q;
    e.z -= c.q;
    e.w += 4.0f * c.q;
  }
  const auto got = sums.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].x != expected[i].x || got[i].y != expected[i].y || got[i].z != expected[i].z ||
        got[i].w != expected[i].w)
      ++wrong;
  CHECK(wrong == 0);
}

struct Moments {
  float count, charge;
  double dipole;
};
COALESCE_FIELDS(Moments, count, charge, dipole);

TEST_CASE("deposit into a soa_vector of fields: each field the sum a grid of its own would get") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t height = 9, width = 33, n = 50001;
  std::mt19937_64 random(31);
  std::vector<Charge> host(n);
  for (auto& c : host) c = Charge{float(random() % width), float(random() % height), float(random() % 7)};
  const coalesce::soa_vector<Charge> particles(host);
  coalesce::soa_vector<Moments> moments(std::vector<Moments>(height * width, Moments{0.0f, 0.0f, 0.0}));
  coalesce::deposit(particles, moments, [] __device__(auto p, auto acc) {
    const float x = p.x, y = p.y, q = p.q;
    acc.add(std::size_t(y) * 33 + std::size_t(x), Moments{1.0f, q, double(q) * double(x)});
  });
  std::vector<Moments> expected(height * width, Moments{0.0f, 0.0f, 0.0});
  for (const auto& c : host) {
    auto& m = expected[std::size_t(c.y) * width + std::size_t(c.x)];
    m.count += 1.0f;
    m.charge += c.q;
    m.dipole += double(c.q) * double(c.x);
  }
  const auto got = moments.to_vector();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].count != expected[i].count || got[i].charge != expected[i].charge || got[i].dipole != expected[i].dipole)
      ++wrong;
  CHECK(wrong == 0);
}

TEST_CASE("deposit: lanes that add different numbers of times, into a volume and into a span") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t depth = 5, height = 9, width = 33, n = 50001;
  std::mt19937_64 random(11);
  std::vector<Charge> host(n);
  for (auto& c : host) c = Charge{float(random() % width), float(random() % height), float(random() % 7)};
  std::sort(host.begin(), host.end(), [](const Charge& a, const Charge& b) { return a.x < b.x; });  // runs of x
  const coalesce::soa_vector<Charge> particles(host);

  // Volume: a particle of charge q adds 1 into (z, y, x) for each z < q % depth: from none to four
  // adds per lane, so the lanes of one call are never the whole warp.
  coalesce::pitched_volume<int> counts(depth, height, width, 0);
  coalesce::deposit(particles.const_view(), counts.view(), [] __device__(auto p, auto acc) {
    const int q = int(p.q);
    for (int z = 0; z < q % int(5); ++z) acc.add(std::size_t(z), std::size_t(p.y), std::size_t(p.x), 1);
  });
  std::vector<int> expected(depth * height * width, 0);
  for (const auto& c : host)
    for (int z = 0; z < int(c.q) % 5; ++z)
      ++expected[(std::size_t(z) * height + std::size_t(c.y)) * width + std::size_t(c.x)];
  CHECK(counts.to_vector() == expected);

  // Span: a histogram of x, odd charges only.
  ct::device_buffer<unsigned> histogram(std::vector<unsigned>(width, 0u));
  coalesce::deposit(particles.const_view(), cuda::std::span<unsigned>(histogram.data(), width),
                    [] __device__(auto p, auto acc) {
                      if (int(p.q) % 2 == 1) acc.add(std::size_t(p.x), 1u);
                    });
  std::vector<unsigned> bins(width, 0u);
  for (const auto& c : host)
    if (int(c.q) % 2 == 1) ++bins[std::size_t(c.x)];
  CHECK(histogram.download() == bins);
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
}

// Particles anywhere in the box (weights of no special form), so that the order of the float
// adds shows in the sums' last bits.
std::vector<Charge> random_charges(std::size_t n, std::size_t rows, std::size_t cols, bool sorted, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> x(0.0f, float(cols - 1) - 0.001f), y(0.0f, float(rows - 1) - 0.001f),
      q(0.1f, 4.0f);
  std::vector<Charge> p(n);
  for (auto& c : p) c = Charge{x(random), y(random), q(random)};
  if (sorted)
    std::sort(p.begin(), p.end(), [](const Charge& a, const Charge& b) {
      return std::make_pair(int(a.y), int(a.x)) < std::make_pair(int(b.y), int(b.x));
    });
  return p;
}

TEST_CASE("deposit, deterministic: the sums of a serial loop over the particles, bit for bit, on every run") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 67, cols = 130;
  for (const bool sorted : {true, false})
    for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(200003)}) {
      INFO((sorted ? "sorted" : "shuffled") << ", " << n << " particles");
      const auto host = random_charges(n, rows, cols, sorted, 23 + n);
      const coalesce::soa_vector<Charge> particles(host);
      const auto serial = model_deposit(host, rows, cols);  // grid[p] += v, particle by particle
      coalesce::pitched_matrix<float> first(rows, cols, 0.0f), second(rows, cols, 0.0f);
      coalesce::deposit(particles, first, competitors::cloud_in_cell{}, coalesce::deterministic);
      coalesce::deposit(particles, second, competitors::cloud_in_cell{}, coalesce::deterministic);
      const auto a = first.to_vector(), b = second.to_vector();
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
      check_grid(a, serial);
    }
  // A span and a volume: a histogram of x weighted by q, and q into (q % 3, y, x).
  const auto host = random_charges(50001, 9, 33, false, 29);
  const coalesce::soa_vector<Charge> particles(host);
  ct::device_buffer<double> histogram(std::vector<double>(33, 0.0));
  coalesce::deposit(
      particles.const_view(), cuda::std::span<double>(histogram.data(), 33),
      [] __device__(auto p, auto acc) { acc.add(std::size_t(p.x), double(p.q)); }, coalesce::deterministic);
  coalesce::pitched_volume<float> volume(3, 9, 33, 0.0f);
  coalesce::deposit(
      particles.const_view(), volume.view(),
      [] __device__(auto p, auto acc) { acc.add(std::size_t(p.q) % 3, std::size_t(p.y), std::size_t(p.x), p.q); },
      coalesce::deterministic);
  std::vector<double> bins(33, 0.0);
  std::vector<float> cells(3 * 9 * 33, 0.0f);
  for (const auto& c : host) {
    bins[std::size_t(c.x)] += double(c.q);
    cells[(std::size_t(c.q) % 3 * 9 + std::size_t(c.y)) * 33 + std::size_t(c.x)] += c.q;
  }
  CHECK(histogram.download() == bins);
  check_grid(volume.to_vector(), cells);
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("deposit: containers on different streams are refused, naming what to do") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  cudaStream_t other = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  {
    const coalesce::soa_vector<Charge> particles(lattice_charges(10, 4, 4, true, 1));
    coalesce::pitched_matrix<float, coalesce::device_space, coalesce::line_aligned_rows, coalesce::pool_resource> rho(
        4, 4, coalesce::pool_resource(other));
    std::string message;
    try {
      coalesce::deposit(particles, rho, competitors::cloud_in_cell{});
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message.find("different streams") != std::string::npos);
    CHECK(message.find("pass their views and the stream") != std::string::npos);
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(other));
}

TEST_CASE("deposit: a cloud-in-cell deposit against one atomicAdd per contribution, sorted and shuffled") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 2048, cols = 2048;
  const std::size_t n = ct::small_problems() ? (std::size_t(1) << 20) : (std::size_t(16) << 20);
  for (const bool sorted : {true, false}) {
    INFO((sorted ? "sorted by cell" : "shuffled"));
    const auto host = lattice_charges(n, rows, cols, sorted, 3);
    const coalesce::soa_vector<Charge> particles(host);
    coalesce::pitched_matrix<float> rho(rows, cols, 0.0f), plain(rows, cols, 0.0f), privatized(rows, cols, 0.0f);
    const auto view = particles.const_view();
    const float *x = view.column<&Charge::x>(), *y = view.column<&Charge::y>(), *q = view.column<&Charge::q>();
    const auto run_plain = [&](cudaStream_t s) { competitors::plain_cloud_in_cell(x, y, q, n, plain.view(), s); };
    const auto run_privatized = [&](cudaStream_t s) {
      competitors::privatized_cloud_in_cell(x, y, q, n, privatized.view(), s);
    };
    const auto run_coalesce = [&](cudaStream_t s) {
      coalesce::deposit(view, rho.view(), competitors::cloud_in_cell{}, s);
    };
    run_plain(nullptr);
    run_coalesce(nullptr);
    if (sorted) run_privatized(nullptr);
    ct::check_launch("deposit");
    // The lattice's sums are exact in float whatever the order of the adds: all three agree.
    const auto expected = plain.to_vector();
    check_grid(rho.to_vector(), expected);
    if (sorted) check_grid(privatized.to_vector(), expected);
    COALESCE_REQUIRE_TIMING();
    const double plain_ms = ct::median(ct::time_launches_ms(run_plain));
    const double coalesce_ms = ct::median(ct::time_launches_ms(run_coalesce));
    const double privatized_ms = sorted ? ct::median(ct::time_launches_ms(run_privatized)) : 0.0;
    const double deterministic_ms = ct::median(ct::time_launches_ms(
        [&](cudaStream_t s) {
          coalesce::deposit(view, rho.view(), competitors::cloud_in_cell{}, coalesce::deterministic, s);
        },
        ct::timing_options{1, 5}));
    std::printf("deposit, cloud-in-cell, %zu particles %s, %zu x %zu floats: coalesce %.3f ms, plain atomics %.3f ms "
                "(%.2fx)",
                n, sorted ? "sorted by cell" : "shuffled", rows, cols, coalesce_ms, plain_ms, plain_ms / coalesce_ms);
    if (sorted)
      std::printf(", hand-written privatized %.3f ms (coalesce at %.2fx its speed)", privatized_ms,
                  privatized_ms / coalesce_ms);
    std::printf("; deterministic %.3f ms (%.1fx the plain kernel's time)\n", deterministic_ms,
                deterministic_ms / plain_ms);
    CHECK(deterministic_ms <= 16.0 * plain_ms);  // the docs: 12x sorted, 6x shuffled (H200)
    if (sorted) {
      // Measured on an H100 (chunks of 8192): 3.67x the plain kernel, 0.97x the hand-written one;
      // on an H200 with chunks of 4096, 3.2x and 0.92-0.94x.
      CHECK(coalesce_ms * 2.8 <= plain_ms);
      CHECK(coalesce_ms * 0.93 <= privatized_ms);
    } else {
      // Each particle's two pairs of neighbouring adds go out as float2 atomics where their column
      // is even: measured 1.30x the plain kernel on an H100, with half its L2 atomic requests.
      CHECK(coalesce_ms * 1.15 <= plain_ms);
    }
    COALESCE_REQUIRE_COUNTERS(profiler());
    const double coalesce_requests = profiler().measure([&] { run_coalesce(nullptr); })[l2_reduction_requests];
    const double plain_requests = profiler().measure([&] { run_plain(nullptr); })[l2_reduction_requests];
    std::printf("  L2 atomic requests a particle: coalesce %.3f, plain %.3f\n", coalesce_requests / double(n),
                plain_requests / double(n));
    if (sorted) {
      // The memory system merges a warp's adds into one point: the plain kernel's 4 adds a
      // particle reach L2 as about 1.5 requests. The stage's one add per point of the box
      // received anything: about 0.035 (measured on an H200).
      CHECK(plain_requests >= 1.0 * double(n));
      CHECK(coalesce_requests <= 0.05 * double(n));
    } else {
      // Half the plain kernel's: 4 adds a particle, one float2 for each pair on an even column
      // (3.02 requests a particle against 6.00, measured on an H100).
      CHECK(coalesce_requests <= 0.55 * plain_requests);
    }
  }
}
