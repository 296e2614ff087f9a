// The access model on the host: the seed material's numbers, exactly, and agreement with an
// independent brute-force count on thousands of random patterns.
#include <coalesce/model_stencils.hpp>

#include "coalesce_test.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <set>

namespace m = coalesce::model;

namespace {

std::array<std::uint64_t, 32> strided(std::uint64_t base, std::uint64_t stride) {
  std::array<std::uint64_t, 32> a{};
  for (unsigned t = 0; t < 32; ++t) a[t] = base + t * stride;
  return a;
}

}  // namespace

// Compiles = passes: the model is usable in constant expressions.
static_assert(m::strided_access(4, 4).lines == 1);
static_assert(m::strided_access(32, 4).lines == 8);
static_assert(m::shared_access(std::array<std::uint64_t, 1>{0}, 4).wavefronts == 1);

TEST_CASE("a warp of floats at strides of 4 to 128 bytes moves the seed table's lines and sectors") {
  struct row {
    std::size_t stride;
    unsigned lines;
    double line_eff;
    double sector_eff;
  };
  const row table[] = {{4, 1, 1.0, 1.0},      {8, 2, 0.5, 0.5},        {16, 4, 0.25, 0.25},
                       {32, 8, 0.125, 0.125}, {64, 16, 0.0625, 0.125}, {128, 32, 0.03125, 0.125}};
  for (const auto& r : table) {
    CAPTURE(r.stride);
    const auto c = m::strided_access(r.stride, 4);
    REQUIRE(c.requests == 1);
    REQUIRE(c.lines == r.lines);
    REQUIRE(c.lines == m::seed_line_formula(r.stride, 4));
    REQUIRE(c.useful_bytes == 128);
    REQUIRE(c.line_efficiency() == Approx(r.line_eff));
    REQUIRE(c.efficiency() == Approx(r.sector_eff));
    REQUIRE(c.moved_bytes == 32u * c.sectors);
  }
}

TEST_CASE("the seed's worked example: a 32-byte stride is 8 transactions at 12.5 percent") {
  const auto c = m::strided_access(32, 4);
  REQUIRE(c.lines == 8);
  REQUIRE((31 * 32 + 4 + 127) / 128 == 8);
  REQUIRE(c.line_efficiency() == Approx(0.125));
}

TEST_CASE("a contiguous 128-byte warp read starting 64 bytes into a line touches 2 lines") {
  const auto c = m::strided_access(4, 4, 64);
  REQUIRE(c.lines == 2);
  REQUIRE(c.sectors == 4);
  REQUIRE(c.efficiency() == Approx(1.0));
  REQUIRE(c.line_efficiency() == Approx(0.5));
}

TEST_CASE("reading .x of struct Vec3 {float x, y, z;} touches 3 lines at 33 percent") {
  const auto c = m::strided_access(12, 4);
  REQUIRE(c.lines == 3);
  REQUIRE(c.line_efficiency() == Approx(1.0 / 3.0));
}

TEST_CASE("DRAM is estimated in 64-byte pieces") {
  REQUIRE(m::strided_access(4, 4).dram_bytes == 128);
  REQUIRE(m::strided_access(32, 4).dram_bytes == 32 * 32);   // 8x the 128 useful bytes
  REQUIRE(m::strided_access(64, 4).dram_bytes == 32 * 64);   // 16x
  REQUIRE(m::strided_access(128, 4).dram_bytes == 32 * 64);  // still 16x, not 32x
}

TEST_CASE("wider elements: a float4 warp access is 16 sectors, one request") {
  const auto c = m::strided_access(16, 16);
  REQUIRE(c.requests == 1);
  REQUIRE(c.sectors == 16);
  REQUIRE(c.sectors_per_request() == Approx(16.0));
  REQUIRE(c.efficiency() == Approx(1.0));
}

TEST_CASE("many threads are counted warp by warp, one request each") {
  const auto c = m::strided_access(4, 4, 0, 256);
  REQUIRE(c.requests == 8);
  REQUIRE(c.sectors == 32);
  const auto partial = m::strided_access(4, 4, 0, 40);  // one full warp and one of 8 threads
  REQUIRE(partial.requests == 2);
  REQUIRE(partial.sectors == 4 + 1);
}

TEST_CASE("inactive lanes cost nothing") {
  auto lane = [](unsigned l) { return std::uint64_t(l) * 128; };
  REQUIRE(m::warp_global_access(lane, 4, 0x0000000Fu).sectors == 4);
  REQUIRE(m::warp_global_access(lane, 4, 0u).requests == 0);
}

TEST_CASE("shared memory: a broadcast and distinct banks are one wavefront") {
  REQUIRE(m::shared_access(strided(0, 0), 4).wavefronts == 1);
  REQUIRE(m::shared_access(strided(0, 0), 4).conflict_degree == 1);
  REQUIRE(m::shared_access(strided(0, 4), 4).wavefronts == 1);
}

TEST_CASE("shared memory: a [32][32] float column is a 32-way conflict, [32][33] is conflict-free") {
  const auto column = m::shared_access(strided(0, 32 * 4), 4);
  REQUIRE(column.wavefronts == 32);
  REQUIRE(column.conflict_degree == 32);
  const auto padded = m::shared_access(strided(0, 33 * 4), 4);
  REQUIRE(padded.wavefronts == 1);
  REQUIRE(padded.conflict_degree == 1);
}

TEST_CASE("shared memory: 8- and 16-byte rows take their ideal 2 and 4 wavefronts") {
  REQUIRE(m::shared_access(strided(0, 8), 8).wavefronts == 2);
  REQUIRE(m::shared_access(strided(0, 16), 16).wavefronts == 4);
  REQUIRE(m::shared_access(strided(0, 8), 8).conflict_degree == 1);
}

TEST_CASE("shared memory: a warp-wide 8-byte broadcast is 1 wavefront and a 16-byte one 2, as measured") {
  REQUIRE(m::shared_access(strided(64, 0), 8).wavefronts == 1);
  REQUIRE(m::shared_access(strided(64, 0), 16).wavefronts == 2);
  // Two half-warps reading the same 16 doubles are not merged: 2 wavefronts.
  std::array<std::uint64_t, 32> halves{};
  for (unsigned t = 0; t < 32; ++t) halves[t] = (t % 16) * 8;
  REQUIRE(m::shared_access(halves, 8).wavefronts == 2);
}

TEST_CASE("shared memory: bytes and halves of one word are a broadcast") {
  REQUIRE(m::shared_access(strided(0, 1), 1).wavefronts == 1);
  REQUIRE(m::shared_access(strided(0, 2), 2).wavefronts == 1);
  REQUIRE(m::shared_access(strided(0, 128), 1).wavefronts == 32);
}

// --- brute force ----------------------------------------------------------------------------
// An independent count: every byte each lane touches goes into sets; sectors, lines and the
// useful bytes are then set sizes.
namespace {

m::global_cost brute_global(const std::vector<std::uint64_t>& addr, unsigned width) {
  m::global_cost c{};
  for (std::size_t first = 0; first < addr.size(); first += 32) {
    std::set<std::uint64_t> bytes, sectors, lines, granules;
    for (std::size_t t = first; t < std::min(addr.size(), first + 32); ++t)
      for (unsigned b = 0; b < width; ++b) {
        bytes.insert(addr[t] + b);
        sectors.insert((addr[t] + b) / 32);
        lines.insert((addr[t] + b) / 128);
        granules.insert((addr[t] + b) / 64);
      }
    c.requests += 1;
    c.sectors += static_cast<unsigned>(sectors.size());
    c.lines += static_cast<unsigned>(lines.size());
    c.useful_bytes += bytes.size();
    c.dram_bytes += 64 * granules.size();
  }
  return c;
}

// Phases of 128 B; within one, a bank's distinct words each cost a pass; two neighbouring
// phases that read one and the same address share their pass (measured on an H200).
unsigned brute_shared_wavefronts(const std::vector<std::uint64_t>& addr, unsigned width) {
  const unsigned phase = width <= 4 ? 32 : 32 * 4 / width;
  unsigned total = 0;
  std::set<std::uint64_t> previous_addresses;
  for (unsigned first = 0, k = 0; first < 32; first += phase, ++k) {
    std::map<unsigned, std::set<std::uint64_t>> words_in_bank;
    std::set<std::uint64_t> addresses;
    for (unsigned t = first; t < first + phase && t < addr.size(); ++t) {
      addresses.insert(addr[t]);
      for (unsigned b = 0; b < width; ++b) words_in_bank[((addr[t] + b) / 4) % 32].insert((addr[t] + b) / 4);
    }
    unsigned worst = 0;
    for (const auto& [bank, words] : words_in_bank) worst = std::max(worst, static_cast<unsigned>(words.size()));
    const bool shares = k % 2 == 1 && addresses.size() == 1 && addresses == previous_addresses;
    total += shares ? 0 : worst;
    previous_addresses = addresses;
  }
  return total;
}

}  // namespace

TEST_CASE("the model agrees with a brute-force count on thousands of random patterns") {
  std::mt19937_64 rng(20261130);
  const unsigned widths[] = {1, 2, 4, 8, 16};
  for (int trial = 0; trial < 5000; ++trial) {
    const unsigned width = widths[rng() % 5];
    // Mix the kinds of patterns that matter: strided, clustered random, scattered random.
    std::array<std::uint64_t, 64> addr{};
    const std::uint64_t base = (rng() % 4096) * width;
    const unsigned kind = trial % 4;
    const std::uint64_t stride = (rng() % 40) * width;
    for (unsigned t = 0; t < addr.size(); ++t) {
      if (kind == 0) addr[t] = base + t * stride;
      else if (kind == 1) addr[t] = base + (rng() % 64) * width;
      else if (kind == 2) addr[t] = (rng() % (1u << 20)) * width;
      else addr[t] = base + (t / 8 % 2) * stride;  // phases of one address each
    }
    const std::vector<std::uint64_t> as_vector(addr.begin(), addr.end());
    CAPTURE(trial, width, kind);
    const auto model = m::global_access(addr, width);
    const auto brute = brute_global(as_vector, width);
    REQUIRE(model.requests == brute.requests);
    REQUIRE(model.sectors == brute.sectors);
    REQUIRE(model.lines == brute.lines);
    REQUIRE(model.useful_bytes == brute.useful_bytes);
    REQUIRE(model.dram_bytes == brute.dram_bytes);

    std::array<std::uint64_t, 32> warp{};
    for (unsigned t = 0; t < 32; ++t) warp[t] = addr[t] % (48 * 1024);
    const std::vector<std::uint64_t> warp_vector(warp.begin(), warp.end());
    REQUIRE(m::shared_access(warp, width).wavefronts == brute_shared_wavefronts(warp_vector, width));
  }
}

namespace {

// The sectors one block of the band walk loads from one input, counted address by address: every
// thread's vector of each row it needs and the elements beside it, the block placed at row
// `first_row` and vector column `first_vector` of a matrix whose rows are `pitch` bytes apart.
std::size_t band_block_sectors(unsigned radius, unsigned elem_bytes, unsigned vector_elements, unsigned rows_per_thread,
                               unsigned block_x, unsigned block_y, std::uint64_t pitch, std::uint64_t first_row,
                               std::uint64_t first_vector) {
  std::set<std::uint64_t> sectors;
  const auto touch = [&](std::uint64_t row, std::int64_t col, unsigned bytes) {
    const std::uint64_t first = row * pitch + std::uint64_t(col) * elem_bytes;
    for (std::uint64_t b = first; b < first + bytes; ++b) sectors.insert(b / m::sector_bytes);
  };
  for (unsigned y = 0; y < block_y; ++y)
    for (unsigned x = 0; x < block_x; ++x) {
      const std::uint64_t r0 = first_row + std::uint64_t(y) * rows_per_thread;
      const std::int64_t c0 = std::int64_t(first_vector + x) * vector_elements;
      for (std::uint64_t r = r0 - radius; r < r0 + rows_per_thread + radius; ++r) {
        touch(r, c0, vector_elements * elem_bytes);
        for (unsigned k = 1; k <= radius; ++k) {
          touch(r, c0 - std::int64_t(k), elem_bytes);
          touch(r, c0 + vector_elements - 1 + k, elem_bytes);
        }
      }
    }
  return sectors.size();
}

}  // namespace

TEST_CASE("the band walk's halo traffic model equals a count of the sectors a block loads") {
  struct shape {
    unsigned radius, elem_bytes, vector_elements, rows_per_thread, block_x, block_y;
  };
  // The walk's shapes for floats at radius 1 and 2 and for doubles, the first design (one
  // vector a thread, 256 across), and a radius of 4 floats (16 bytes: still one sector a side).
  for (const shape s :
       {shape{1, 4, 4, 2, 64, 4}, shape{2, 4, 4, 4, 32, 8}, shape{1, 8, 2, 2, 64, 4}, shape{2, 8, 2, 1, 32, 8},
        shape{1, 4, 4, 1, 256, 1}, shape{4, 4, 4, 1, 64, 4}, shape{1, 2, 8, 2, 64, 4}}) {
    INFO("radius " << s.radius << ", " << s.elem_bytes << "-byte elements, " << s.rows_per_thread << " rows a thread, "
                   << s.block_x << " x " << s.block_y);
    // Rows far apart (no sector shared between rows); the block where the grid puts its fourth
    // (a multiple of block_x vectors in).
    const std::uint64_t pitch = 64 * 1024;
    const std::size_t loaded = band_block_sectors(s.radius, s.elem_bytes, s.vector_elements, s.rows_per_thread,
                                                  s.block_x, s.block_y, pitch, 100, 3 * std::uint64_t(s.block_x));
    const double output_sectors =
        double(s.block_y) * s.rows_per_thread * s.block_x * s.vector_elements * s.elem_bytes / m::sector_bytes;
    CHECK(m::band_halo_sectors_per_output_sector(s.radius, s.elem_bytes, s.vector_elements, s.rows_per_thread,
                                                 s.block_x,
                                                 s.block_y) == Approx(double(loaded) / output_sectors).epsilon(1e-12));
  }
}

// Compiles = passes: usable in constant expressions, and bands read less than one vector a thread.
static_assert(m::band_halo_sectors_per_output_sector(1, 4, 4, 2, 64, 4) <
              m::band_halo_sectors_per_output_sector(1, 4, 4, 1, 256, 1));

// The fused walk's pass: every block's region, clipped into the matrix, counted sector by sector
// (a set per block: L1 keeps what the block loads), against the model's closed sums.
TEST_CASE("model::fused_stencil_pass counts each block's region sectors and one read and write of the matrix") {
  struct shape {
    std::size_t rows, cols;
    unsigned radius, elem_bytes, sweeps, region_rows, region_cols;
  };
  for (const shape s :
       {shape{8192 / 64, 1000, 1, 4, 4, 64, 128}, shape{100, 300, 1, 4, 2, 16, 64}, shape{37, 5, 1, 4, 4, 64, 128},
        shape{257, 513, 2, 8, 2, 64, 64}, shape{1, 40, 1, 4, 3, 8, 32}}) {
    INFO(s.rows << " x " << s.cols << ", radius " << s.radius << ", " << s.elem_bytes << "-byte elements, " << s.sweeps
                << " sweeps, regions of " << s.region_rows << " x " << s.region_cols);
    const long long halo = (long long)s.sweeps * s.radius;
    const long long tile_rows = (long long)s.region_rows - 2 * halo, tile_cols = (long long)s.region_cols - 2 * halo;
    const std::uint64_t pitch = (s.cols * s.elem_bytes + 127) / 128 * 128;
    std::size_t loaded = 0;
    for (long long top = -halo; top + halo < (long long)s.rows; top += tile_rows)
      for (long long left = -halo; left + halo < (long long)s.cols; left += tile_cols) {
        std::set<std::uint64_t> sectors;
        for (long long i = top; i < top + s.region_rows; ++i)
          for (long long j = left; j < left + s.region_cols; ++j) {
            if (i < 0 || i >= (long long)s.rows || j < 0 || j >= (long long)s.cols) continue;
            sectors.insert((std::uint64_t(i) * pitch + std::uint64_t(j) * s.elem_bytes) / m::sector_bytes);
          }
        loaded += sectors.size();
      }
    const auto t =
        m::fused_stencil_pass(s.rows, s.cols, s.radius, s.elem_bytes, s.sweeps, s.region_rows, s.region_cols);
    const double row_sectors = double((s.cols * s.elem_bytes + 31) / 32);
    CHECK(t.l2_sectors_read_by_l1 == double(loaded));
    CHECK(t.output_sectors == double(s.rows) * row_sectors);
    CHECK(t.dram_bytes == 2.0 * double(s.rows) * row_sectors * 32.0);
  }
  // A tile that the halos leave empty moves nothing.
  CHECK(m::fused_stencil_pass(100, 100, 1, 4, 4, 8, 128).l2_sectors_read_by_l1 == 0);
}

// The fused volume walk's pass: every block's region of every plane it loads (its chunk and the
// halo along z, clipped into the volume), counted sector by sector per block, against the model.
TEST_CASE("model::fused_volume_stencil_pass counts each block's planes of region sectors") {
  struct shape {
    std::size_t depth, rows, cols;
    unsigned radius, elem_bytes, sweeps, region_rows, region_cols, chunk;
  };
  for (const shape s : {shape{20, 70, 150, 1, 4, 3, 32, 64, 8}, shape{7, 33, 64, 2, 4, 2, 32, 64, 64},
                        shape{1, 5, 300, 1, 8, 2, 16, 64, 16}, shape{65, 40, 40, 1, 4, 3, 32, 64, 64},
                        shape{70, 45, 100, 1, 4, 4, 32, 32, 16}}) {
    INFO(s.depth << " x " << s.rows << " x " << s.cols << ", radius " << s.radius << ", " << s.sweeps
                 << " sweeps, regions of " << s.region_rows << " x " << s.region_cols << ", chunks of " << s.chunk);
    const long long halo = (long long)s.sweeps * s.radius;
    const long long tile_rows = (long long)s.region_rows - 2 * halo, tile_cols = (long long)s.region_cols - 2 * halo;
    const std::uint64_t pitch = (s.cols * s.elem_bytes + 127) / 128 * 128, plane = pitch * s.rows;
    std::size_t loaded = 0;
    for (long long z0 = 0; z0 < (long long)s.depth; z0 += s.chunk)
      for (long long top = -halo; top + halo < (long long)s.rows; top += tile_rows)
        for (long long left = -halo; left + halo < (long long)s.cols; left += tile_cols) {
          std::set<std::uint64_t> sectors;
          for (long long z = z0 - halo; z < z0 + (long long)s.chunk + halo; ++z)
            for (long long i = top; i < top + s.region_rows; ++i)
              for (long long j = left; j < left + s.region_cols; ++j) {
                if (z < 0 || z >= (long long)s.depth || i < 0 || i >= (long long)s.rows || j < 0 ||
                    j >= (long long)s.cols)
                  continue;
                sectors.insert((std::uint64_t(z) * plane + std::uint64_t(i) * pitch + std::uint64_t(j) * s.elem_bytes) /
                               m::sector_bytes);
              }
          loaded += sectors.size();
        }
    const auto t = m::fused_volume_stencil_pass(s.depth, s.rows, s.cols, s.radius, s.elem_bytes, s.sweeps,
                                                s.region_rows, s.region_cols, s.chunk);
    const double row_sectors = double((s.cols * s.elem_bytes + 31) / 32);
    CHECK(t.l2_sectors_read_by_l1 == double(loaded));
    CHECK(t.output_sectors == double(s.depth * s.rows) * row_sectors);
    CHECK(t.dram_bytes == 2.0 * double(s.depth * s.rows) * row_sectors * 32.0);
  }
}
