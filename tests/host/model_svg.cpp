// The pictures: every thread drawn, every touched line drawn, the model's cost written on them.
#include <coalesce/model_svg.hpp>
#include <coalesce/soa_fields.hpp>

#include "coalesce_test.hpp"

#include <array>
#include <cstdint>
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

namespace svg_layouts {
struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);
struct Tagged {
  double mass;
  std::uint16_t flags;  // 6 bytes of padding follow it in a record
};
COALESCE_FIELDS(Tagged, mass, flags);
}  // namespace svg_layouts

TEST_CASE("a layout's memory map draws every leaf of every element, and its padding in grey") {
  using svg_layouts::Particle;
  using svg_layouts::Tagged;
  namespace layout = coalesce::layout;
  // 40 particles in tiles of 32: two tiles of 768 bytes, the second with 24 lanes unused.
  const std::string tiles = m::layout_svg<Particle, layout::aosoa<32>>(40, "aosoa<32>");
  REQUIRE(count(tiles, "fill=\"#5b8def\"") == 40);  // leaf 0 (x) of each element
  REQUIRE(count(tiles, "fill=\"#9aa9bd\"") == 0);   // there is no leaf 7
  REQUIRE(tiles.find("960 bytes of leaves, 576 of padding") != std::string::npos);
  // Records: each Tagged is 16 bytes, 10 of them leaves.
  const std::string records = m::layout_svg<Tagged, layout::aos>(8, "aos");
  REQUIRE(count(records, "fill=\"#f6c35b\"") == 8);  // leaf 1 (flags) of each element
  REQUIRE(records.find("80 bytes of leaves, 48 of padding") != std::string::npos);
  // Columns: no padding between an element's values, each column from a new line.
  const std::string columns = m::layout_svg<Particle, layout::soa>(32, "soa");
  REQUIRE(columns.find("768 bytes of leaves, 0 of padding") != std::string::npos);
  // A split: x and vx in columns (40 floats: 160 bytes, each column to the end of its second
  // line), the other four in cold records of 16 bytes.
  using hot = layout::split<layout::fields<&Particle::x, &Particle::vx>>;
  const std::string split = m::layout_svg<Particle, hot>(40, "split");
  REQUIRE(count(split, "fill=\"#5b8def\"") == 40);
  REQUIRE(count(split, "fill=\"#e67e73\"") == 40);  // leaf 3 (vx)
  REQUIRE(split.find("960 bytes of leaves, 192 of padding") != std::string::npos);
  // Cold tiles of 32: the same four leaves in two tiles of 512 bytes.
  const std::string split_tiles =
      m::layout_svg<Particle, layout::split<layout::fields<&Particle::x, &Particle::vx>, layout::aosoa<32>>>(
          40, "split tiles");
  REQUIRE(split_tiles.find("960 bytes of leaves, 576 of padding") != std::string::npos);
}
