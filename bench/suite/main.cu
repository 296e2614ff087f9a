// coalesce's side-by-side benchmark. Runs every group on the current GPU, prints a table per group,
// and writes <dir>/coalesce-bench.csv, .json and one SVG chart per group (dir: the first argument,
// default "bench-results", created if missing). Exits 77 without a GPU, 1 if any implementation computed a wrong result.
//   coalesce_bench [dir] [group-substring]
#include "bench.hpp"

#include <coalesce/version.hpp>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  namespace ct = coalesce::testing;
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("skipped: the benchmark needs a GPU (%s)\n", reason->c_str());
    return 77;
  }
  const std::string directory = argc > 1 ? argv[1] : "bench-results";
  const std::string only = argc > 2 ? argv[2] : "";
  try {
    const auto& device = ct::current_device_properties();
    int runtime = 0;
    coalesce::throw_on_error(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    const std::string title = std::string("coalesce benchmark, ") + device.name + ", CUDA " +
                              std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", " + date;
    std::printf("%s\n", title.c_str());

    bench::runner r;
    std::printf("cudaMemcpy device-to-device: %.0f GB/s (= 100%%); counters: %s\n\n", r.meter().memcpy_gigabytes_per_s(),
                r.profiler().available() ? "read" : r.profiler().unavailable_reason()->c_str());
    struct group {
      const char* key;
      void (*run)(bench::runner&);
    };
    const group groups[] = {
        {"particles", bench::particle_update}, {"column", bench::one_column},
        {"mixed", bench::mixed_columns},       {"pitched", bench::pitched_rows},
        {"aos", bench::array_of_structs},      {"stride", bench::stride_sweep},
        {"misaligned", bench::misaligned_base}, {"layout", bench::aos_vs_soa},
        {"rows", bench::pitched_vs_dense},     {"transpose", bench::transpose_ladder},
    };
    for (const auto& g : groups)
      if (only.empty() || only == g.key) g.run(r);

    ct::report report(title, r.meter().memcpy_gigabytes_per_s());
    std::filesystem::create_directories(directory);  // throws std::filesystem::filesystem_error
    for (const auto& row : r.rows()) report.add(row);
    std::printf("\n%s\n", report.table().c_str());
    for (const auto& path : report.write(directory, "coalesce-bench")) std::printf("wrote %s\n", path.c_str());
    if (r.mismatches() != 0) {
      std::printf("%d implementation(s) computed a wrong result\n", r.mismatches());
      return 1;
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
  return 0;
}
