// The benchmark report: its table, CSV, JSON and SVG say what was measured, escape what they
// must, and set each row against the best of its group. Host only.
#include <coalesce/testing/report.hpp>

#include "coalesce_test.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using coalesce::testing::report;
using coalesce::testing::report_row;

namespace {

report sample() {
  report r("NVIDIA H200, CUDA 13.0", 4000.0);
  report_row a{"particle update", "coalesce::for_each", 0.30, 3870.0, 0.9675};
  a.load_sectors_per_request = 16.0;
  a.store_sectors_per_request = 16.0;
  a.dram_bytes = 1.2e9;
  r.add(a);
  r.add({"particle update", "thrust::transform, \"zip\"", 0.31, 3760.0, 0.94});
  r.add({"transpose", "coalesce::transpose", 0.14, 3880.0, 0.97});
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

TEST_CASE("groups keep their order and each row is set against the best of its group") {
  const auto r = sample();
  REQUIRE(r.groups() == std::vector<std::string>{"particle update", "transpose"});
  REQUIRE(r.best_ratio("particle update") == 0.9675);
  REQUIRE(r.ratio_to_best(r.rows()[1]) == Approx(0.94 / 0.9675));
  REQUIRE(r.ratio_to_best(r.rows()[2]) == 1.0);
  REQUIRE_THROWS_AS(r.best_ratio("sort"), std::out_of_range);
}

TEST_CASE("the table shows every row with its share of cudaMemcpy and of the best") {
  const auto t = sample().table();
  REQUIRE(t.find("cudaMemcpy device-to-device: 4000.0 GB/s") != std::string::npos);
  REQUIRE(t.find("coalesce::for_each") != std::string::npos);
  REQUIRE(t.find("96.8%") != std::string::npos);   // 0.9675 of cudaMemcpy
  REQUIRE(t.find("97.2%") != std::string::npos);   // 0.94 / 0.9675 of the best
  REQUIRE(t.find("16.00") != std::string::npos);
  REQUIRE(count(t, "100.0%") == 2);                // the best of each group
}

TEST_CASE("CSV has one line per row, quotes what needs it and leaves unmeasured counters empty") {
  const auto csv = lines(sample().csv());
  REQUIRE(csv.size() == 4);
  REQUIRE(csv[0].rfind("group,name,median_ms", 0) == 0);
  REQUIRE(csv[1] == "particle update,coalesce::for_each,0.3,3870,0.9675,16,16,1.2e+09,1");
  REQUIRE(csv[2].find("\"thrust::transform, \"\"zip\"\"\"") != std::string::npos);
  REQUIRE(csv[2].find(",0.94,,,,") != std::string::npos);
}

TEST_CASE("JSON escapes strings and writes null for unmeasured counters") {
  const auto json = sample().json();
  REQUIRE(json.find("\"title\": \"NVIDIA H200, CUDA 13.0\"") != std::string::npos);
  REQUIRE(json.find("\"name\": \"thrust::transform, \\\"zip\\\"\"") != std::string::npos);
  REQUIRE(json.find("\"load_sectors_per_request\": null") != std::string::npos);
  REQUIRE(json.find("\"dram_bytes\": 1.2e+09") != std::string::npos);
  REQUIRE(count(json, "{\"group\"") == 3);
  REQUIRE(json.find("nan") == std::string::npos);
  report odd("tab\there\x01", 1.0);
  REQUIRE(odd.json().find("\"tab\\there\\u0001\"") != std::string::npos);
}

TEST_CASE("each group's SVG has one bar per row and the cudaMemcpy line") {
  const auto r = sample();
  const auto svg = r.svg("particle update");
  REQUIRE(svg.rfind("<svg", 0) == 0);
  REQUIRE(count(svg, "class=\"bar\"") == 2);
  REQUIRE(count(svg, "class=\"memcpy\"") == 1);
  REQUIRE(svg.find("thrust::transform, &quot;zip&quot;") != std::string::npos);
  REQUIRE(svg.find("96.8%") != std::string::npos);
  REQUIRE(count(r.svg("transpose"), "class=\"bar\"") == 1);
}

TEST_CASE("write puts the CSV, the JSON and one SVG per group in a directory") {
  const std::string dir = ".";
  const auto paths = sample().write(dir, "coalesce-report-test");
  REQUIRE(paths.size() == 4);
  for (const auto& p : paths) {
    std::ifstream f(p);
    REQUIRE(f.good());
    std::remove(p.c_str());
  }
  REQUIRE_THROWS_AS(sample().write("/nonexistent-directory-for-coalesce", "x"), std::runtime_error);
}
