// The access model, and the hardware beside it.
//
// Prints the seed material's stride table as coalesce::model predicts it (lines, sectors,
// efficiencies, DRAM bytes) and, when a GPU is present, the measured load sectors per request and
// bandwidth as a percentage of cudaMemcpy beside each prediction. Writes the pictures of the seed
// cases as SVG. Exits non-zero if the GPU disagrees with the model.
//
//   access_model [--svg-dir DIR]
#include <coalesce/model.hpp>
#include <coalesce/model_svg.hpp>
#include <coalesce/soa_fields.hpp>
#include <coalesce/testing/testing.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

namespace m = coalesce::model;
namespace ct = coalesce::testing;

// The particle of the layout pictures: 24 bytes, six float leaves.
struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

// Thread i reads in[i * stride] and writes out[i]: the seed's strided access.
__global__ void read_strided(const float* __restrict__ in, float* __restrict__ out, std::size_t n, unsigned stride) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
}

static std::array<std::uint64_t, 32> lanes(std::uint64_t base, std::uint64_t stride) {
  std::array<std::uint64_t, 32> a{};
  for (unsigned t = 0; t < 32; ++t) a[t] = base + t * stride;
  return a;
}

// Whether the file was written; says which one was not.
static bool write_file(const std::string& path, const std::string& body) {
  std::ofstream out(path);
  out << body;
  if (!out) std::fprintf(stderr, "could not write %s\n", path.c_str());
  return bool(out);
}

int main(int argc, char** argv) {
  std::string svg_dir;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--svg-dir") == 0) svg_dir = argv[i + 1];

  const unsigned strides[] = {1, 2, 4, 8, 16, 32};  // in floats: 4 .. 128 bytes
  const std::optional<std::string> no_gpu = ct::gpu_unavailable_reason();

  struct measured {
    double sectors_per_request = 0, ratio = 0, of_peak = 0;
  };
  measured results[6];
  bool have_counters = false, mismatch = false;
  std::optional<std::string> counters_missing;
  if (!no_gpu) {
    // 32 Mi threads: 128 MiB read at stride 1 (twice the L2), a 4 GiB span at stride 32.
    const std::size_t n = std::size_t(32) << 20;
    ct::device_buffer<float> in(n * 32), out(n);
    COALESCE_CUDA_CHECK(cudaMemset(in.data(), 0, in.size_bytes()));
    ct::bandwidth_meter meter;
    ct::counter_profiler profiler;
    have_counters = profiler.available();
    if (!have_counters) counters_missing = profiler.unavailable_reason();
    for (int k = 0; k < 6; ++k) {
      auto launch = [&](cudaStream_t s = nullptr) {
        read_strided<<<unsigned(n / 256), 256, 0, s>>>(in.data(), out.data(), n, strides[k]);
      };
      // Useful bytes: one float read and one written per thread.
      const auto bw = meter.measure(launch, 8.0 * double(n));
      results[k].ratio = bw.ratio_to_memcpy;
      results[k].of_peak = bw.fraction_of_dram_peak;
      if (have_counters)
        results[k].sectors_per_request = profiler.measure([&] { launch(); }).load_sectors_per_request();
    }
  }

  std::printf("coalesce access model: a warp of 32 threads reading one float each at a stride\n\n");
  std::printf("%8s %6s %9s %8s %10s %11s | %14s %12s %8s\n", "stride", "lines", "line eff", "sectors", "sector eff",
              "DRAM bytes", "meas. sect/req", "% memcpy", "% peak");
  for (int k = 0; k < 6; ++k) {
    const auto c = m::strided_access(strides[k] * 4, 4);
    std::printf("%6u B %6u %8.2f%% %8u %9.2f%% %11zu | ", strides[k] * 4, c.lines, 100 * c.line_efficiency(), c.sectors,
                100 * c.efficiency(), c.dram_bytes);
    if (no_gpu) {
      std::printf("%14s %12s %8s\n", "(needs GPU)", "(needs GPU)", "");
      continue;
    }
    if (have_counters) {
      std::printf("%14.2f ", results[k].sectors_per_request);
      mismatch |= results[k].sectors_per_request != c.sectors_per_request();
    } else {
      std::printf("%14s ", "(no counters)");
    }
    std::printf("%11.1f%% %7.1f%%\n", 100 * results[k].ratio, 100 * results[k].of_peak);
  }

  std::printf("\nother seeds:\n");
  const auto misaligned = m::strided_access(4, 4, 64);
  const auto vec3 = m::strided_access(12, 4);
  std::printf("  128 contiguous bytes starting 64 B into a line: %u lines\n", misaligned.lines);
  std::printf("  .x of struct Vec3 {float x, y, z;}:             %u lines, %.0f%% line efficiency\n", vec3.lines,
              100 * vec3.line_efficiency());
  const auto broadcast = m::shared_access(lanes(0, 0), 4);
  const auto rows = m::shared_access(lanes(0, 4), 4);
  const auto column = m::shared_access(lanes(0, 32 * 4), 4);
  const auto padded = m::shared_access(lanes(0, 33 * 4), 4);
  std::printf("  shared broadcast:            %u wavefront\n", broadcast.wavefronts);
  std::printf("  shared, 32 distinct banks:   %u wavefront\n", rows.wavefronts);
  std::printf("  shared [32][32] column read: %u wavefronts (%u-way conflict)\n", column.wavefronts,
              column.conflict_degree);
  std::printf("  shared [32][33] column read: %u wavefront\n", padded.wavefronts);

  if (no_gpu) std::printf("\nmeasured columns need a GPU: %s\n", no_gpu->c_str());
  else if (!have_counters) std::printf("\nsectors per request need hardware counters: %s\n", counters_missing->c_str());
  else if (mismatch) std::printf("\nMISMATCH: the GPU disagrees with the model\n");
  else std::printf("\nthe GPU agrees with the model on every row\n");

  bool pictures_failed = false;
  if (!svg_dir.empty()) {
    const auto picture = [&](const char* name, const std::string& svg) {
      pictures_failed = !write_file(svg_dir + "/" + name, svg) || pictures_failed;
    };
    picture("coalesced.svg", m::global_access_svg(lanes(0, 4), 4, "Coalesced: 32 floats, stride 4 B"));
    picture("stride8.svg", m::global_access_svg(lanes(0, 32), 4, "Uncoalesced: 32 floats, stride 32 B (8 floats)"));
    picture("misaligned.svg", m::global_access_svg(lanes(64, 4), 4, "Misaligned: 128 B starting 64 B into a line"));
    picture("vec3_x.svg", m::global_access_svg(lanes(0, 12), 4, "AoS: .x of struct Vec3 {float x, y, z;}"));
    picture("tile_unpadded.svg",
            m::shared_access_svg(lanes(0, 32 * 4), 4, "Shared [32][32] float, column read: 32-way conflict"));
    picture("tile_padded.svg",
            m::shared_access_svg(lanes(0, 33 * 4), 4, "Shared [32][33] float, column read: conflict-free"));
    namespace layout = coalesce::layout;
    picture("layout_soa.svg",
            m::layout_svg<Particle, layout::soa>(40, "40 particles in layout::soa: a column per field"));
    picture("layout_aos.svg", m::layout_svg<Particle, layout::aos>(40, "40 particles in layout::aos: 24-byte records"));
    picture("layout_aosoa.svg",
            m::layout_svg<Particle, layout::aosoa<32>>(40, "40 particles in layout::aosoa<32>: tiles of 32 per field"));
    if (pictures_failed)
      std::fprintf(stderr, "the pictures asked for (--svg-dir %s) were not all written\n", svg_dir.c_str());
    else std::printf("pictures written to %s\n", svg_dir.c_str());
  }
  return mismatch || pictures_failed ? 1 : 0;
}
