// A particle-mesh step on coalesce, beside the same step in plain CUDA: two species of charged
// particles in a periodic 2D box of unit cells. Each step sorts the particles into a cell list,
// adds a short-range repulsion found through it, deposits the charge on the mesh by
// cloud-in-cell, takes a few Jacobi sweeps of Poisson's equation, differences the potential into
// the field and pushes the particles; then it sums their kinetic energy. Each phase is timed with
// cudaEvents in both versions. Checked: for_each_neighbor against for_each_pair on 32 K
// particles, both versions against the same step on the host for a small box, and the two
// versions against each other after the timed steps. Options: --n <particles> (default 1 Mi),
// --steps <steps> (default 10). Exits 77 (skipped) when there is no GPU, after the host step;
// 1 on a mismatch.
#include <coalesce/algorithm.hpp>
#include <coalesce/cell_list.hpp>
#include <coalesce/for_each_neighbor.hpp>
#include <coalesce/particles.hpp>  // make_cell_list's sort and bin, deposit, for_each_pair, wrap, uniform_grid
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/device.hpp>  // only for the "no GPU" check

#include <cuda/std/array>
#include <cuda/std/cmath>
#include <cuda/std/functional>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

struct Particle {
  float x, y, vx, vy, q;
  std::uint32_t id;  // the sort reorders the particles every step: the checks match them by id
};
COALESCE_FIELDS(Particle, x, y, vx, vy, q, id);

struct Force {  // what the short-range search sums for each particle
  float fx, fy;
};
COALESCE_FIELDS(Force, fx, fy);

// ---- The physics, shared by the coalesce version, the plain CUDA version and the host step ----

// A box of cells x cells unit cells, periodic. The mesh's points are the cells' lower corners, and
// the cell list uses the same cells, as wide as the cutoff.
struct mesh_params {
  explicit mesh_params(int box_cells) : cells(box_cells) {}
  int cells;
  float dt = 0.1f;
  float cutoff = 1.0f;     // of the repulsion: at most a cell
  float stiffness = 0.1f;  // its k
  int sweeps = 8;          // Jacobi sweeps a step, each step's from the last one's potential
  __host__ __device__ float box() const { return float(cells); }
  __host__ __device__ std::size_t points() const { return std::size_t(cells) * std::size_t(cells); }
};

// The displacement d, |d| < box, as its nearest periodic image.
__host__ __device__ inline float minimum_image(float d, float box) { return d - box * cuda::std::rint(d / box); }

// The repulsion of particle j on particle i, added into (fx, fy) when they are closer than the
// cutoff: F = k (1 - r^2 / rc^2) d, d = x_i - x_j as the minimum image, the force of the
// potential k rc^2 / 4 (1 - r^2 / rc^2)^2. No square root, finite at r = 0, and zero at the
// cutoff, so a pair that one distance test counts and another misses by a rounding adds nothing.
__host__ __device__ inline void add_repulsion(const mesh_params& m, float xi, float yi, float xj, float yj, float& fx,
                                              float& fy) {
  const float dx = minimum_image(xi - xj, m.box()), dy = minimum_image(yi - yj, m.box());
  const float r2 = dx * dx + dy * dy, rc2 = m.cutoff * m.cutoff;
  if (r2 < rc2) {
    const float s = m.stiffness * (1.0f - r2 / rc2);
    fx += s * dx;
    fy += s * dy;
  }
}

// Cloud-in-cell at a position in the box: the four mesh points of its cell, (r1, c1) across the
// periodic edge where the cell is the last one, and their weights w00 = (r0, c0), w01 = (r0, c1),
// w10 = (r1, c0), w11 = (r1, c1).
struct cic_stencil {
  int r0, c0, r1, c1;
  float w00, w01, w10, w11;
};
__host__ __device__ inline cic_stencil cic(float x, float y, int cells) {
  const int c = int(x), r = int(y);  // x, y in [0, cells)
  const float wx = x - float(c), wy = y - float(r);
  return {r,
          c,
          r + 1 < cells ? r + 1 : 0,
          c + 1 < cells ? c + 1 : 0,
          (1.0f - wx) * (1.0f - wy),
          wx * (1.0f - wy),
          (1.0f - wx) * wy,
          wx * wy};
}

// A mesh value at a position, interpolated with the weights its charge was deposited with. mesh(r,
// c) is a pitched_view or a dense_mesh.
template <class Mesh>
__host__ __device__ float interpolate(const Mesh& mesh, const cic_stencil& w) {
  return w.w00 * mesh(w.r0, w.c0) + w.w01 * mesh(w.r0, w.c1) + w.w10 * mesh(w.r1, w.c0) + w.w11 * mesh(w.r1, w.c1);
}

// A dense row-major mesh, as the plain version and the host keep theirs.
struct dense_mesh {
  const float* data;
  int cols;
  __host__ __device__ float operator()(int r, int c) const { return data[std::size_t(r) * std::size_t(cols) + c]; }
};

// One Jacobi sweep of laplacian(phi) = -rho at a point, h = 1: the mean of the four neighbours and rho.
__host__ __device__ inline float jacobi(float left, float right, float down, float up, float rho) {
  return 0.25f * (left + right + down + up + rho);
}

// A component of E = -grad(phi): the centred difference across a point.
__host__ __device__ inline float centred_difference(float before, float after) { return 0.5f * (before - after); }

// What the plain version and the host write for coalesce::wrap, for a particle that moved less
// than a box in a step: the same float (x - box is exact for x in [box, 2 box), and an x + box
// that rounds up to box is the point 0, as wrap makes it).
__host__ __device__ inline float wrap_into_box(float x, float box) {
  if (x < 0.0f) {
    const float up = x + box;
    return up < box ? up : 0.0f;
  }
  return x < box ? x : x - box;
}

// The kinetic energy of a particle of unit mass, summed in double.
struct kinetic_energy {
  template <class P>
  __host__ __device__ double operator()(const P& p) const {
    return 0.5 * (double(p.vx) * p.vx + double(p.vy) * p.vy);
  }
};

// Where the cell list puts a particle and measures its distances.
struct position_2d {
  template <class P>
  __host__ __device__ cuda::std::array<float, 2> operator()(const P& p) const {
    return {p.x, p.y};
  }
};

// The phases of a step, timed with cudaEvents on the null stream, where both versions run.
namespace phase {
enum : int { cell_list, pair_forces, deposit, poisson, field, push, energy, count };
}
const char* const phase_names[phase::count] = {
    "cell list (sort, bin)", "short-range forces",
    "deposit (CIC)",         "Poisson (8 Jacobi sweeps)",
    "field E = -grad phi",   "push",
    "kinetic energy",
};

class phase_timer {
 public:
  phase_timer() {
    for (auto& e : events_) COALESCE_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~phase_timer() {
    for (auto e : events_) (void)cudaEventDestroy(e);
  }
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;

  void start() { COALESCE_CUDA_CHECK(cudaEventRecord(events_[0], 0)); }
  void end(int p) { COALESCE_CUDA_CHECK(cudaEventRecord(events_[p + 1], 0)); }
  // Adds the step's phases once its last event has passed; a warm-up step is not counted.
  void finish_step(bool counted) {
    COALESCE_CUDA_CHECK(cudaEventSynchronize(events_[phase::count]));
    if (!counted) return;
    for (int p = 0; p < phase::count; ++p) {
      float ms = 0.0f;
      COALESCE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[p], events_[p + 1]));
      total_ms_[p] += ms;
    }
    ++steps_;
  }
  double mean_ms(int p) const { return steps_ == 0 ? 0.0 : total_ms_[p] / steps_; }

 private:
  cudaEvent_t events_[phase::count + 1]{};
  double total_ms_[phase::count]{};
  int steps_ = 0;
};

// The same step in plain CUDA, over the same physics.
#include "plain_step.cuh"

// ---- The step on coalesce ----------------------------------------------------------------------

struct coalesce_mesh {
  coalesce_mesh(const std::vector<Particle>& start, const mesh_params& params)
      : m(params), particles(start), forces(start.size()), rho(rows(), rows(), 0.0f), phi(rows(), rows(), 0.0f),
        phi_next(rows(), rows(), 0.0f), ex(rows(), rows(), 0.0f), ey(rows(), rows(), 0.0f) {}
  std::size_t rows() const { return std::size_t(m.cells); }

  mesh_params m;
  coalesce::soa_vector<Particle> particles;  // six columns, in cell order after each step's sort
  coalesce::soa_vector<Force> forces;        // the short-range sums, one per particle
  coalesce::pitched_matrix<float> rho, phi, phi_next, ex, ey;
};

constexpr int coalesce_step_first_line = __LINE__ + 1;
// One step; returns the kinetic energy after it. The short-range forces come right after the cell
// list, which holds the positions it sorted until the push moves them.
double coalesce_step(coalesce_mesh& s, phase_timer& timer) {
  const mesh_params m = s.m;
  const coalesce::uniform_grid<2> grid{0.0f, 0.0f, 1.0f, 1.0f, m.cells, m.cells};
  timer.start();
  const auto cells = coalesce::make_cell_list(s.particles, grid, position_2d{});  // sorts by cell, then bins
  timer.end(phase::cell_list);

  coalesce::for_each_neighbor(
      s.particles, cells, m.cutoff, s.forces,
      [m] __device__(const auto& pi, const auto& pj, auto& a) { add_repulsion(m, pi.x, pi.y, pj.x, pj.y, a.fx, a.fy); },
      coalesce::periodic);
  coalesce::transform(coalesce::inputs(s.particles, s.forces), s.particles.view(),  // v += F dt, in place
                      [m] __device__(const auto& p, const auto& f) {
                        return Particle{p.x, p.y, p.vx + f.fx * m.dt, p.vy + f.fy * m.dt, p.q, p.id};
                      });
  timer.end(phase::pair_forces);

  coalesce::zero(s.rho);
  coalesce::deposit(s.particles, s.rho, [m] __device__(auto p, auto acc) {
    const cic_stencil w = cic(p.x, p.y, m.cells);
    const float q = p.q;
    acc.add(w.r0, w.c0, q * w.w00);
    acc.add(w.r0, w.c1, q * w.w01);
    acc.add(w.r1, w.c0, q * w.w10);
    acc.add(w.r1, w.c1, q * w.w11);
  });
  timer.end(phase::deposit);

  for (int k = 0; k < m.sweeps; ++k) {
    coalesce::stencil<1>(coalesce::periodic, coalesce::inputs(s.phi, s.rho), s.phi_next,
                         [] __device__(auto phi, auto rho) {
                           return jacobi(phi(0, -1), phi(0, 1), phi(-1, 0), phi(1, 0), rho(0, 0));
                         });
    s.phi.swap(s.phi_next);
  }
  timer.end(phase::poisson);

  coalesce::stencil<1>(coalesce::periodic, s.phi, s.ex,
                       [] __device__(auto phi) { return centred_difference(phi(0, -1), phi(0, 1)); });
  coalesce::stencil<1>(coalesce::periodic, s.phi, s.ey,
                       [] __device__(auto phi) { return centred_difference(phi(-1, 0), phi(1, 0)); });
  timer.end(phase::field);

  const auto ex = s.ex.const_view(), ey = s.ey.const_view();
  coalesce::for_each(s.particles.view(), [=] __device__(auto p) {
    const cic_stencil w = cic(p.x, p.y, m.cells);
    p.vx += p.q * interpolate(ex, w) * m.dt;
    p.vy += p.q * interpolate(ey, w) * m.dt;
    p.x = coalesce::wrap(p.x + p.vx * m.dt, m.box());
    p.y = coalesce::wrap(p.y + p.vy * m.dt, m.box());
  });
  timer.end(phase::push);

  const double energy = coalesce::transform_reduce(s.particles, kinetic_energy{}, 0.0, cuda::std::plus<double>{});
  timer.end(phase::energy);
  return energy;
}
constexpr int coalesce_step_lines = __LINE__ - coalesce_step_first_line;

// ---- The same step on the host, for a small box -----------------------------------------------

// Every pair is tested, with no cell list, so that it checks both versions' cell lists too.
struct host_mesh {
  mesh_params m;
  std::vector<Particle> particles;
  std::vector<float> phi;
};

double host_step(host_mesh& s) {
  const mesh_params m = s.m;
  const int cells = m.cells;
  const auto at = [cells](int r, int c) { return std::size_t(r) * std::size_t(cells) + std::size_t(c); };
  const auto before = [cells](int i) { return i > 0 ? i - 1 : cells - 1; };
  const auto after = [cells](int i) { return i + 1 < cells ? i + 1 : 0; };
  std::vector<Particle>& p = s.particles;
  const std::size_t n = p.size();

  std::vector<float> fx(n, 0.0f), fy(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) add_repulsion(m, p[i].x, p[i].y, p[j].x, p[j].y, fx[i], fy[i]);
  for (std::size_t i = 0; i < n; ++i) {
    p[i].vx = p[i].vx + fx[i] * m.dt;
    p[i].vy = p[i].vy + fy[i] * m.dt;
  }

  std::vector<float> rho(m.points(), 0.0f);
  for (const Particle& q : p) {
    const cic_stencil w = cic(q.x, q.y, cells);
    rho[at(w.r0, w.c0)] += q.q * w.w00;
    rho[at(w.r0, w.c1)] += q.q * w.w01;
    rho[at(w.r1, w.c0)] += q.q * w.w10;
    rho[at(w.r1, w.c1)] += q.q * w.w11;
  }

  std::vector<float> next(m.points());
  for (int k = 0; k < m.sweeps; ++k) {
    for (int r = 0; r < cells; ++r)
      for (int c = 0; c < cells; ++c)
        next[at(r, c)] = jacobi(s.phi[at(r, before(c))], s.phi[at(r, after(c))], s.phi[at(before(r), c)],
                                s.phi[at(after(r), c)], rho[at(r, c)]);
    s.phi.swap(next);
  }

  std::vector<float> ex(m.points()), ey(m.points());
  for (int r = 0; r < cells; ++r)
    for (int c = 0; c < cells; ++c) {
      ex[at(r, c)] = centred_difference(s.phi[at(r, before(c))], s.phi[at(r, after(c))]);
      ey[at(r, c)] = centred_difference(s.phi[at(before(r), c)], s.phi[at(after(r), c)]);
    }

  double energy = 0.0;
  for (Particle& q : p) {
    const cic_stencil w = cic(q.x, q.y, cells);
    q.vx += q.q * interpolate(dense_mesh{ex.data(), cells}, w) * m.dt;
    q.vy += q.q * interpolate(dense_mesh{ey.data(), cells}, w) * m.dt;
    q.x = wrap_into_box(q.x + q.vx * m.dt, m.box());
    q.y = wrap_into_box(q.y + q.vy * m.dt, m.box());
    energy += kinetic_energy{}(q);
  }
  return energy;
}

// ---- Setup and checks ---------------------------------------------------------------------------

// n particles, uniform in the box, velocities uniform in [-0.1, 0.1); even ids carry +0.1, odd
// ones -0.1, so that an even count is neutral (a periodic Poisson equation has a solution only
// then). The same seed gives the same particles to every version. A random start holds the
// repulsion's potential energy, which the first steps turn into kinetic energy: it more than
// doubles in 10 steps, and levels off after about 25.
std::vector<Particle> initial_particles(std::size_t n, const mesh_params& m, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> where(0.0f, m.box()), speed(-0.1f, 0.1f);
  std::vector<Particle> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = coalesce::wrap(where(engine), m.box()), y = coalesce::wrap(where(engine), m.box());
    const float vx = speed(engine), vy = speed(engine);
    p[i] = {x, y, vx, vy, i % 2 == 0 ? 0.1f : -0.1f, std::uint32_t(i)};
  }
  return p;
}

// How far the versions may drift apart. They differ only in the order of float sums - deposit's
// atomics (an order that changes from run to run), the neighbour sums (cell row by cell row in
// coalesce, cell by cell in the plain kernel, j in order on the host) - and in nvcc's fused
// multiply-adds, which the host does not make. Each changes a sum in its last bits; a position
// then rounds one unit in its last place apart (2e-6 at x = 30, 3e-5 at x = 500), which the
// repulsion turns into velocity, and the differences grow slowly from step to step. A host
// emulation of this step (two runs in other sum orders, one with fused multiply-adds; not part of
// the example) differed by at most 1.9e-6 in position, 4.5e-8 in velocity and 3e-9 in energy in
// the small box after 2 steps, and by 9.2e-5, 1.4e-5 and 2e-8 in the full box after 10 steps
// (1.8e-4, 7e-5 and 2e-9 after 40). What a wrong step changes is larger: one pair at half the
// cutoff kicks a velocity by 3.8e-3 in a step, the field by 6e-4 (rms; up to 3.6e-3).
struct tolerance {
  double position, velocity, energy;  // the largest |difference|; the energy's relative to it
};
// 2 steps in the small box; the timed steps in the full box.
constexpr tolerance against_host{1e-4, 1e-5, 1e-6}, against_each_other{1e-3, 1e-3, 1e-6};

// Whether two sets of the same particles, matched by id, agree within `tol`; prints the
// largest differences, positions by their minimum image.
bool agree(const char* what, const std::vector<Particle>& a, double energy_a, const std::vector<Particle>& b,
           double energy_b, float box, const tolerance& tol) {
  std::vector<const Particle*> by_id(b.size(), nullptr);
  for (const Particle& q : b)
    if (q.id < by_id.size()) by_id[q.id] = &q;
  constexpr double infinite = std::numeric_limits<double>::infinity();
  double position = a.size() == b.size() ? 0.0 : infinite, velocity = position;
  for (const Particle& p : a) {
    const Particle* q = p.id < by_id.size() ? by_id[p.id] : nullptr;
    if (q == nullptr) {
      position = velocity = infinite;  // a particle lost or duplicated
      break;
    }
    position = std::max(
        {position, double(std::abs(minimum_image(p.x - q->x, box))), double(std::abs(minimum_image(p.y - q->y, box)))});
    velocity = std::max({velocity, double(std::abs(p.vx - q->vx)), double(std::abs(p.vy - q->vy))});
  }
  const double energy = std::abs(energy_a - energy_b) / std::abs(energy_b);
  const bool ok = position <= tol.position && velocity <= tol.velocity && energy <= tol.energy;
  std::printf("%-28s largest differences: position %.2e (<= %.0e), velocity %.2e (<= %.0e), energy %.2e (<= %.0e)%s\n",
              what, position, tol.position, velocity, tol.velocity, energy, tol.energy, ok ? "" : "  MISMATCH");
  return ok;
}

// for_each_neighbor against for_each_pair: the same repulsion on the same particles, once through
// the periodic cell list, once over all n^2 pairs with the cutoff tested in f (add_repulsion
// tests it either way). The same pairs, summed in other orders, which moved the sums by 6e-8 on
// the host: within 1e-5 of forces whose components reach 0.38 (0.1 rms), where a pair at 0.99 of
// the cutoff adds 2e-3.
bool neighbours_match_all_pairs(std::size_t n, const mesh_params& m) {
  coalesce::soa_vector<Particle> particles(initial_particles(n, m, 7));
  const coalesce::uniform_grid<2> grid{0.0f, 0.0f, 1.0f, 1.0f, m.cells, m.cells};
  const auto cells = coalesce::make_cell_list(particles, grid, position_2d{});
  const auto repulsion = [m] __device__(const auto& pi, const auto& pj, auto& a) {
    add_repulsion(m, pi.x, pi.y, pj.x, pj.y, a.fx, a.fy);
  };
  coalesce::soa_vector<Force> near(n), all(n);
  coalesce::for_each_neighbor(particles, cells, m.cutoff, near, repulsion, coalesce::periodic);
  coalesce::for_each_pair(particles, all, repulsion);
  const auto a = near.to_vector(), b = all.to_vector();
  double largest = 0.0, strongest = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    largest = std::max({largest, double(std::abs(a[i].fx - b[i].fx)), double(std::abs(a[i].fy - b[i].fy))});
    strongest = std::max({strongest, double(std::abs(b[i].fx)), double(std::abs(b[i].fy))});
  }
  const bool ok = largest <= 1e-5 && strongest > 0.0;
  std::printf("for_each_neighbor vs for_each_pair, %zu particles in a %d x %d box: largest difference %.2e of forces "
              "up to %.3f%s\n",
              n, m.cells, m.cells, largest, strongest, ok ? "" : "  MISMATCH");
  return ok;
}

// The value of `--name` in argv, or `fallback`.
std::size_t option(int argc, char** argv, const char* name, std::size_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtoull(argv[i + 1], nullptr, 10);
  return fallback;
}

int main(int argc, char** argv) {
  std::size_t n = option(argc, argv, "--n", std::size_t(1) << 20);
  const int steps = int(option(argc, argv, "--steps", 10));
  n += n % 2;  // neutral
  if (n < 2 || n > (std::size_t(1) << 31) || steps < 1) {
    std::printf("usage: particle_mesh [--n particles (2 .. 2^31)] [--steps steps (>= 1)]\n");
    return 2;
  }
  const mesh_params full(512), small(32), pairs_box(90);
  std::printf("particle mesh: %zu particles of %zu bytes in a %d x %d periodic box of unit cells, %d steps of dt %g\n",
              n, sizeof(Particle), full.cells, full.cells, steps, double(full.dt));
  std::printf("a step: cell list, repulsion within %g, CIC deposit, %d Jacobi sweeps, E = -grad phi, push, energy\n\n",
              double(full.cutoff), full.sweeps);

  // The host step needs no GPU.
  const std::size_t small_n = 4096;
  const std::vector<Particle> small_start = initial_particles(small_n, small, 3);
  host_mesh host{small, small_start, std::vector<float>(small.points(), 0.0f)};
  const double host_energy_1 = host_step(host), host_energy_2 = host_step(host);
  std::printf("host step, %zu particles in a %d x %d box: kinetic energy %.6f, then %.6f\n", small_n, small.cells,
              small.cells, host_energy_1, host_energy_2);
  if (auto reason = coalesce::testing::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the two versions of the step run on a GPU (%s)\n", reason->c_str());
    return 77;
  }

  bool ok = neighbours_match_all_pairs(32768, pairs_box);

  {  // Both versions, two steps of the small box, against the host.
    coalesce_mesh on_coalesce(small_start, small);
    plain_mesh on_plain(small_start, small);
    phase_timer untimed;
    double energy_coalesce = 0.0, energy_plain = 0.0;
    for (int s = 0; s < 2; ++s) {
      energy_coalesce = coalesce_step(on_coalesce, untimed);
      untimed.finish_step(false);
      energy_plain = plain_step(on_plain, untimed);
      untimed.finish_step(false);
    }
    ok &= agree("coalesce vs host:", on_coalesce.particles.to_vector(), energy_coalesce, host.particles, host_energy_2,
                small.box(), against_host);
    ok &= agree("plain CUDA vs host:", on_plain.download(), energy_plain, host.particles, host_energy_2, small.box(),
                against_host);
  }

  // The timed steps. Each version runs its steps back to back, as a code would; the first step,
  // which grows the memory pools, is not counted unless it is the only one.
  const std::vector<Particle> start = initial_particles(n, full, 1);
  double start_energy = 0.0;
  for (const Particle& p : start) start_energy += kinetic_energy{}(p);
  coalesce_mesh on_coalesce(start, full);
  plain_mesh on_plain(start, full);
  phase_timer coalesce_times, plain_times;
  double energy_coalesce = 0.0, energy_plain = 0.0;
  for (int s = 0; s < steps; ++s) {
    energy_coalesce = coalesce_step(on_coalesce, coalesce_times);
    coalesce_times.finish_step(s > 0 || steps == 1);
  }
  for (int s = 0; s < steps; ++s) {
    energy_plain = plain_step(on_plain, plain_times);
    plain_times.finish_step(s > 0 || steps == 1);
  }

  std::printf("\n%-30s %10s %12s %18s\n", "ms per step", "coalesce", "plain CUDA", "plain / coalesce");
  double total_coalesce = 0.0, total_plain = 0.0;
  for (int p = 0; p < phase::count; ++p) {
    const double a = coalesce_times.mean_ms(p), b = plain_times.mean_ms(p);
    total_coalesce += a;
    total_plain += b;
    std::printf("%-30s %10.3f %12.3f %18.2f\n", phase_names[p], a, b, b / a);
  }
  std::printf("%-30s %10.3f %12.3f %18.2f\n", "total", total_coalesce, total_plain, total_plain / total_coalesce);
  std::printf("(coalesce's short-range forces include the pass that adds them into the velocities; the plain "
              "version adds them in its push)\n");
  std::printf("source lines of the step, comments included: coalesce %d (coalesce_step), plain CUDA %d (plain_step "
              "and its kernels)\n\n",
              coalesce_step_lines, plain_step_lines);

  std::printf("kinetic energy: %.6f at the start, %.6f after %d steps on coalesce, %.6f in plain CUDA\n", start_energy,
              energy_coalesce, steps, energy_plain);
  ok &= agree("coalesce vs plain CUDA:", on_coalesce.particles.to_vector(), energy_coalesce, on_plain.download(),
              energy_plain, full.box(), against_each_other);
  if (!ok) {
    std::printf("MISMATCH: see the lines above\n");
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
