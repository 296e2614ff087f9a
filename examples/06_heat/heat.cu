// A steady-state heat solver: Jacobi sweeps of Laplace's equation on a plate whose top edge is
// held at 100 degrees and whose other edges are held at 0. Each sweep is one coalesce::stencil
// from one pitched_matrix into the other, the edges left as they are (coalesce::interior), and
// the two matrices swap. The result is checked against the same sweeps on the host, and one
// sweep is timed as a share of a cudaMemcpy of the same bytes (one read, one write). Exits 77
// (skipped) when there is no GPU, 1 on a wrong result.
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

  // Both buffers hold the edges, which interior never writes.
  coalesce::pitched_matrix<float> u(plate, rows, cols), next(plate, rows, cols);
  for (int s = 0; s < sweeps; ++s) {
    coalesce::stencil<1>(coalesce::interior, u, next, [] __device__(auto n) { return jacobi{}(n); });
    u.swap(next);
  }
  const auto result = u.to_vector();

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
  std::printf("all %zu temperatures equal the host's sweeps\n", result.size());

  // One sweep on a plate as large as a benchmark's, timed against cudaMemcpy of its bytes.
  const std::size_t big = 8192;
  coalesce::pitched_matrix<float> a(big, big, 1.0f), b(big, big, 1.0f);
  ct::bandwidth_meter meter;
  const auto sweep = meter.measure(
      [&](cudaStream_t s) {
        coalesce::stencil<1>(coalesce::interior, a.view(), b.view(), [] __device__(auto n) { return jacobi{}(n); }, s);
      },
      2.0 * double(big) * double(big) * sizeof(float));
  std::printf("one sweep of %zu x %zu: %.1f GB/s, %.1f%% of cudaMemcpy (%.0f GB/s), %.1f%% of the DRAM peak\n", big,
              big, sweep.gigabytes_per_s, 100.0 * sweep.ratio_to_memcpy, meter.memcpy_gigabytes_per_s(),
              100.0 * sweep.fraction_of_dram_peak);
  return 0;
}
