// coalesce::make_cell_list and coalesce::for_each_neighbor: every particle's neighbours within
// the cutoff, and only those, against a host O(n^2) reference, exactly (positions on a lattice of
// sixteenths, so that every difference, square and sum is exact in float, and counts and integer
// sums of the neighbours' fields): in 2D and 3D, open and periodic, for both kernels
// (detail::neighbor_design), with particles on cell boundaries, at the same position, and outside
// the grid (in its edge cells); the calls a user gets wrong refused; and, measured at full size,
// a Lennard-Jones-like force on 4 Mi particles with about 30 neighbours each against a
// hand-written cell-list kernel in the same process.
#include <coalesce/cell_list.hpp>
#include <coalesce/for_each_neighbor.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/array>

#include "coalesce_device_test.hpp"
#include "coalesce_test.hpp"
#include "particle_competitors.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

struct Atom {
  float x, y, z;
  std::uint32_t id, weight;
};
COALESCE_FIELDS(Atom, x, y, z, id, weight);

struct Disc {
  float x, y;
  std::uint32_t id, weight;
};
COALESCE_FIELDS(Disc, x, y, id, weight);

// What the exactness tests sum over a particle's neighbours: how many, their weights, a hash of
// their ids (which ones), and the displacements to them (which image).
struct Tally {
  std::uint32_t count, weights, ids;
  float dx, dy, dz;
};
COALESCE_FIELDS(Tally, count, weights, ids, dx, dy, dz);

namespace ct = coalesce::testing;
namespace cd = coalesce::detail;

namespace {

constexpr std::uint32_t id_hash = 2654435761u;  // Knuth's multiplicative hash: sums of it tell sets apart
constexpr float step = 1.0f / 16;                // the lattice of positions
constexpr float cell = 1.25f;                    // 20 steps

template <int Dims>
using particle_t = std::conditional_t<Dims == 3, Atom, Disc>;

// The grids of the exactness tests: cells of 1.25, counts that are not multiples of a warp, a
// lower corner off the origin. All of it exact in float.
coalesce::uniform_grid<3> grid_3d() { return {-0.5f, 0.25f, -1.0f, cell, cell, cell, 13, 7, 5}; }
coalesce::uniform_grid<2> grid_2d() { return {-0.5f, 0.25f, cell, cell, 37, 23}; }

template <int Dims>
auto test_grid() {
  if constexpr (Dims == 3) {
    return grid_3d();
  } else {
    return grid_2d();
  }
}

template <int Dims>
struct box_of {
  float lower[3], length[3];
  int cells[3];
};
template <int Dims>
box_of<Dims> box(const coalesce::uniform_grid<Dims>& g) {
  if constexpr (Dims == 3) {
    return {{g.x0, g.y0, g.z0}, {float(g.nx) * g.dx, float(g.ny) * g.dy, float(g.nz) * g.dz}, {g.nx, g.ny, g.nz}};
  } else {
    return {{g.x0, g.y0, 0.0f}, {float(g.nx) * g.dx, float(g.ny) * g.dy, 0.0f}, {g.nx, g.ny, 1}};
  }
}

// Coordinate k of a particle (const or not).
template <class P>
auto& coordinate(P& p, int k) {
  if constexpr (std::is_same_v<std::remove_const_t<P>, Atom>) {
    return k == 0 ? p.x : k == 1 ? p.y : p.z;
  } else {
    return k == 0 ? p.x : p.y;
  }
}

// n particles on the lattice of sixteenths: inside the box, or with `outside` set, one in ten up
// to two cells beyond it on any side. A quarter of the coordinates snapped to a cell boundary, and
// one particle in 50 at the position of an earlier one. id = the index, weight 1 to 1000.
template <int Dims>
std::vector<particle_t<Dims>> lattice(std::size_t n, const coalesce::uniform_grid<Dims>& g, bool outside,
                                      std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto b = box(g);
  constexpr int steps_per_cell = 20;
  std::vector<particle_t<Dims>> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i].id = std::uint32_t(i);
    p[i].weight = std::uint32_t(1 + random() % 1000);
    if (i > 0 && random() % 50 == 0) {
      const std::size_t twin = random() % i;
      for (int k = 0; k < Dims; ++k) coordinate(p[i], k) = coordinate(p[twin], k);
      continue;
    }
    const bool beyond = outside && random() % 10 == 0;
    for (int k = 0; k < Dims; ++k) {
      const long span = long(b.cells[k]) * steps_per_cell, margin = beyond ? 2 * steps_per_cell : 0;
      long s = long(random() % std::uint64_t(span + 2 * margin)) - margin;
      if (random() % 4 == 0) s -= ((s % steps_per_cell) + steps_per_cell) % steps_per_cell;  // a cell boundary
      coordinate(p[i], k) = b.lower[k] + float(s) * step;
    }
  }
  return p;
}

// The reference: for each particle, every other one closer than the cutoff, by brute force, with
// the minimum image where periodic. Every step is exact for lattice positions.
template <int Dims>
std::vector<Tally> brute_force(const std::vector<particle_t<Dims>>& p, float cutoff, bool periodic,
                               const box_of<Dims>& b) {
  std::vector<Tally> out(p.size(), Tally{0, 0, 0, 0.0f, 0.0f, 0.0f});
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < p.size(); ++j) {
      if (i == j) continue;
      float d[3] = {0.0f, 0.0f, 0.0f}, d2 = 0.0f;
      for (int k = 0; k < Dims; ++k) {
        d[k] = coordinate(p[i], k) - coordinate(p[j], k);
        if (periodic && d[k] > 0.5f * b.length[k]) d[k] -= b.length[k];
        if (periodic && d[k] < -0.5f * b.length[k]) d[k] += b.length[k];
        d2 += d[k] * d[k];
      }
      if (!(d2 < cutoff * cutoff)) continue;
      Tally& t = out[p[i].id];
      t.count += 1;
      t.weights += p[j].weight;
      t.ids += p[j].id * id_hash;
      t.dx += d[0];
      t.dy += d[1];
      t.dz += d[2];
    }
  return out;
}

// f of the exactness tests: the same sums on the device, the displacement's minimum image taken
// by f itself where periodic (for_each_neighbor hands it p_j as stored).
template <int Dims, bool Periodic>
struct tally_pairs {
  float lx, ly, lz;
  template <class P, class Q>
  __device__ void operator()(const P& pi, const Q& pj, Tally& a) const {
    float dx = pi.x - pj.x, dy = pi.y - pj.y, dz = 0.0f;
    if constexpr (Dims == 3) dz = pi.z - pj.z;
    if constexpr (Periodic) {
      dx -= lx * rintf(dx / lx);
      dy -= ly * rintf(dy / ly);
      if constexpr (Dims == 3) dz -= lz * rintf(dz / lz);
    }
    a.count += 1;
    a.weights += std::uint32_t(pj.weight);
    a.ids += std::uint32_t(pj.id) * id_hash;
    a.dx += dx;
    a.dy += dy;
    a.dz += dz;
  }
};

struct position_3d {
  template <class P>
  __host__ __device__ cuda::std::array<float, 3> operator()(const P& p) const {
    return {p.x, p.y, p.z};
  }
};
struct position_2d {
  template <class P>
  __host__ __device__ cuda::std::array<float, 2> operator()(const P& p) const {
    return {p.x, p.y};
  }
};
template <int Dims>
using position_t = std::conditional_t<Dims == 3, position_3d, position_2d>;

const Tally poison{0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, -1e30f, -1e30f, -1e30f};

// out[i] (for the sorted particle i) against the reference of its id.
template <class P>
void require_tallies(const std::vector<P>& sorted, const std::vector<Tally>& got, const std::vector<Tally>& want) {
  REQUIRE(got.size() == sorted.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Tally& g = got[i];
    const Tally& w = want[sorted[i].id];
    const bool same =
        g.count == w.count && g.weights == w.weights && g.ids == w.ids && g.dx == w.dx && g.dy == w.dy && g.dz == w.dz;
    if (!same && wrong++ == 0) first = i;
  }
  if (wrong > 0) {
    const Tally& g = got[first];
    const Tally& w = want[sorted[first].id];
    FAIL(wrong << " particles wrong; the first, sorted " << first << " (id " << sorted[first].id << "): count "
               << g.count << " (want " << w.count << "), weights " << g.weights << " (" << w.weights << "), ids "
               << g.ids << " (" << w.ids << "), displacement " << g.dx << ", " << g.dy << ", " << g.dz << " (" << w.dx
               << ", " << w.dy << ", " << w.dz << ")");
  }
}

template <cd::neighbor_design Design, bool Periodic, int Dims, class Cells>
void check_design(const coalesce::soa_vector<particle_t<Dims>>& particles, const Cells& cells, float cutoff,
                  const std::vector<Tally>& want, const box_of<Dims>& b) {
  INFO((Design == cd::neighbor_design::staged ? "staged" : "direct")
       << (Periodic ? ", periodic" : ", open") << ", cutoff " << cutoff);
  coalesce::soa_vector<Tally> out(std::vector<Tally>(particles.size(), poison));
  cd::run_for_each_neighbor<Design, Periodic>(particles.const_view(), cells, cutoff, out.view(),
                                              tally_pairs<Dims, Periodic>{b.length[0], b.length[1], b.length[2]},
                                              particles.stream());
  ct::check_launch("for_each_neighbor");
  require_tallies(particles.to_vector(), out.to_vector(), want);
}

template <int Dims>
void check_exact(std::size_t n, bool outside, std::uint64_t seed) {
  const auto g = test_grid<Dims>();
  const auto b = box(g);
  const auto host = lattice<Dims>(n, g, outside, seed);
  coalesce::soa_vector<particle_t<Dims>> particles(host);
  const auto cells = coalesce::make_cell_list(particles, g, position_t<Dims>{});
  REQUIRE(cells.size() == n);
  for (const float cutoff : {cell, 13 * step}) {  // the cell's size, and less
    const auto want = brute_force<Dims>(host, cutoff, false, b);
    check_design<cd::neighbor_design::direct, false, Dims>(particles, cells, cutoff, want, b);
    check_design<cd::neighbor_design::staged, false, Dims>(particles, cells, cutoff, want, b);
    if (outside) continue;  // periodic positions lie inside the box
    const auto want_periodic = brute_force<Dims>(host, cutoff, true, b);
    check_design<cd::neighbor_design::direct, true, Dims>(particles, cells, cutoff, want_periodic, b);
    check_design<cd::neighbor_design::staged, true, Dims>(particles, cells, cutoff, want_periodic, b);
  }
}

}  // namespace

TEST_CASE("for_each_neighbor finds exactly the neighbours within the cutoff in 3D, open and periodic, both kernels") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(100), std::size_t(5003)}) {
    INFO(n << " particles");
    check_exact<3>(n, false, ct::test_seed() + n);
  }
}

TEST_CASE("for_each_neighbor finds exactly the neighbours within the cutoff in 2D, open and periodic, both kernels") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(100), std::size_t(5003)}) {
    INFO(n << " particles");
    check_exact<2>(n, false, ct::test_seed() + 7 * n);
  }
}

TEST_CASE("for_each_neighbor is exact for particles outside the grid, which sit in its edge cells") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  for (const std::size_t n : {std::size_t(100), std::size_t(5003), std::size_t(20011)}) {
    INFO(n << " particles, one in ten outside the grid");
    check_exact<3>(n, true, ct::test_seed() + 3 * n);
    check_exact<2>(n, true, ct::test_seed() + 5 * n);
  }
}

TEST_CASE("for_each_neighbor is exact where crowded edge cells overflow the stage") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // 9000 particles, 6000 of them beyond the grid's upper x edge: the edge cells hold hundreds each,
  // more than a block's stage, so those blocks read their neighbours from the columns.
  const auto g = grid_3d();
  const auto b = box(g);
  auto host = lattice<3>(9000, g, false, ct::test_seed());
  std::mt19937_64 random(ct::test_seed() + 1);
  for (std::size_t i = 0; i < 6000; ++i) host[i].x = b.lower[0] + b.length[0] + float(random() % 40) * step;
  coalesce::soa_vector<Atom> particles(host);
  const auto cells = coalesce::make_cell_list(particles, g, position_3d{});
  const auto want = brute_force<3>(host, cell, false, b);
  check_design<cd::neighbor_design::staged, false, 3>(particles, cells, cell, want, b);
  check_design<cd::neighbor_design::direct, false, 3>(particles, cells, cell, want, b);
}

TEST_CASE("the public forms: containers on the particles' stream, views on a stream of one's own, __device__ lambdas") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto g = grid_3d();
  const auto b = box(g);
  const auto host = lattice<3>(5003, g, false, ct::test_seed() + 11);
  coalesce::soa_vector<Atom> particles(host);
  const auto position = [] __device__(auto p) -> cuda::std::array<float, 3> { return {p.x, p.y, p.z}; };
  const auto cells = coalesce::make_cell_list(particles, g, position);
  const auto sorted = particles.to_vector();

  coalesce::soa_vector<Tally> out(std::vector<Tally>(host.size(), poison));
  coalesce::for_each_neighbor(particles, cells, cell, out, [] __device__(const auto& pi, const auto& pj, Tally& a) {
    a.count += 1;
    a.weights += std::uint32_t(pj.weight);
    a.ids += std::uint32_t(pj.id) * id_hash;
    a.dx += pi.x - pj.x;
    a.dy += pi.y - pj.y;
    a.dz += pi.z - pj.z;
  });
  require_tallies(sorted, out.to_vector(), brute_force<3>(host, cell, false, b));

  coalesce::soa_vector<Tally> periodic_out(std::vector<Tally>(host.size(), poison));
  coalesce::for_each_neighbor(particles, cells, cell, periodic_out,
                              tally_pairs<3, true>{b.length[0], b.length[1], b.length[2]}, coalesce::periodic);
  require_tallies(sorted, periodic_out.to_vector(), brute_force<3>(host, cell, true, b));

  cudaStream_t stream = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    // The view form of make_cell_list bins particles sorted already, on the stream given.
    const auto again = coalesce::make_cell_list(particles.const_view(), g, position, stream);
    CHECK(again.stream() == stream);
    coalesce::soa_vector<Tally> view_out(std::vector<Tally>(host.size(), poison));
    COALESCE_CUDA_CHECK(cudaDeviceSynchronize());  // the stream is not ordered after the default one's copies
    coalesce::for_each_neighbor(particles.const_view(), again, cell, view_out.view(),
                                tally_pairs<3, true>{b.length[0], b.length[1], b.length[2]}, coalesce::periodic,
                                stream);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(again.offsets_matrix().to_vector() == cells.offsets_matrix().to_vector());
    require_tallies(sorted, view_out.to_vector(), brute_force<3>(host, cell, true, b));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("make_cell_list sorts the particles by cell and gives each cell the range of its particles") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto g = grid_3d();
  const std::size_t n = 20011;
  coalesce::soa_vector<Atom> particles(lattice<3>(n, g, true, ct::test_seed() + 5));
  const auto cells = coalesce::make_cell_list(particles, g, position_3d{});
  const auto offsets = cells.offsets_matrix().to_vector();
  const auto sorted = particles.to_vector();
  REQUIRE(offsets.size() == std::size_t(g.cells()) + 1);
  CHECK(cells.cells() == g.cells());
  CHECK(offsets.front() == 0u);
  CHECK(offsets.back() == n);
  std::vector<bool> seen(n, false);
  for (std::uint32_t c = 0; c < g.cells(); ++c) {
    if (offsets[c] > offsets[c + 1]) FAIL("offsets decrease at cell " << c);
    for (std::uint32_t i = offsets[c]; i < offsets[c + 1]; ++i) {
      const auto& p = sorted[i];
      if (g.index_of(p.x, p.y, p.z) != c) FAIL("particle " << i << " is in the range of cell " << c);
      seen[p.id] = true;
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), true) == std::ptrdiff_t(n));  // the sort lost none
}

TEST_CASE("for_each_neighbor refuses a cutoff larger than a cell, outputs and cell lists of another size, "
          "other streams") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const auto g = grid_3d();
  coalesce::soa_vector<Atom> particles(lattice<3>(1000, g, false, 1));
  const auto cells = coalesce::make_cell_list(particles, g, position_3d{});
  coalesce::soa_vector<Tally> out(1000);
  const auto count = [] __device__(const auto&, const auto&, Tally& a) { a.count += 1; };
  const auto message = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(nothing thrown)");
  };

  auto m = message([&] { coalesce::for_each_neighbor(particles, cells, 1.5f, out, count); });
  CHECK(m.find("coalesce::for_each_neighbor") != std::string::npos);
  CHECK(m.find("cutoff") != std::string::npos);
  CHECK(m.find("larger than a cell") != std::string::npos);
  m = message([&] { coalesce::for_each_neighbor(particles, cells, -1.0f, out, count); });
  CHECK(m.find(">= 0") != std::string::npos);
  m = message([&] { coalesce::for_each_neighbor(particles, cells, std::nanf(""), out, count); });
  CHECK(m.find(">= 0") != std::string::npos);

  coalesce::soa_vector<Tally> short_out(999);
  m = message([&] { coalesce::for_each_neighbor(particles, cells, cell, short_out, count); });
  CHECK(m.find("out has 999 elements") != std::string::npos);

  coalesce::soa_vector<Atom> fewer(lattice<3>(999, g, false, 2));
  m = message([&] { coalesce::for_each_neighbor(fewer, cells, cell, short_out, count); });
  CHECK(m.find("made for 1000 particles") != std::string::npos);

  const coalesce::uniform_grid<3> thin{0.f, 0.f, 0.f, 1.f, 1.f, 1.f, 20, 2, 20};
  coalesce::soa_vector<Atom> thin_particles(lattice<3>(1000, g, false, 3));
  const auto thin_cells = coalesce::make_cell_list(thin_particles, thin, position_3d{});
  m = message([&] { coalesce::for_each_neighbor(thin_particles, thin_cells, 1.0f, out, count, coalesce::periodic); });
  CHECK(m.find("at least 3 cells") != std::string::npos);
  CHECK(m.find("20 x 2 x 20") != std::string::npos);

  const coalesce::uniform_grid<3> no_cells{0.f, 0.f, 0.f, 1.f, 1.f, 1.f, 20, 0, 20};
  m = message([&] { coalesce::make_cell_list(particles, no_cells, position_3d{}); });
  CHECK(m.find("coalesce::make_cell_list") != std::string::npos);

  cudaStream_t other = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  {
    coalesce::soa_vector<Tally> elsewhere(1000, coalesce::pool_resource(other));
    m = message([&] { coalesce::for_each_neighbor(particles, cells, cell, elsewhere, count); });
    CHECK(m.find("different streams") != std::string::npos);
    CHECK(m.find("pass their views and the stream") != std::string::npos);
    // A cell list made on another stream, for the same particles: refused as well. (The sort on
    // the default stream done first: the other stream is not ordered after it.)
    COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
    const auto other_cells = coalesce::make_cell_list(particles.const_view(), g, position_3d{}, other);
    m = message([&] { coalesce::for_each_neighbor(particles, other_cells, cell, out, count); });
    CHECK(m.find("different streams") != std::string::npos);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(other));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(other));
}

// --- measured: a Lennard-Jones-like force --------------------------------------------------

struct Body {
  float x, y, z, vx, vy, vz, m;
};
COALESCE_FIELDS(Body, x, y, z, vx, vy, vz, m);

struct Force {
  float fx, fy, fz;
};
COALESCE_FIELDS(Force, fx, fy, fz);

namespace {}  // namespace

struct Neighbours {
  std::uint32_t count;
};
COALESCE_FIELDS(Neighbours, count);

TEST_CASE("for_each_neighbor: a Lennard-Jones-like force on 4 Mi particles, against a hand-written cell-list kernel") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // About 30 neighbours within the cutoff: 7.08 particles per cell of the cutoff's size, and
  // 4/3 pi of a cell's volume within the cutoff.
  const std::size_t n = ct::small_problems() ? (std::size_t(1) << 18) : (std::size_t(1) << 22);
  const int side = int(std::lround(std::cbrt(double(n) / 7.08)));
  const float cutoff = 1.0f, length = float(side) * cutoff;
  const coalesce::uniform_grid<3> grid{0.f, 0.f, 0.f, cutoff, cutoff, cutoff, side, side, side};
  std::mt19937_64 random(ct::test_seed());
  std::uniform_real_distribution<float> where(0.0f, length), speed(-1.0f, 1.0f), mass(0.5f, 2.0f);
  std::vector<Body> host(n);
  for (auto& b : host)
    b = Body{where(random), where(random), where(random), speed(random), speed(random), speed(random), mass(random)};
  coalesce::soa_vector<Body> particles(host);
  const auto position = [] __device__(auto p) -> cuda::std::array<float, 3> { return {p.x, p.y, p.z}; };
  const auto cells = coalesce::make_cell_list(particles, grid, position);

  const Force unwritten{-1e30f, -1e30f, -1e30f};
  coalesce::soa_vector<Force> library(std::vector<Force>(n, unwritten)), direct(std::vector<Force>(n, unwritten)),
      staged(std::vector<Force>(n, unwritten)), hand(std::vector<Force>(n, unwritten));
  const auto view = particles.const_view();
  const auto run_library = [&](cudaStream_t s) {
    coalesce::for_each_neighbor(view, cells, cutoff, library.view(), competitors::lennard_jones{}, s);
  };
  const auto run_direct = [&](cudaStream_t s) {
    cd::run_for_each_neighbor<cd::neighbor_design::direct, false>(view, cells, cutoff, direct.view(),
                                                                  competitors::lennard_jones{}, s);
  };
  const auto run_staged = [&](cudaStream_t s) {
    cd::run_for_each_neighbor<cd::neighbor_design::staged, false>(view, cells, cutoff, staged.view(),
                                                                  competitors::lennard_jones{}, s);
  };
  const auto out = hand.view();
  const auto run_hand = [&](cudaStream_t s) {
    competitors::cell_list_forces(view.column<&Body::x>(), view.column<&Body::y>(), view.column<&Body::z>(),
                                  view.column<&Body::m>(), cells.offsets().data(), grid, cutoff * cutoff,
                                  std::uint32_t(n), out.column<&Force::fx>(), out.column<&Force::fy>(),
                                  out.column<&Force::fz>(), s);
  };
  run_hand(nullptr);
  run_library(nullptr);
  run_direct(nullptr);
  run_staged(nullptr);
  ct::check_launch("for_each_neighbor, Lennard-Jones");

  // Every kernel against a double-precision reference for a sample of particles, from the cells on
  // the host: within 1e-5 of the sum of the contributions' magnitudes (float rounding), plus the
  // contributions of pairs within 1e-5 of the cutoff, which float and double may place on either
  // side of it.
  const auto sorted = particles.to_vector();
  const auto offsets = cells.offsets_matrix().to_vector();
  const auto results =
      std::vector<std::vector<Force>>{library.to_vector(), direct.to_vector(), staged.to_vector(), hand.to_vector()};
  const char* const names[] = {"for_each_neighbor", "direct kernel", "staged kernel", "hand-written kernel"};
  std::size_t wrong[4] = {0, 0, 0, 0};
  for (int sample = 0; sample < 2000; ++sample) {
    const std::size_t i = random() % n;
    const Body& p = sorted[i];
    const auto c = grid.cell_of(p.x, p.y, p.z);
    double f[3] = {0, 0, 0}, magnitude = 0, borderline = 0;
    for (int cz = std::max(c.z - 1, 0); cz <= std::min(c.z + 1, side - 1); ++cz)
      for (int cy = std::max(c.y - 1, 0); cy <= std::min(c.y + 1, side - 1); ++cy)
        for (int cx = std::max(c.x - 1, 0); cx <= std::min(c.x + 1, side - 1); ++cx) {
          const std::uint32_t k = grid.index({cz, cy, cx});
          for (std::uint32_t j = offsets[k]; j < offsets[k + 1]; ++j) {
            if (j == i) continue;
            const double d[3] = {double(p.x) - sorted[j].x, double(p.y) - sorted[j].y, double(p.z) - sorted[j].z};
            const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            const double inverse = 1.0 / (r2 + 0.01), s2 = 0.25 * inverse, s6 = s2 * s2 * s2;
            const double s = 24.0 * (2.0 * s6 * s6 - s6) * inverse * sorted[j].m;
            const double size = std::abs(s) * (std::abs(d[0]) + std::abs(d[1]) + std::abs(d[2]));
            if (std::abs(r2 - 1.0) < 1e-5) borderline += size;
            if (r2 >= 1.0) continue;
            for (int a = 0; a < 3; ++a) f[a] += s * d[a];
            // 1e-5 of it for the float arithmetic, and 1e-6 |s| for the float displacement's
            // rounding (none between coordinates within a factor of 2 of each other: Sterbenz).
            magnitude += size + 0.1 * std::abs(s);
          }
        }
    const double tolerance = 1e-5 * magnitude + borderline + 1e-30;
    for (int r = 0; r < 4; ++r) {
      const Force& g = results[std::size_t(r)][i];
      const double got[3] = {g.fx, g.fy, g.fz};
      bool ok = true;
      for (int a = 0; a < 3; ++a) ok = ok && std::abs(got[a] - f[a]) <= tolerance;
      if (!ok && wrong[r]++ < 3)
        WARN(names[r] << ", particle " << i << ": " << got[0] << ", " << got[1] << ", " << got[2] << "; reference "
                      << f[0] << ", " << f[1] << ", " << f[2] << " (tolerance " << tolerance << ")");
    }
  }
  for (int r = 0; r < 4; ++r) {
    INFO(names[r]);
    CHECK(wrong[r] == 0);
  }

  // How many neighbours: the density the measurement is meant to have.
  coalesce::soa_vector<Neighbours> counts(n);
  coalesce::for_each_neighbor(view, cells, cutoff, counts.view(),
                              [] __device__(const auto&, const auto&, Neighbours& a) { a.count += 1; });
  double total = 0;
  for (const auto& c : counts.to_vector()) total += c.count;
  const double mean = total / double(n);
  CHECK(mean > 25.0);
  CHECK(mean < 35.0);

  COALESCE_REQUIRE_TIMING();
  // Interleaved rounds, the best median of each: a clock change during one measurement cannot
  // decide the comparison.
  double hand_ms = 1e30, coalesce_ms = 1e30, direct_ms = 1e30, staged_ms = 1e30;
  for (int round = 0; round < 3; ++round) {
    hand_ms = std::min(hand_ms, ct::median(ct::time_launches_ms(run_hand)));
    coalesce_ms = std::min(coalesce_ms, ct::median(ct::time_launches_ms(run_library)));
    direct_ms = std::min(direct_ms, ct::median(ct::time_launches_ms(run_direct)));
    staged_ms = std::min(staged_ms, ct::median(ct::time_launches_ms(run_staged)));
  }
  std::printf("for_each_neighbor, Lennard-Jones, %zu particles, %.1f neighbours each, %d^3 cells: coalesce %.3f ms, "
              "hand-written 27-cell kernel %.3f ms (%.2fx); kernels: staged %.3f ms, direct %.3f ms\n",
              n, mean, side, coalesce_ms, hand_ms, hand_ms / coalesce_ms, staged_ms, direct_ms);
  CHECK(coalesce_ms <= hand_ms);
}

namespace {

// The reads the default counters count, and DRAM's.
ct::counter_profiler& profiler() {
  static ct::counter_profiler instance;
  return instance;
}

struct body_position {
  template <class P>
  __host__ __device__ cuda::std::array<float, 3> operator()(const P& p) const {
    return {p.x, p.y, p.z};
  }
};

}  // namespace

TEST_CASE("for_each_neighbor's reads, counted: a few sectors a warp's load, each particle read from DRAM about once") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  // The Lennard-Jones system of the test above: 7.08 particles a cell of the cutoff's size.
  const std::size_t n = ct::small_problems() ? (std::size_t(1) << 18) : (std::size_t(1) << 22);
  const int side = int(std::lround(std::cbrt(double(n) / 7.08)));
  const float cutoff = 1.0f;
  const coalesce::uniform_grid<3> grid{0.f, 0.f, 0.f, cutoff, cutoff, cutoff, side, side, side};
  std::mt19937_64 random(ct::test_seed());
  std::uniform_real_distribution<float> where(0.0f, float(side) * cutoff), mass(0.5f, 2.0f);
  std::vector<Body> host(n);
  for (auto& b : host) b = Body{where(random), where(random), where(random), 0.f, 0.f, 0.f, mass(random)};
  coalesce::soa_vector<Body> particles(host);
  const auto cells = coalesce::make_cell_list(particles, grid, body_position{});
  coalesce::soa_vector<Force> forces(n);
  const auto view = particles.const_view();
  const auto run = [&](auto design) {
    cd::run_for_each_neighbor<decltype(design)::value, false>(view, cells, cutoff, forces.view(),
                                                              competitors::lennard_jones{}, nullptr);
  };
  using direct = std::integral_constant<cd::neighbor_design, cd::neighbor_design::direct>;
  using staged = std::integral_constant<cd::neighbor_design, cd::neighbor_design::staged>;
  run(direct{});
  run(staged{});
  ct::check_launch("for_each_neighbor, both kernels");

  COALESCE_REQUIRE_COUNTERS(profiler());
  namespace metric = ct::metric;
  const auto d = profiler().measure([&] { run(direct{}); });
  const auto s = profiler().measure([&] { run(staged{}); });
  const double direct_sectors = d[metric::global_load_sectors] / d[metric::global_load_requests];
  const double staged_sectors = s[metric::global_load_sectors] / s[metric::global_load_requests];
  // The least the work reads: each particle's position and mass, and the cells' offsets.
  const double least = 16.0 * double(n) + 4.0 * double(cells.cells() + 1);
  std::printf("for_each_neighbor, %zu particles in %d^3 cells: global load sectors a request: direct %.2f, staged "
              "%.2f; DRAM bytes read / the least: direct %.2f, staged %.2f; load requests a particle: direct %.1f, "
              "staged %.1f\n",
              n, side, direct_sectors, staged_sectors, d[metric::dram_bytes_read] / least,
              s[metric::dram_bytes_read] / least, d[metric::global_load_requests] / double(n),
              s[metric::global_load_requests] / double(n));
  // A warp's 32 consecutive sorted particles sit in about 5 adjacent cells and read the same
  // candidates a cell at a time: their loads touch no more sectors than one coalesced load of 32
  // floats (4), where 32 scattered ones would touch 32. The staged kernel's stage is filled with
  // coalesced loads of consecutive particles.
  CHECK(direct_sectors <= 4.0);
  CHECK(staged_sectors <= 4.0);
  // 27 cells' candidates a particle, read through L1 and L2: DRAM serves each particle once
  // (measured on an H100: 1.00x the least, 3.38 sectors a request direct, 2.16 staged).
  CHECK(d[metric::dram_bytes_read] <= 1.1 * least);
}
