// Layouts on the host: where layout::aos and layout::aosoa<Lanes> put each leaf (the tile's runs
// in leaf order, each 16-byte aligned, the tile a multiple of 16; records sizeof(T) apart), one
// function template written against the proxy giving the same results on every layout, member
// functions (COALESCE_METHODS) and array fields through every layout's proxy, subviews that start
// mid-tile, and coalesce::vector's container calls (growth with value-initialized elements, copies,
// moves, to_vector) on host vectors. Plain host compiler, no GPU.
#include <coalesce/layout_vector.hpp>
#include <coalesce/model.hpp>
#include <coalesce/soa.hpp>

#include "coalesce_test.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace layouts_test {

struct Body {
  float x, y, z;
  double mass;
  std::uint16_t flags;
  std::int32_t cell[3];
  float kinetic(float v2) const { return 0.5f * float(mass) * v2; }
  void move(float dx) { x += dx; }
};
COALESCE_FIELDS(Body, x, y, z, mass, flags, cell);
COALESCE_METHODS(Body, kinetic, move);

}  // namespace layouts_test

namespace {

using layouts_test::Body;
namespace layout = coalesce::layout;
// Position and cell hot (in columns), the rest cold: in records, or in tiles of 8.
using hot_position = layout::fields<&Body::x, &Body::y, &Body::z, &Body::cell>;
using split_records = layout::split<hot_position>;
using split_tiles = layout::split<hot_position, layout::aosoa<8>>;
template <class L>
using host_vector = coalesce::vector<Body, L, coalesce::host_space>;

Body body(std::size_t i) {
  return Body{float(i), float(2 * i), -1.0f, double(i) / 4, std::uint16_t(i % 7), {int(i), -int(i), 3}};
}

bool same(const Body& a, const Body& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.mass == b.mass && a.flags == b.flags && a.cell[0] == b.cell[0] &&
         a.cell[1] == b.cell[1] && a.cell[2] == b.cell[2];
}

// The user's code, written once against the proxy.
template <class View>
void update(const View& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto p = v[i];
    p.x += p.kinetic(2.0f);
    p.cell[2] = p.cell[0] + p.flags;
    p.move(1.0f);
  }
}

template <class L>
std::vector<Body> updated_through(std::size_t n) {
  host_vector<L> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = body(i);
  update(v.view());
  return v.to_vector();
}

}  // namespace

TEST_CASE("tiles: each leaf's run in leaf order, 16-byte aligned, the tile a multiple of 16 bytes") {
  using map = coalesce::detail::layout_map<Body, layout::aosoa<32>>;
  // x, y, z: 32 floats each; mass: 32 doubles; flags: 32 uint16 (64 bytes); cell: three runs of 32 ints.
  const std::size_t want[] = {0, 128, 256, 384, 640, 704, 832, 960};
  for (std::size_t l = 0; l < 8; ++l) CHECK(map::offsets.at[l] == want[l]);
  CHECK(map::tile_bytes == 1088);
  using small = coalesce::detail::layout_map<Body, layout::aosoa<2>>;  // runs narrower than 16 bytes
  for (std::size_t l = 0; l < 7; ++l) CHECK(small::offsets.at[l] % 16 == 0);
  CHECK(small::tile_bytes % 16 == 0);
  CHECK(map::bytes(0) == 0);
  CHECK(map::bytes(1) == 1088);
  CHECK(map::bytes(64) == 2 * 1088);
  CHECK(map::bytes(65) == 3 * 1088);
  CHECK(coalesce::detail::layout_map<Body, layout::aos>::bytes(65) == 65 * sizeof(Body));
}

TEST_CASE("leaf_pointer addresses the leaf: in its record, or in its tile's run") {
  host_vector<layout::aosoa<8>> tiles(20);
  host_vector<layout::aos> records(20);
  const auto t = tiles.view();
  const auto r = records.view();
  const auto* block = t.block();
  using map = coalesce::detail::layout_map<Body, layout::aosoa<8>>;
  // Element 13: tile 1, lane 5; leaf 3 (mass).
  CHECK(reinterpret_cast<const unsigned char*>(t.leaf_pointer<3>(13)) ==
        block + map::tile_bytes + map::offsets.at[3] + 5 * sizeof(double));
  CHECK(r.leaf_pointer<3>(13) == &r.data()[13].mass);
  CHECK(r.leaf_pointer<6>(13) == &r.data()[13].cell[1]);
  // A subview's element 0 is the view's element `first`, mid-tile.
  CHECK(t.subview(13).leaf_pointer<3>(0) == t.leaf_pointer<3>(13));
  CHECK(t.subview(13, 4).size() == 4);
}

TEST_CASE("split: the hot fields' leaves in columns 256-byte aligned, the others in records or tiles") {
  using records = coalesce::detail::layout_map<Body, split_records>;
  using tiles = coalesce::detail::layout_map<Body, split_tiles>;
  // Leaves: x y z mass flags cell[0] cell[1] cell[2]; hot: x y z and the three cells.
  const bool hot[] = {true, true, true, false, false, true, true, true};
  for (std::size_t l = 0; l < 8; ++l) CHECK(records::table.hot[l] == hot[l]);
  CHECK(records::hot_count == 6);
  // Cold records: mass (a double) at 0, flags at 8, 16 bytes with the double's alignment.
  CHECK(records::group == 1);
  CHECK(records::group_bytes == 16);
  CHECK(records::cold_offset<3> == 0);
  CHECK(records::cold_offset<4> == 8);
  // Cold tiles of 8: a run of 8 doubles (64 bytes), then 8 uint16 (16), each 16-byte aligned.
  CHECK(tiles::group == 8);
  CHECK(tiles::cold_offset<4> == 64);
  CHECK(tiles::group_bytes == 80);
  // Columns of stride elements (a multiple of 256), six 4-byte leaves, then the cold part.
  CHECK(records::stride_for(1) == 256);
  CHECK(records::stride_for(257) == 512);
  CHECK(records::bytes(300) == 512 * 24 + 300 * 16);
  CHECK(tiles::bytes(300) == 512 * 24 + 38 * 80);
  CHECK(records::bytes(0) == 0);
  // Padding (mass and flags are 10 of the record's 16 bytes) is zeroed when a vector allocates.
  STATIC_REQUIRE(records::has_gaps);
  STATIC_REQUIRE(!coalesce::detail::layout_map<Body, layout::aosoa<32>>::has_gaps);  // every run whole
  STATIC_REQUIRE(coalesce::detail::layout_map<Body, layout::aosoa<2>>::has_gaps);    // 8-byte runs in 16
  CHECK_THROWS_AS(records::bytes(std::size_t(-1) / 8), std::length_error);

  host_vector<split_records> r(300);
  host_vector<split_tiles> t(300);
  const auto rv = r.view();
  const auto tv = t.view();
  REQUIRE(rv.stride() == 512);
  const auto* block = rv.block();
  const auto at = [&](const void* p) { return std::size_t(static_cast<const unsigned char*>(p) - block); };
  CHECK(at(rv.leaf_pointer<0>(7)) == 7 * 4);                       // x: column 0
  CHECK(at(rv.leaf_pointer<2>(7)) == 2 * 512 * 4 + 7 * 4);         // z: column 2
  CHECK(at(rv.leaf_pointer<5>(7)) == 3 * 512 * 4 + 7 * 4);         // cell[0]: column 3
  CHECK(at(rv.leaf_pointer<7>(299)) == 5 * 512 * 4 + 299 * 4);     // cell[2]: column 5
  CHECK(at(rv.leaf_pointer<3>(7)) == 6 * 512 * 4 + 7 * 16);        // mass: record 7
  CHECK(at(rv.leaf_pointer<4>(7)) == 6 * 512 * 4 + 7 * 16 + 8);    // flags: record 7, after mass
  for (const std::size_t column : {at(rv.leaf_pointer<0>(0)), at(rv.leaf_pointer<1>(0)), at(rv.leaf_pointer<2>(0)),
                                   at(rv.leaf_pointer<5>(0)), at(rv.leaf_pointer<6>(0)), at(rv.leaf_pointer<3>(0))})
    CHECK(column % 256 == 0);  // every column, and the cold records, start 256-byte aligned
  const auto* tblock = tv.block();
  CHECK(std::size_t(reinterpret_cast<const unsigned char*>(tv.leaf_pointer<4>(13)) - tblock) ==
        6 * 512 * 4 + 1 * 80 + 64 + 5 * 2);  // flags of element 13: tile 1, lane 5
  // A subview keeps the stride, and its element 0 is the view's element `first`.
  CHECK(rv.subview(13).leaf_pointer<3>(0) == rv.leaf_pointer<3>(13));
  CHECK(rv.subview(13).leaf_pointer<6>(2) == rv.leaf_pointer<6>(15));
}

TEST_CASE("one function template gives the same results through every layout's proxy") {
  const std::size_t n = 77;
  std::vector<Body> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = body(i);
  for (auto& b : want) {
    b.x += b.kinetic(2.0f);
    b.cell[2] = b.cell[0] + b.flags;
    b.move(1.0f);
  }
  const auto check = [&](const std::vector<Body>& got) {
    REQUIRE(got.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(same(got[i], want[i]));
  };
  check(updated_through<layout::soa>(n));
  check(updated_through<layout::aos>(n));
  check(updated_through<layout::aosoa<32>>(n));
  check(updated_through<layout::aosoa<4>>(n));
  check(updated_through<split_records>(n));
  check(updated_through<split_tiles>(n));
  check(updated_through<layout::split<layout::fields<&Body::mass>, layout::aosoa<32>>>(n));
}

TEST_CASE("coalesce::vector is soa_vector for layout::soa, layout_vector otherwise") {
  STATIC_REQUIRE(std::is_same_v<coalesce::vector<Body>, coalesce::soa_vector<Body>>);
  STATIC_REQUIRE(std::is_same_v<coalesce::vector<Body, layout::aos, coalesce::host_space>,
                                coalesce::layout_vector<Body, layout::aos, coalesce::host_space>>);
  STATIC_REQUIRE(std::is_same_v<host_vector<layout::aosoa<32>>::view_type,
                                coalesce::layout_view<Body, layout::aosoa<32>, coalesce::host_space>>);
  STATIC_REQUIRE(
      std::is_same_v<decltype(std::declval<host_vector<layout::aos>&>().view()[0]), coalesce::soa_reference_t<Body>>);
  STATIC_REQUIRE(std::is_trivially_copyable_v<coalesce::layout_view<Body, layout::aosoa<32>>>);
}

TEMPLATE_TEST_CASE("a host layout_vector grows, copies and moves like soa_vector", "", layout::aos, layout::aosoa<32>,
                   layout::aosoa<8>, split_records, split_tiles) {
  std::vector<Body> want(45);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = body(i);
  host_vector<TestType> v(want);
  CHECK(v.size() == 45);
  v.resize(100);  // value-initialized: every leaf zero
  REQUIRE(v.size() == 100);
  for (std::size_t i = 0; i < 45; ++i) CHECK(same(v[i], want[i]));
  for (std::size_t i = 45; i < 100; ++i) CHECK(same(v[i], Body{}));
  v.push_back(body(500));
  CHECK(same(v[100], body(500)));
  const auto copy = v;
  CHECK(copy.size() == 101);
  for (std::size_t i = 0; i < 101; ++i) CHECK(same(copy[i], v[i]));
  auto moved = std::move(v);
  CHECK(v.size() == 0);
  CHECK(v.capacity() == 0);
  CHECK(moved.size() == 101);
  moved.resize(10);
  CHECK(moved.to_vector().size() == 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(same(moved.to_vector()[i], want[i]));
  host_vector<TestType> other(3);
  other.assign(host_vector<TestType>(std::vector<Body>(3, body(9))));
  for (std::size_t i = 0; i < 3; ++i) CHECK(same(other[i], body(9)));
  CHECK_THROWS_AS(other.assign(copy), std::invalid_argument);
}

TEST_CASE("a read-only element calls const member functions; its fields are const") {
  host_vector<layout::aosoa<32>> v(std::vector<Body>(3, body(2)));
  const auto& c = v;
  CHECK(c[1].kinetic(4.0f) == body(2).kinetic(4.0f));
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(c[1].x)>>);
  STATIC_REQUIRE(std::is_const_v<std::remove_reference_t<decltype(c.view()[1].cell[0])>>);
}

namespace layouts_test {
struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);
}  // namespace layouts_test

TEST_CASE("the model's field_access: a warp reading one field of each layout") {
  using layouts_test::Particle;
  namespace model = coalesce::model;
  // vx is leaf 3. Columns and tiles: one 128-byte run, 4 sectors; records: 768 bytes, 24 sectors.
  constexpr auto soa = model::field_access<Particle, layout::soa, 3>();
  constexpr auto tiles = model::field_access<Particle, layout::aosoa<32>, 3>();
  constexpr auto records = model::field_access<Particle, layout::aos, 3>(0, 32, offsetof(Particle, vx));
  STATIC_REQUIRE(soa.sectors_per_request() == 4.0);
  STATIC_REQUIRE(tiles.sectors_per_request() == 4.0);
  STATIC_REQUIRE(records.sectors_per_request() == 24.0);
  STATIC_REQUIRE(records.efficiency() == 128.0 / (24 * 32));
  // A warp that starts mid-tile reads half a run of two tiles: still 4 sectors, in 2 lines.
  constexpr auto straddling = model::field_access<Particle, layout::aosoa<32>, 3>(16);
  STATIC_REQUIRE(straddling.sectors == 4);
  STATIC_REQUIRE(straddling.lines == 2);
  // Tiles of 8: a warp reads four runs of 32 bytes, one sector each, in four tiles.
  constexpr auto narrow = model::field_access<Particle, layout::aosoa<8>, 3>();
  STATIC_REQUIRE(narrow.sectors == 4);
  STATIC_REQUIRE(narrow.lines == 4);
  // A double field (Body::mass, leaf 3): 256 bytes a warp in columns and tiles of 32.
  STATIC_REQUIRE(model::field_access<Body, layout::aosoa<32>, 3>().sectors_per_request() == 8.0);
  STATIC_REQUIRE(model::field_access<Body, layout::soa, 3>().sectors_per_request() == 8.0);
  // Many threads, warp by warp.
  STATIC_REQUIRE(model::field_access<Particle, layout::aosoa<32>, 0>(0, 256).requests == 8);
  STATIC_REQUIRE(model::field_access<Particle, layout::aosoa<32>, 0>(0, 256).sectors == 32);
  // A split: a hot field as in its column; a cold one in records of the cold fields only (here
  // y, z, vy, vz: 16 bytes, so a warp's float is 16 sectors, against 24 in whole records), or in
  // cold tiles as in tiles.
  using split = layout::split<layout::fields<&Particle::x, &Particle::vx>>;
  using split_tiles = layout::split<layout::fields<&Particle::x, &Particle::vx>, layout::aosoa<32>>;
  STATIC_REQUIRE(model::field_access<Particle, split, 3>().sectors_per_request() == 4.0);
  STATIC_REQUIRE(model::field_access<Particle, split, 4>().sectors_per_request() == 16.0);
  STATIC_REQUIRE(model::field_access<Particle, split_tiles, 4>().sectors_per_request() == 4.0);
  STATIC_REQUIRE(model::field_access<Particle, split_tiles, 4>(16).lines == 2);
}
