// An experiment, built on demand (target coalesce_experiment_fused_sweeps, outside ALL): how many
// sweeps a pass of the 2D fused walk should fuse. For each shape and element type it times 24
// sweeps on 8192 x 8192, clamp, as single sweeps and as coalesce::fuse{k} for every k the walk
// holds up to 12, beside the k that coalesce picks without coalesce::fuse and the access model's
// cost of a pass (detail::fused_pass_cost, clocks of one multiprocessor per useful element-sweep),
// so that the model's choice can be held against what the hardware does.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/device.hpp>

#include "median_time.hpp"
#include "stencils.hpp"

#include <cstdio>
#include <string>

using experiments::median_ms;

namespace {

using coalesce_test::five_point_of;
using coalesce_test::nine_point_of;
using coalesce_test::thirteen_point_of;

constexpr std::size_t steps = 24, n = 8192;

template <class Shape, class T>
void sweep_ks(const char* name) {
  constexpr int R = Shape::radius;
  namespace d = coalesce::detail;
  using g = d::fused_geometry<R, sizeof(T)>;
  coalesce::pitched_matrix<T> u(coalesce::testing::random_values<T>(n * n), n, n), v(n, n);
  const double single_ms =
      median_ms([&] { coalesce::stencil<R>(steps, coalesce::clamp, u, v, Shape{}, coalesce::fuse{1}); });
  const int chosen = int(d::iterated_sweeps_per_pass<R, T>(steps, 0, false));
  std::printf("%s, %zu-byte elements: %zu single sweeps %.3f ms; coalesce picks k = %d\n", name, sizeof(T), steps,
              single_ms, chosen);
  const int most = g::most_sweeps() < 12 ? g::most_sweeps() : 12;
  for (int k = 2; k <= most; ++k) {
    const double ms =
        median_ms([&] { coalesce::stencil<R>(steps, coalesce::clamp, u, v, Shape{}, coalesce::fuse{std::size_t(k)}); });
    std::printf("  fuse{%2d}  %8.3f ms  %.3fx single sweeps  model %.3f%s\n", k, ms, single_ms / ms,
                d::fused_pass_cost<R, sizeof(T)>(k), k == chosen ? "  <- coalesce's choice" : "");
  }
}

}  // namespace

int main() {
  sweep_ks<five_point_of<float>, float>("5-point");
  sweep_ks<nine_point_of<float>, float>("9-point");
  sweep_ks<thirteen_point_of<float>, float>("13-point");
  sweep_ks<five_point_of<double>, double>("5-point");
  sweep_ks<thirteen_point_of<double>, double>("13-point");
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
