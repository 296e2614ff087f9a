// A steady-state heat solver: Jacobi sweeps of Laplace's equation on a plate whose top edge is
// held at 100 degrees and whose other edges are held at 0. All the sweeps are one call,
// coalesce::stencil<1>(sweeps, interior, u, next, f): sweep 1 reads u and writes next, sweep 2
// the other way, the edges left as they are (coalesce::interior), several sweeps fused into each
// pass over memory. The result is checked against the same sweeps on the host and against one
// coalesce::stencil call a sweep (bit for bit); then both forms are timed on a larger plate, and
// one sweep as a share of a cudaMemcpy of the same bytes (one read, one write). Exits 77 (skipped)
// when there is no GPU, 1 on a wrong result.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include <cstdio>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;

// One Jacobi sweep at one element: the mean of its four neighbours. A sum, then one multiply, so
// the host computes exactly what the device does.
struct jacobi {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

int main() {
  const std::size_t rows = 1024, cols = 1024;
  const int sweeps = 200;
  std::vector<float> plate(rows * cols, 0.0f);
  for (std::size_t c = 0; c < cols; ++c) plate[c] = 100.0f;  // the hot edge
  std::printf("heat: %d Jacobi sweeps on a %zu x %zu plate, top edge 100, the others 0\n", sweeps, rows, cols);
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the solver runs on a GPU (%s)\n", reason->c_str());
    return 77;
  }

  // Both buffers hold the edges, which interior never writes. After an even number of sweeps the
  // result is in u (the call returns the view that holds it).
  coalesce::pitched_matrix<float> u(plate, rows, cols), next(plate, rows, cols);
  const auto in = coalesce::stencil<1>(sweeps, coalesce::interior, u, next, jacobi{});
  const auto result = (in.data() == u.data() ? u : next).to_vector();

  // The same sweeps one call each, swapping the matrices: the same bits.
  coalesce::pitched_matrix<float> a(plate, rows, cols), b(plate, rows, cols);
  for (int s = 0; s < sweeps; ++s) {
    coalesce::stencil<1>(coalesce::interior, a, b, jacobi{});
    a.swap(b);
  }
  if (a.to_vector() != result) {
    std::printf("MISMATCH: the iterated call differs from %d single sweeps\n", sweeps);
    return 1;
  }

  std::vector<float> host = plate, host_next = plate;
  for (int s = 0; s < sweeps; ++s) {
    for (std::size_t r = 1; r + 1 < rows; ++r)
      for (std::size_t c = 1; c + 1 < cols; ++c)  // coalesce::neighbourhood works on the host too
        host_next[r * cols + c] = jacobi{}(coalesce::neighbourhood<float, 1>(&host[r * cols + c], int(cols)));
    std::swap(host, host_next);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < result.size(); ++i) wrong += result[i] != host[i];
  std::printf("temperature one row below the hot edge, mid-plate: %.4f; centre: %.4f\n", result[cols + cols / 2],
              result[rows / 2 * cols + cols / 2]);
  if (wrong != 0) {
    std::printf("MISMATCH: %zu of %zu temperatures differ from the host's sweeps\n", wrong, result.size());
    return 1;
  }
  std::printf("all %zu temperatures equal the host's sweeps, and one coalesce::stencil a sweep\n", result.size());

  // On a plate as large as a benchmark's: one sweep against cudaMemcpy of its bytes, then 100
  // sweeps as one call and as 100 calls.
  const std::size_t big = 8192, many = 100;
  coalesce::pitched_matrix<float> p(big, big, 1.0f), q(big, big, 1.0f);
  const auto pv = p.view(), qv = q.view();
  const double sweep_bytes = 2.0 * double(big) * double(big) * sizeof(float);
  ct::bandwidth_meter meter;
  const auto sweep = meter.measure(
      [&](cudaStream_t s) { coalesce::stencil<1>(coalesce::interior, pv, qv, jacobi{}, s); }, sweep_bytes);
  std::printf("one sweep of %zu x %zu: %.1f GB/s, %.1f%% of cudaMemcpy (%.0f GB/s), %.1f%% of the DRAM peak\n", big,
              big, sweep.gigabytes_per_s, 100.0 * sweep.ratio_to_memcpy, meter.memcpy_gigabytes_per_s(),
              100.0 * sweep.fraction_of_dram_peak);
  const auto one_call =
      meter.measure([&](cudaStream_t s) { coalesce::stencil<1>(many, coalesce::interior, pv, qv, jacobi{}, s); },
                    double(many) * sweep_bytes);
  const auto one_a_sweep = meter.measure(
      [&](cudaStream_t s) {
        for (std::size_t i = 0; i < many; ++i)
          coalesce::stencil<1>(coalesce::interior, i % 2 == 0 ? pv : qv, i % 2 == 0 ? qv : pv, jacobi{}, s);
      },
      double(many) * sweep_bytes);
  std::printf("%zu sweeps of %zu x %zu: %.2f ms as one call, %.2f ms as %zu calls: %.2fx\n", many, big, big,
              one_call.median_ms, one_a_sweep.median_ms, many, one_a_sweep.median_ms / one_call.median_ms);
  return 0;
}
