// Rows of 1000 floats three ways: dense (4000-byte rows), cudaMallocPitch (512-byte-aligned rows)
// and coalesce::pitched_matrix (128-byte-aligned rows). A row operation and a 5-point stencil run
// on each; the table shows bandwidth as a share of cudaMemcpy, sectors and lines per request, and
// the bytes each layout allocates. Exits 77 (skipped) when there is no GPU, 1 on a wrong result.
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/testing/testing.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ct = coalesce::testing;
using coalesce::pitched_view;

// The user's code: one element of output from a view of input. Nothing here knows the pitch.
struct scale_row {
  pitched_view<const float> in;
  pitched_view<float> out;
  __device__ void operator()(std::size_t r, std::size_t c) const { out(r, c) = 2.0f * in(r, c) + 1.0f; }
};

struct five_point_stencil {
  pitched_view<const float> in;
  pitched_view<float> out;
  __device__ void operator()(std::size_t r, std::size_t c) const {
    if (r == 0 || c == 0 || r + 1 == in.rows() || c + 1 == in.cols()) {
      out(r, c) = in(r, c);
      return;
    }
    out(r, c) = 0.2f * (in(r, c) + in(r - 1, c) + in(r + 1, c) + in(r, c - 1) + in(r, c + 1));
  }
};

// One layout: two buffers (in, out) of rows x cols floats at some pitch, however allocated.
struct layout {
  const char* name;
  pitched_view<float> in, out;
  std::size_t allocated_bytes;  // for both buffers
};

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

int main() {
  const std::size_t rows = 200000, cols = 1000;
  std::printf("rows of %zu floats: dense pitch %zu B, coalesce pitch %zu B\n", cols, cols * sizeof(float),
              coalesce::pitched_matrix<float>::pitch_for(cols));
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the measurements need a GPU (%s)\n", reason->c_str());
    return 77;
  }

  // Dense: one cudaMalloc each, rows packed back to back.
  ct::device_buffer<float> dense_in(rows * cols), dense_out(rows * cols);
  // cudaMallocPitch: rows padded to the driver's choice (512 bytes on current GPUs).
  float* cuda_in = nullptr;
  float* cuda_out = nullptr;
  std::size_t cuda_pitch = 0;
  COALESCE_CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&cuda_in), &cuda_pitch, cols * sizeof(float), rows));
  COALESCE_CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&cuda_out), &cuda_pitch, cols * sizeof(float), rows));
  // coalesce: rows padded to 128 bytes, allocated stream-ordered.
  coalesce::pitched_matrix<float> in(rows, cols), out(rows, cols);

  const std::vector<layout> layouts = {
      {"dense",
       {dense_in.data(), rows, cols, cols * sizeof(float)},
       {dense_out.data(), rows, cols, cols * sizeof(float)},
       2 * rows * cols * sizeof(float)},
      {"cudaMallocPitch", {cuda_in, rows, cols, cuda_pitch}, {cuda_out, rows, cols, cuda_pitch}, 2 * rows * cuda_pitch},
      {"coalesce::pitched_matrix", in.view(), out.view(), in.allocated_bytes() + out.allocated_bytes()},
  };
  const auto values = ct::random_values<float>(rows * cols);
  for (const auto& l : layouts)
    COALESCE_CUDA_CHECK(cudaMemcpy2D(l.in.data(), l.in.pitch_bytes(), values.data(), cols * sizeof(float),
                                     cols * sizeof(float), rows, cudaMemcpyHostToDevice));

  ct::bandwidth_meter meter;
  ct::counter_profiler profiler(
      {ct::metric::global_load_sectors, ct::metric::global_load_requests, "lts__t_requests_srcunit_tex_op_read.sum"});
  std::printf("cudaMemcpy device-to-device: %.0f GB/s (= 100%%); DRAM peak: %.0f GB/s\n\n",
              meter.memcpy_gigabytes_per_s(), meter.dram_peak_gigabytes_per_s());
  std::printf("%-10s %-26s %9s %9s %7s %16s %14s %12s\n", "work", "layout", "GB/s", "% memcpy", "% peak",
              "sectors/request", "L2 req/request", "allocated MB");
  bool correct = true;
  for (const char* work : {"row op", "stencil"}) {
    std::vector<float> reference;
    for (const auto& l : layouts) {
      auto launch = [&](cudaStream_t s) {
        if (work[0] == 'r') coalesce::for_each_index(l.out, scale_row{l.in, l.out}, s);
        else coalesce::for_each_index(l.out, five_point_stencil{l.in, l.out}, s);
      };
      launch(0);
      std::vector<float> result(rows * cols);
      COALESCE_CUDA_CHECK(cudaMemcpy2D(result.data(), cols * sizeof(float), l.out.data(), l.out.pitch_bytes(),
                                       cols * sizeof(float), rows, cudaMemcpyDeviceToHost));
      if (reference.empty()) reference = result;
      correct = correct && result == reference;
      const auto bw = meter.measure(launch, 2.0 * rows * cols * sizeof(float));
      std::optional<ct::counters> m;
      if (profiler.available()) m = profiler.measure([&] { launch(0); });
      std::printf("%-10s %-26s %9.1f %8.1f%% %6.1f%% %16s %14s %12.1f\n", work, l.name, bw.gigabytes_per_s,
                  100.0 * bw.ratio_to_memcpy, 100.0 * bw.fraction_of_dram_peak,
                  m ? number(m->load_sectors_per_request()).c_str() : "n/a",
                  m ? number((*m)["lts__t_requests_srcunit_tex_op_read.sum"] / m->global_load_requests()).c_str()
                    : "n/a",
                  double(l.allocated_bytes) / 1e6);
    }
  }
  if (!profiler.available()) std::printf("(counters unavailable: %s)\n", profiler.unavailable_reason()->c_str());
  COALESCE_CUDA_CHECK(cudaFree(cuda_in));
  COALESCE_CUDA_CHECK(cudaFree(cuda_out));
  if (!correct) {
    std::printf("MISMATCH: the layouts computed different results\n");
    return 1;
  }
  std::printf("\nall three layouts computed identical results\n");
  return 0;
}
