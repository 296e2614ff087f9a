// The stencils group of the benchmark: 5-point and 9-point (radius 1) and 13-point (radius 2)
// stencils, reads beyond the edge clamped, on pitched 8192 x 8192 and 200000 x 1000 floats, and
// the 7-point and 25-point star (radius 4) stencils on a pitched 512^3 volume, and the 3-point and
// 5-point means along a line of 62.5 M floats (a cuda::std::span; line_stencils.hpp).
// coalesce::stencil against the hand-written stencils of competitors.hpp (a shared-memory tile,
// one float4 of outputs per thread, float4 bands of 2 and 4 rows per thread, one element per
// thread), each checked against a host
// reference before it is timed. Bytes: one read of the input and one write of the output.
// The iterated group: 100 sweeps of the 5-point and 9-point stencils on 8192 x 8192 floats and
// of the 7-point stencil on a 512^3 volume, clamped, coalesce::stencil<1>(100, ...) (the fused
// walks) against 100 single sweeps of coalesce::stencil<1> ping-ponging, its result checked
// against theirs bit for bit before it is timed. Bytes: what the single sweeps move, 100 reads and 100 writes of the matrix, for both rows,
// so that the ratio of their GB/s is the ratio of their times.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/stencil.hpp>

#include <cuda/std/span>

#include "bench.hpp"
#include "line_stencils.hpp"
#include "stencils.hpp"

#include <string>
#include <utility>
#include <vector>

namespace bench {
namespace {

using coalesce_test::competitors::stencil_shape;

// Each candidate once into `out` (a matrix or a volume of floats), its result compared with the
// host's, then all measured; bytes: one read of the input and one write of the output.
template <class Container>
void check_and_measure(runner& r, const std::string& group, const std::vector<candidate>& candidates, Container& out,
                       const std::vector<float>& expected) {
  for (const auto& c : candidates) {
    out.fill(-7.0f);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (out.to_vector() != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 2.0 * double(expected.size()) * sizeof(float));
}

template <class Shape>
void stencil_rows(runner& r, const char* shape_name, stencil_shape shape, std::size_t rows, std::size_t cols,
                  double of_peak, const std::vector<float>& values) {
  coalesce::pitched_matrix<float> in(values, rows, cols), out(rows, cols);
  const auto in_view = in.const_view();
  const auto out_view = out.view();
  const std::string group = std::string(shape_name) + " stencil, clamp, pitched " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " floats";
  std::printf("%s\n", group.c_str());
  const auto candidates =
      std::vector<candidate>{
          {"coalesce::stencil<" + std::to_string(Shape::radius) + ">(clamp, view, view)", row_role::library,
           [=](cudaStream_t s) {
             coalesce::stencil<Shape::radius>(
                 coalesce::clamp, in_view, out_view, [] __device__(auto n) { return Shape{}(n); }, s);
           },
           target(of_peak)}} +
      coalesce_test::competitors::stencil_clamped(shape, in_view, out_view);

  std::vector<float> expected(rows * cols);
  coalesce_test::reference_stencil<Shape::radius>(coalesce::clamp, rows, cols, expected, Shape{}, values);
  check_and_measure(r, group, candidates, out, expected);
}

// The same on a pitched volume, n x n x n floats.
template <class Shape>
void volume_stencil_rows(runner& r, const char* shape_name, coalesce_test::competitors::volume_stencil_shape shape,
                         std::size_t n, const row_target& goal, const std::vector<float>& values) {
  coalesce::pitched_volume<float> in(values, n, n, n), out(n, n, n);
  const auto in_view = in.const_view();
  const auto out_view = out.view();
  const std::string group = std::string(shape_name) + " stencil, clamp, pitched " + std::to_string(n) + "^3 floats";
  std::printf("%s\n", group.c_str());
  const auto candidates =
      std::vector<candidate>{
          {"coalesce::stencil<" + std::to_string(Shape::radius) + ">(clamp, volume view, volume view)",
           row_role::library,
           [=](cudaStream_t s) {
             coalesce::stencil<Shape::radius>(
                 coalesce::clamp, in_view, out_view, [] __device__(auto nb) { return Shape{}(nb); }, s);
           },
           goal}} +
      coalesce_test::competitors::volume_stencil_clamped(shape, in_view, out_view);

  std::vector<float> expected(n * n * n);
  coalesce_test::reference_volume_stencil<Shape::radius>(coalesce::clamp, n, n, n, expected, Shape{}, values);
  check_and_measure(r, group, candidates, out, expected);
}

// f for coalesce::stencil along a line (a functor: a device lambda cannot be defined in a template).
template <class Shape>
struct apply_line_shape {
  template <class N>
  __device__ float operator()(const N& nb) const {
    return Shape{}(nb);
  }
};

// The same along a line of n floats, against the hand-written line stencils.
template <class Shape>
void line_stencil_rows(runner& r, const char* shape_name, std::size_t n, const std::vector<float>& values) {
  coalesce::testing::device_buffer<float> in(values), out(n);
  const cuda::std::span<const float> in_span(in.data(), n);
  const cuda::std::span<float> out_span(out.data(), n);
  const std::string group = std::string(shape_name) + " along a line, clamp, " + std::to_string(n) + " floats";
  std::printf("%s\n", group.c_str());
  std::vector<candidate> candidates{
      {"coalesce::stencil<" + std::to_string(Shape::radius) + ">(clamp, span, span)", row_role::library,
       [=](cudaStream_t s) {
         coalesce::stencil<Shape::radius>(coalesce::clamp, in_span, out_span, apply_line_shape<Shape>{}, s);
       },
       target(targets::line_stencil_of_peak)}};
  for (auto& c : coalesce_test::competitors::line_stencil_clamped<Shape>(in.data(), out.data(), (long long)n))
    candidates.push_back({c.name, row_role::competitor, c.launch});
  std::vector<float> expected(n);
  coalesce_test::reference_line_stencil<Shape::radius>(coalesce::clamp, values, expected, Shape{});
  for (const auto& c : candidates) {
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (out.download() != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 2.0 * double(n) * sizeof(float));
}

// `steps` sweeps of Shape on n x n matrices (or n^3 volumes) of floats, clamped: the iterated call
// against single sweeps, its result compared with theirs bit for bit once, then both timed.
// k_asked: the k of a coalesce::fuse{k} the call passes, 0 for none (then k_chosen is the call's).
template <class Shape, class Grid>
void iterated_rows(runner& r, const char* shape_name, Grid u, Grid v, Grid a, Grid b, const std::string& extent,
                   std::size_t steps, double versus_single, std::size_t k_chosen, std::size_t k_asked = 0) {
  const std::size_t elements = u.size();
  const std::string group =
      std::to_string(steps) + " sweeps of the " + shape_name + " stencil, clamp, pitched " + extent + " floats";
  std::printf("%s\n", group.c_str());
  const auto u_view = u.view(), v_view = v.view(), a_view = a.view(), b_view = b.view();
  const auto iterated = [=](cudaStream_t s) {
    if (k_asked == 0) coalesce::stencil<Shape::radius>(steps, coalesce::clamp, u_view, v_view, Shape{}, s);
    else coalesce::stencil<Shape::radius>(steps, coalesce::clamp, u_view, v_view, Shape{}, coalesce::fuse{k_asked}, s);
  };
  const auto single = [=](cudaStream_t s) {
    auto from = a_view, to = b_view;
    for (std::size_t step = 0; step < steps; ++step) {
      coalesce::stencil<Shape::radius>(coalesce::clamp, from, to, Shape{}, s);
      std::swap(from, to);
    }
  };
  iterated(0);
  single(0);
  ct::check_sync(group.c_str());
  const bool in_u = steps % 2 == 0;
  if ((in_u ? u : v).to_vector() != (in_u ? a : b).to_vector()) r.mismatch(group + ": coalesce::stencil(steps, ...)");
  const std::string k = std::to_string(k_asked == 0 ? k_chosen : k_asked);
  const std::vector<candidate> candidates{
      {"coalesce::stencil<" + std::to_string(Shape::radius) + ">(" + std::to_string(steps) + ", clamp, u, v" +
           (k_asked == 0 ? "), k = " + k : ", fuse{" + k + "})"),
       row_role::library, iterated, row_target{versus_single, 0.0},
       "bytes: the single sweeps' (a read and a write a sweep); the fused walk moves about 1/k of them"},
      {std::to_string(steps) + " x coalesce::stencil<" + std::to_string(Shape::radius) + ">(clamp, in, out)",
       row_role::competitor, single}};
  // No counters: 100 single sweeps are more kernels than one counter measurement takes.
  r.measure(group, candidates, 2.0 * double(steps) * double(elements) * sizeof(float), 3, false);
}

}  // namespace

void iterated_stencils(runner& r) {
  namespace d = coalesce::detail;
  using matrix = coalesce::pitched_matrix<float>;
  using volume = coalesce::pitched_volume<float>;
  const std::size_t steps = 100;
  {
    const std::size_t n = 8192;
    const auto values = ct::random_values<float>(n * n);
    const std::string extent = std::to_string(n) + " x " + std::to_string(n);
    iterated_rows<coalesce_test::five_point>(r, "5-point", matrix(values, n, n), matrix(n, n), matrix(values, n, n),
                                             matrix(n, n), extent, steps,
                                             targets::iterated_5_point_versus_single_sweeps,
                                             d::iterated_sweeps_per_pass<1, float>(steps, 0, false));
    iterated_rows<coalesce_test::nine_point>(r, "9-point", matrix(values, n, n), matrix(n, n), matrix(values, n, n),
                                             matrix(n, n), extent, steps,
                                             targets::iterated_9_point_versus_single_sweeps,
                                             d::iterated_sweeps_per_pass<1, float>(steps, 0, false));
  }
  // A volume's call takes single sweeps unless coalesce::fuse asks for the fused walk (until that
  // measures faster: detail::fused_volume_walk_by_default), so the row asks for the model's k.
  const std::size_t n = 512;
  const auto values = ct::random_values<float>(n * n * n);
  const std::size_t model_k =
      std::size_t(d::automatic_fused_volume_sweeps<1, sizeof(float)>(d::opt_in_shared_bytes(d::current_device())));
  iterated_rows<coalesce_test::seven_point>(r, "7-point", volume(values, n, n, n), volume(n, n, n),
                                            volume(values, n, n, n), volume(n, n, n), std::to_string(n) + "^3", steps,
                                            targets::iterated_7_point_volume_versus_single_sweeps,
                                            d::iterated_volume_sweeps_per_pass<1, float>(steps, 0, false),
                                            d::fused_volume_walk_by_default ? 0 : model_k);
}

void stencils(runner& r) {
  const std::size_t shapes[][2] = {{8192, 8192}, {200000, 1000}};
  for (const auto& shape : shapes) {
    const std::size_t rows = shape[0], cols = shape[1];
    const auto values = ct::random_values<float>(rows * cols);
    stencil_rows<coalesce_test::five_point>(r, "5-point", stencil_shape::five_point, rows, cols,
                                            targets::stencil_radius_1_of_peak, values);
    stencil_rows<coalesce_test::nine_point>(r, "9-point", stencil_shape::nine_point, rows, cols,
                                            targets::stencil_nine_point_of_peak, values);
    stencil_rows<coalesce_test::thirteen_point>(r, "13-point", stencil_shape::thirteen_point, rows, cols,
                                                targets::stencil_radius_2_of_peak, values);
  }
  // Volumes, held as device.stencil holds them: at floors under their first measurement.
  using coalesce_test::competitors::volume_stencil_shape;
  const std::size_t n = 512;
  const auto volume = ct::random_values<float>(n * n * n);
  volume_stencil_rows<coalesce_test::seven_point>(
      r, "7-point", volume_stencil_shape::seven_point, n,
      row_target{targets::volume_stencil_7_point_versus_hand_written, targets::volume_stencil_7_point_of_peak}, volume);
  volume_stencil_rows<coalesce_test::twenty_five_point>(r, "25-point star", volume_stencil_shape::twenty_five_point, n,
                                                        row_target{targets::volume_stencil_25_point_versus_hand_written,
                                                                   targets::volume_stencil_25_point_of_peak},
                                                        volume);
  const std::size_t line = 62500000;
  const auto line_values = ct::random_values<float>(line);
  line_stencil_rows<coalesce_test::three_point_line>(r, "3-point mean", line, line_values);
  line_stencil_rows<coalesce_test::five_point_line>(r, "5-point mean", line, line_values);
}

}  // namespace bench
