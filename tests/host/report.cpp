// The benchmark report: its table, CSV, JSON, Markdown and SVG say what was measured, escape what
// they must, set each row against the best of its group and against the best competitor, and
// judge targets as code. Host only.
#include <coalesce/testing/report.hpp>

#include "coalesce_test.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using coalesce::testing::dram_peak;
using coalesce::testing::reference_copy;
using coalesce::testing::report;
using coalesce::testing::report_row;
using coalesce::testing::row_role;
using coalesce::testing::row_target;

namespace {

report_row row(std::string group, std::string name, row_role role, double gbps, double ratio, double peak_fraction) {
  report_row r;
  r.group = std::move(group);
  r.name = std::move(name);
  r.role = role;
  r.median_ms = 0.3;
  r.gigabytes_per_s = gbps;
  r.ratio_to_memcpy = ratio;
  r.fraction_of_dram_peak = peak_fraction;
  return r;
}

// A reference copy of 4000 GB/s and a peak of 2 x 3000 MHz x 6144 bits = 4608 GB/s.
report sample() {
  report r("NVIDIA H200, CUDA 13.0", reference_copy{std::size_t(1) << 30, 4, 10, 4000.0}, dram_peak{3.0e6, 6144});
  auto a = row("particle update", "coalesce::for_each", row_role::library, 3870.0, 0.9675, 3870.0 / 4608.0);
  a.load_sectors_per_request = 16.0;
  a.store_sectors_per_request = 16.0;
  a.dram_bytes = 1.2e9;
  a.target = row_target{0.98, 0.80};
  a.note = "reads 2 bytes for each written";
  r.add(a);
  r.add(row("particle update", "thrust::transform, \"zip\"", row_role::competitor, 3760.0, 0.94, 3760.0 / 4608.0));
  r.add(row("particle update", "hand-written | float4", row_role::competitor, 3900.0, 0.975, 3900.0 / 4608.0));
  r.add(row("particle update", "dense, another layout", row_role::context, 4200.0, 1.05, 4200.0 / 4608.0));
  r.add(row("transpose", "coalesce::transpose", row_role::library, 3880.0, 0.97, 3880.0 / 4608.0));
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("the DRAM peak is two transfers per memory clock across the bus") {
  REQUIRE(dram_peak{3.0e6, 6144}.gigabytes_per_s() == Approx(4608.0));
  REQUIRE(dram_peak{1.2e6, 5120}.gigabytes_per_s() == Approx(1536.0));
}

TEST_CASE("groups keep their order and each row is set against the best of its group") {
  const auto r = sample();
  REQUIRE(r.groups() == std::vector<std::string>{"particle update", "transpose"});
  REQUIRE(r.best_ratio("particle update") == 1.05);
  REQUIRE(r.ratio_to_best(r.rows()[1]) == Approx(0.94 / 1.05));
  REQUIRE(r.ratio_to_best(r.rows()[4]) == 1.0);
  REQUIRE_THROWS_AS(r.best_ratio("sort"), std::out_of_range);
}

TEST_CASE("the best competitor is the fastest competitor; context rows never count") {
  const auto r = sample();
  REQUIRE(r.best_competitor("particle update") == &r.rows()[2]);
  REQUIRE(r.ratio_to_best_competitor(r.rows()[0]) == Approx(3870.0 / 3900.0));
  REQUIRE(r.best_competitor("transpose") == nullptr);
  REQUIRE(std::isnan(r.ratio_to_best_competitor(r.rows()[4])));
}

TEST_CASE("a target is met only when both the competitor ratio and the peak floor hold") {
  auto r = sample();
  // 3870 / 3900 = 0.992 >= 0.98 and 84.0% >= 80% of peak.
  REQUIRE(r.meets_target(r.rows()[0]));
  REQUIRE(r.misses().empty());
  REQUIRE(r.meets_target(r.rows()[1]));  // no target: nothing to miss

  auto slow = row("particle update", "coalesce, slower", row_role::library, 3800.0, 0.95, 3800.0 / 4608.0);
  slow.target = row_target{0.98, 0.0};  // 3800 / 3900 = 0.974
  r.add(slow);
  auto low = row("particle update", "coalesce, under the floor", row_role::library, 3880.0, 0.97, 0.79);
  low.target = row_target{0.0, 0.80};
  r.add(low);
  auto alone = row("transpose", "coalesce, no competitor", row_role::library, 3880.0, 0.97, 0.84);
  alone.target = row_target{0.98, 0.0};
  r.add(alone);
  const auto misses = r.misses();
  REQUIRE(misses.size() == 3);
  REQUIRE(misses[0].find("coalesce, slower: ratio to the best competitor 0.974 < 0.980") != std::string::npos);
  REQUIRE(misses[1].find("79.0% of DRAM peak < 80.0%") != std::string::npos);
  REQUIRE(misses[2].find("coalesce, no competitor") != std::string::npos);
}

TEST_CASE("a target against a named competitor holds against that one, not the best, and is missed without it") {
  auto r = sample();
  // thrust::transform runs at 3760 GB/s, the best competitor at 3900.
  auto over_thrust = row("particle update", "coalesce, over Thrust", row_role::library, 3800.0, 0.95, 3800.0 / 4608.0);
  over_thrust.target = row_target{0.0, 0.0, "thrust::", 1.01};  // 3800 / 3760 = 1.011
  r.add(over_thrust);
  REQUIRE(r.meets_target(r.rows().back()));
  REQUIRE(r.table().find(">= 1.01 x thrust::: met") != std::string::npos);

  auto short_of_thrust = row("particle update", "coalesce, short of Thrust", row_role::library, 3800.0, 0.95, 0.82);
  short_of_thrust.target = row_target{0.0, 0.0, "thrust::", 1.2};
  r.add(short_of_thrust);
  auto without = row("transpose", "coalesce, no Thrust here", row_role::library, 3880.0, 0.97, 0.84);
  without.target = row_target{0.0, 0.0, "thrust::", 1.2};
  r.add(without);
  const auto misses = r.misses();
  REQUIRE(misses.size() == 2);
  REQUIRE(misses[0].find("coalesce, short of Thrust: ratio to thrust:: 1.011 < 1.200") != std::string::npos);
  REQUIRE(misses[1].find("coalesce, no Thrust here: ratio to thrust::") != std::string::npos);
}

TEST_CASE("the table shows the reference, the peak, both shares, the competitor ratio and the verdict") {
  const auto t = sample().table();
  REQUIRE(t.find("cudaMemcpy device-to-device: 4000.0 GB/s (= 100%; best of 10 samples of 4 back-to-back copies of "
                 "1024 MiB)") != std::string::npos);
  REQUIRE(t.find("DRAM peak: 4608.0 GB/s (2 x 3000 MHz x 6144-bit bus) = 115.2% of cudaMemcpy") != std::string::npos);
  REQUIRE(t.find("96.8%") != std::string::npos);  // 0.9675 of cudaMemcpy
  REQUIRE(t.find("84.0%") != std::string::npos);  // 3870 / 4608 of the peak
  REQUIRE(t.find("0.992") != std::string::npos);  // 3870 / 3900
  REQUIRE(t.find(">= 0.98 x best competitor, >= 80.0% of peak: met") != std::string::npos);
  REQUIRE(t.find("note, coalesce::for_each: reads 2 bytes for each written") != std::string::npos);
  REQUIRE(count(t, "100.0%") == 2);  // the best of each group
}

TEST_CASE("CSV has one line per row, quotes what needs it and leaves unmeasured values empty") {
  const auto csv = lines(sample().csv());
  REQUIRE(csv.size() == 6);
  REQUIRE(csv[0].rfind("group,name,role,median_ms", 0) == 0);
  REQUIRE(csv[1].rfind("particle update,coalesce::for_each,coalesce,0.3,3870,0.9675,0.839844,16,16,1.2e+09,", 0) == 0);
  REQUIRE(csv[1].find(",0.98,0.8,yes,reads 2 bytes for each written") != std::string::npos);
  REQUIRE(csv[2].find("\"thrust::transform, \"\"zip\"\"\"") != std::string::npos);
  REQUIRE(csv[2].find(",0.94,0.815972,,,,") != std::string::npos);
  REQUIRE(csv[2].find(",,,,") != std::string::npos);  // no target, no note
}

TEST_CASE("JSON escapes strings, carries the reference and the peak, and writes null for unmeasured values") {
  const auto json = sample().json();
  REQUIRE(json.find("\"title\": \"NVIDIA H200, CUDA 13.0\"") != std::string::npos);
  REQUIRE(json.find("\"reference\": {\"copy_bytes\": 1.07374e+09, \"copies_per_sample\": 4, \"samples\": 10}") !=
          std::string::npos);
  REQUIRE(
      json.find("\"dram_peak\": {\"gigabytes_per_s\": 4608, \"memory_clock_khz\": 3e+06, \"bus_width_bits\": 6144}") !=
      std::string::npos);
  REQUIRE(json.find("\"name\": \"thrust::transform, \\\"zip\\\"\"") != std::string::npos);
  REQUIRE(json.find("\"load_sectors_per_request\": null") != std::string::npos);
  REQUIRE(json.find("\"target\": {\"min_ratio_to_best_competitor\": 0.98, \"min_fraction_of_dram_peak\": 0.8, "
                    "\"met\": true}") != std::string::npos);
  REQUIRE(count(json, "{\"group\"") == 5);
  REQUIRE(json.find("nan") == std::string::npos);
  report odd("tab\there\x01", reference_copy{}, dram_peak{});
  REQUIRE(odd.json().find("\"tab\\there\\u0001\"") != std::string::npos);
}

TEST_CASE("the targets table lists each target row against its best competitor") {
  const auto md = lines(sample().targets_markdown());
  REQUIRE(md.size() == 3);  // header, rule, one row with a target
  REQUIRE(md[2] ==
          "| particle update | `coalesce::for_each` | 96.8% | 84.0% | hand-written \\| float4 | 97.5% | 0.992 | "
          ">= 0.98 x best competitor, >= 80.0% of peak | yes |");
}

TEST_CASE("each group's SVG has one bar per row, the cudaMemcpy line and the peak line") {
  const auto r = sample();
  const auto svg = r.svg("particle update");
  REQUIRE(svg.rfind("<svg", 0) == 0);
  REQUIRE(count(svg, "class=\"bar\"") == 4);
  REQUIRE(count(svg, "class=\"memcpy\"") == 1);
  REQUIRE(count(svg, "class=\"peak\"") == 1);
  REQUIRE(svg.find("thrust::transform, &quot;zip&quot;") != std::string::npos);
  REQUIRE(svg.find("96.8% (84.0% of peak)") != std::string::npos);
  REQUIRE(count(r.svg("transpose"), "class=\"bar\"") == 1);
}

TEST_CASE("write puts the table, CSV, JSON, targets and one SVG per group in a directory") {
  const std::string dir = ".";
  const auto paths = sample().write(dir, "coalesce-report-test");
  REQUIRE(paths.size() == 6);
  for (const auto& p : paths) {
    std::ifstream f(p);
    REQUIRE(f.good());
    std::remove(p.c_str());
  }
  REQUIRE_THROWS_AS(sample().write("/nonexistent-directory-for-coalesce", "x"), std::runtime_error);
}
