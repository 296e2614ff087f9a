// An experiment, built on demand (target coalesce_experiment_deposit_waves, outside ALL): how many
// waves of blocks deposit's register-run stage should launch. The library's own kernel
// (detail::run_deposit_kernel, chunks of 8192 and of 4096) launched with one, two, four and eight
// waves, beside coalesce::deposit and the hand-written kernels of the benchmark, for 16 M
// cloud-in-cell particles sorted by cell into three grid shapes; every grid checked against the
// plain kernel's first. Its output on an H100 is docs/bench/particles-grids-h100/deposit-waves.txt;
// detail::run_deposit_waves comes from it.
#include <coalesce/deposit.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>

#include "median_time.hpp"
#include "particle_competitors.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

struct Charge {
  float x, y, q;
};
COALESCE_FIELDS(Charge, x, y, q);

using experiments::median_ms;

namespace {

std::vector<Charge> sorted_lattice(std::size_t n, std::size_t rows, std::size_t cols) {
  std::mt19937_64 random(3);
  std::vector<Charge> p(n);
  for (auto& c : p)
    c = Charge{float(random() % ((cols - 1) * 4)) / 4.0f, float(random() % ((rows - 1) * 4)) / 4.0f,
               float(1 + random() % 4)};
  std::sort(p.begin(), p.end(), [](const Charge& a, const Charge& b) {
    return std::make_pair(int(a.y), int(a.x)) < std::make_pair(int(b.y), int(b.x));
  });
  return p;
}

// The library's stage with `Chunk` particles a chunk, launched with `waves` waves of blocks.
template <unsigned Chunk>
void run_stage(coalesce::soa_view<const Charge> particles, coalesce::pitched_view<float> grid, unsigned waves) {
  using namespace coalesce::detail;
  using accumulator = coalesce::matrix_accumulator<float>;
  launch_chunked_deposit<run_deposit_kernel<Chunk, true, Charge, float, accumulator, competitors::cloud_in_cell>>(
      particles.size(), Chunk, waves, cudaStream_t{}, particles, grid, accumulator(grid), competitors::cloud_in_cell{});
}

}  // namespace

int main() {
  struct shape {
    std::size_t rows, cols;
  };
  for (const shape s : {shape{2048, 2048}, shape{1024, 4096}, shape{16384, 256}}) {
    const std::size_t n = std::size_t(16) << 20;
    const coalesce::soa_vector<Charge> particles(sorted_lattice(n, s.rows, s.cols));
    const auto v = particles.const_view();
    const float *x = v.column<&Charge::x>(), *y = v.column<&Charge::y>(), *q = v.column<&Charge::q>();
    coalesce::pitched_matrix<float> reference(s.rows, s.cols, 0.0f), grid(s.rows, s.cols, 0.0f);
    const auto g = grid.view();
    competitors::plain_cloud_in_cell(x, y, q, n, reference.view(), nullptr);
    const auto expected = reference.to_vector();
    struct row {
      std::string name;
      std::function<void()> run;
      double best = 1e30;
    };
    std::vector<row> rows{{"hand-written, privatized",
                           [&] { competitors::privatized_cloud_in_cell(x, y, q, n, g, nullptr); }},
                          {"coalesce::deposit", [&] { coalesce::deposit(v, g, competitors::cloud_in_cell{}); }},
                          {"plain atomics", [&] { competitors::plain_cloud_in_cell(x, y, q, n, g, nullptr); }}};
    for (const unsigned waves : {1u, 2u, 4u, 8u}) {
      rows.push_back(
          {"stage, chunks of 8192, " + std::to_string(waves) + " waves", [&, waves] { run_stage<8192>(v, g, waves); }});
      rows.push_back(
          {"stage, chunks of 4096, " + std::to_string(waves) + " waves", [&, waves] { run_stage<4096>(v, g, waves); }});
    }
    for (auto& r : rows) {
      grid.fill(0.0f);
      r.run();
      if (grid.to_vector() != expected) std::printf("MISMATCH: %s\n", r.name.c_str());
    }
    for (int round = 0; round < 3; ++round)
      for (auto& r : rows) r.best = std::min(r.best, median_ms(r.run));
    std::printf("== %zu x %zu floats, %zu particles sorted by cell (%s)\n", s.rows, s.cols, n,
                cudaGetErrorString(cudaGetLastError()));
    for (const auto& r : rows)
      std::printf("%-40s %.4f ms  %.3fx the hand-written kernel\n", r.name.c_str(), r.best, rows[0].best / r.best);
  }
}
