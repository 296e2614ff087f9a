// The pictures: every thread drawn, every touched line drawn, the model's cost written on them.
#include <coalesce/model_svg.hpp>

#include "coalesce_test.hpp"

#include <array>
#include <string>

namespace m = coalesce::model;

namespace {
std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}
std::array<std::uint64_t, 32> lanes(std::uint64_t base, std::uint64_t stride) {
  std::array<std::uint64_t, 32> a{};
  for (unsigned t = 0; t < 32; ++t) a[t] = base + t * stride;
  return a;
}
}  // namespace

TEST_CASE("a global access picture draws 32 threads, each touched line, and the cost") {
  const std::string svg = m::global_access_svg(lanes(0, 32), 4, "stride 32");
  REQUIRE(svg.rfind("<svg", 0) == 0);
  REQUIRE(svg.find("</svg>") != std::string::npos);
  REQUIRE(count(svg, "fill=\"#5b8def\"") == 32);  // the threads
  REQUIRE(count(svg, "line @") == 8);              // 8 lines, as the model says
  REQUIRE(count(svg, "fill=\"#f6c35b\"") == 32);  // 32 moved sectors
  REQUIRE(svg.find("8 lines, 32 sectors") != std::string::npos);
  REQUIRE(svg.find("sector efficiency 12.5%") != std::string::npos);
}

TEST_CASE("a shared access picture stacks a bank's distinct words and states the conflict") {
  const std::string conflicted = m::shared_access_svg(lanes(0, 128), 4, "column");
  REQUIRE(count(conflicted, "fill=\"#e74c3c\"") == 31);  // 31 extra words in bank 0
  REQUIRE(conflicted.find("32 wavefront(s), worst conflict 32-way") != std::string::npos);
  const std::string padded = m::shared_access_svg(lanes(0, 132), 4, "padded");
  REQUIRE(count(padded, "fill=\"#e74c3c\"") == 0);
  REQUIRE(padded.find("1 wavefront(s), worst conflict 1-way") != std::string::npos);
}
