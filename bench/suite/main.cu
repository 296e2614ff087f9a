// coalesce's side-by-side benchmark. Runs every group (or those named) on the current GPU, prints
// a table per group, and writes <dir>/coalesce-bench.txt, .csv, .json, -targets.md and one SVG
// chart per group (dir created if missing).
//
//   coalesce_bench [--check] [dir] [group...]      dir defaults to "bench-results"
//
// Exits 77 without a GPU, 1 if any implementation computed a wrong result, 3 with --check when a
// coalesce row missed its target (each miss is printed), 2 on any other error.
#include "bench.hpp"

#include <coalesce/version.hpp>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct group {
  const char* key;
  void (*run)(bench::runner&);
};

const group groups[] = {
    {"particles", bench::particle_update},
    {"column", bench::column_in_place},
    {"column-into", bench::column_into_another},
    {"mixed", bench::mixed_columns},
    {"pitched", bench::pitched_rows},
    {"aos", bench::array_of_structs},
    {"conversion", bench::conversion},
    {"stride", bench::stride_sweep},
    {"misaligned", bench::misaligned_base},
    {"layout", bench::aos_vs_soa},
    {"rows", bench::pitched_vs_dense},
    {"transpose", bench::transpose_ladder},
    {"fallbacks", bench::fallbacks},
    {"temporaries", bench::temporaries},
    {"reductions", bench::reductions},
    {"stencils", bench::stencils},
    {"iterated", bench::iterated_stencils},
    {"reorder", bench::compaction_and_reordering},
    {"babelstream", bench::babelstream},
    {"particles-grids", bench::particles_and_grids},
    {"layouts", bench::layouts},
};

int usage(const char* program) {
  std::printf("usage: %s [--check] [dir] [group...]\ngroups:", program);
  for (const auto& g : groups) std::printf(" %s", g.key);
  std::printf("\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  namespace ct = coalesce::testing;
  bool check = false;
  std::string directory = "bench-results";
  std::vector<std::string> only;
  bool have_directory = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || argv[i][0] == '-') {
      return usage(argv[0]);
    } else if (!have_directory) {
      directory = argv[i];
      have_directory = true;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  for (const auto& name : only) {
    bool known = false;
    for (const auto& g : groups) known = known || name == g.key;
    if (!known) {
      std::printf("unknown group \"%s\"\n", name.c_str());
      return usage(argv[0]);
    }
  }
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("skipped: the benchmark needs a GPU (%s)\n", reason->c_str());
    return 77;
  }
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
    std::printf("cudaMemcpy device-to-device: %.0f GB/s (= 100%%); DRAM peak %.0f GB/s; counters: %s\n\n",
                r.meter().memcpy_gigabytes_per_s(), r.meter().dram_peak_gigabytes_per_s(),
                r.profiler().available() ? "read" : r.profiler().unavailable_reason()->c_str());
    for (const auto& g : groups) {
      bool wanted = only.empty();
      for (const auto& name : only) wanted = wanted || name == g.key;
      if (wanted) g.run(r);
    }

    ct::report report(title, r.meter().reference(), r.meter().peak());
    std::filesystem::create_directories(directory);  // throws std::filesystem::filesystem_error
    for (const auto& row : r.rows()) report.add(row);
    std::printf("\n%s\n", report.table().c_str());
    for (const auto& path : report.write(directory, "coalesce-bench")) std::printf("wrote %s\n", path.c_str());
    if (r.mismatches() != 0) {
      std::printf("%d implementation(s) computed a wrong result\n", r.mismatches());
      return 1;
    }
    const auto misses = report.misses();
    for (const auto& miss : misses) std::printf("target missed: %s\n", miss.c_str());
    if (check) {
      if (!misses.empty()) {
        std::printf("--check: %zu target(s) missed\n", misses.size());
        return 3;
      }
      std::printf("--check: every target met\n");
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
  return 0;
}
