// soa_vector of structs whose fields are structs, CUDA vector types and arrays, in host space:
// each is split into leaf columns (Body { float3 pos, vel; float mass; } is seven float
// columns), view[i].pos.x and view[i].p[k] are references into them, and whole structs still
// gather and scatter. Plain host compiler, no GPU.
#include <coalesce/soa.hpp>

#include "coalesce_test.hpp"

#include <cuda/std/array>
#include <vector_types.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace nested {

struct Body {
  float3 pos;
  float3 vel;
  float mass;
};
COALESCE_FIELDS(Body, pos, vel, mass);

// A struct of the user's, named by COALESCE_FIELDS, and one that is not.
struct Named {
  float a, b;
};
COALESCE_FIELDS(Named, a, b);
struct Plain {
  double u, v;
};
struct Holder {
  Named named;
  Plain plain;
  std::int32_t id;
};
COALESCE_FIELDS(Holder, named, plain, id);

struct Sample {
  float p[3];
  cuda::std::array<std::int32_t, 2> q;
  double m[2][2];
};
COALESCE_FIELDS(Sample, p, q, m);

// Every kind of CUDA vector type, by component type and count.
struct Vectors {
  char1 c;
  uchar2 uc;
  short3 s;
  ushort4 us;
  int2 i;
  uint3 ui;
  long1 l;
  ulong2 ul;
  longlong2 ll;
  ulonglong1 ull;
  float4 f;
  double3 d;
};
COALESCE_FIELDS(Vectors, c, uc, s, us, i, ui, l, ul, ll, ull, f, d);

// No COALESCE_FIELDS anywhere: positional access, and the float3 still splits.
struct Unnamed {
  float3 pos;
  float mass;
};

// A type the user keeps whole: one column of 4-byte Rgba.
struct Rgba {
  std::uint8_t r, g, b, a;
};
struct Pixel {
  Rgba color;
  float depth;
};
COALESCE_FIELDS(Pixel, color, depth);

}  // namespace nested

template <>
struct coalesce::keep_whole<nested::Rgba> : std::true_type {};

namespace {

using coalesce::host_space;
using coalesce::soa_vector;
using nested::Body;

Body body(float base) { return {{base, base + 1, base + 2}, {base + 3, base + 4, base + 5}, base + 6}; }

bool same_body(const Body& a, const Body& b) {
  return a.pos.x == b.pos.x && a.pos.y == b.pos.y && a.pos.z == b.pos.z && a.vel.x == b.vel.x && a.vel.y == b.vel.y &&
         a.vel.z == b.vel.z && a.mass == b.mass;
}

}  // namespace

TEST_CASE("a struct of two float3 and a float is stored as seven float columns") {
  static_assert(coalesce::field_count_v<Body> == 3);
  static_assert(coalesce::leaf_count_v<Body> == 7);
  static_assert(coalesce::first_leaf_v<Body, 0> == 0 && coalesce::first_leaf_v<Body, 1> == 3 &&
                coalesce::first_leaf_v<Body, 2> == 6);
  static_assert(std::is_same_v<coalesce::leaf_t<Body, 0>, float> && std::is_same_v<coalesce::leaf_t<Body, 4>, float> &&
                std::is_same_v<coalesce::leaf_t<Body, 6>, float>);
  static_assert(soa_vector<Body, host_space>::leaf_count == 7 && soa_vector<Body, host_space>::field_count == 3);

  std::vector<Body> aos(1001);
  for (std::size_t i = 0; i < aos.size(); ++i) aos[i] = body(float(10 * i));
  soa_vector<Body, host_space> v(aos);
  const auto view = v.view();
  REQUIRE(view.columns().size() == 7);
  const float* columns[] = {view.leaf_column<0>(), view.leaf_column<1>(), view.leaf_column<2>(), view.leaf_column<3>(),
                            view.leaf_column<4>(), view.leaf_column<5>(), view.leaf_column<6>()};
  for (std::size_t l = 0; l < 7; ++l) {
    REQUIRE(reinterpret_cast<std::uintptr_t>(columns[l]) % 256 == 0);
    // Contiguous floats: element i of leaf l is at columns[l] + i.
    for (std::size_t i = 0; i < aos.size(); ++i) REQUIRE(columns[l][i] == float(10 * i) + float(l));
  }
  // Columns of one type are equally far apart (what an array field's proxy relies on).
  for (std::size_t l = 1; l < 7; ++l) REQUIRE(columns[l] - columns[l - 1] == columns[1] - columns[0]);
  // A field that is one column keeps column<I>; a split one is reached by its leaves.
  REQUIRE(view.column<&Body::mass>() == view.leaf_column<6>());
  REQUIRE(view.column<2>() == view.leaf_column<6>());
}

TEST_CASE("view[i].pos.x writes the pos.x column at i and nothing else") {
  soa_vector<Body, host_space> v(64);
  const auto view = v.view();
  view[5].pos.y = 2.5f;
  view[7].vel.z += 1.0f;
  static_assert(std::is_same_v<decltype(view[5].pos.y), float&>);
  for (std::size_t i = 0; i < 64; ++i) {
    REQUIRE(view.leaf_column<1>()[i] == (i == 5 ? 2.5f : 0.0f));
    REQUIRE(view.leaf_column<5>()[i] == (i == 7 ? 1.0f : 0.0f));
    for (std::size_t l : {0, 2, 3, 4, 6}) REQUIRE(static_cast<const float*>(view.columns()[l])[i] == 0.0f);
  }
  // Read-only views read nested fields as const references.
  const auto read = v.const_view();
  static_assert(std::is_same_v<decltype(read[5].pos.y), const float&>);
  REQUIRE(read[5].pos.y == 2.5f);
}

TEST_CASE("whole Bodies and whole float3 fields gather and scatter through view[i]") {
  std::vector<Body> aos(300);
  for (std::size_t i = 0; i < aos.size(); ++i) aos[i] = body(float(i) * 0.5f);
  soa_vector<Body, host_space> v(aos);
  const auto view = v.view();
  for (std::size_t i = 0; i < aos.size(); ++i) {
    const Body b = view[i];
    REQUIRE(same_body(b, aos[i]));
  }
  view[3] = body(-1.0f);
  REQUIRE(same_body(view[3], body(-1.0f)));
  const float3 pos = view[4].pos;
  REQUIRE((pos.x == aos[4].pos.x && pos.y == aos[4].pos.y && pos.z == aos[4].pos.z));
  view[5].vel = pos;
  REQUIRE((view[5].vel.x == pos.x && view[5].vel.y == pos.y && view[5].vel.z == pos.z));
  view[6].pos = view[7].pos;  // values, as for Body
  REQUIRE(view[6].pos.z == aos[7].pos.z);
  const auto value = coalesce::value(view[8].vel);
  static_assert(std::is_same_v<std::remove_const_t<decltype(value)>, float3>);
  REQUIRE(value.y == aos[8].vel.y);
  swap(view[10], view[11]);
  REQUIRE((same_body(view[10], aos[11]) && same_body(view[11], aos[10])));
  v.push_back(body(100.0f));
  REQUIRE(same_body(v.to_vector().back(), body(100.0f)));
}

TEST_CASE("C arrays and cuda::std::array fields are one column per element, indexed at run time") {
  static_assert(coalesce::field_count_v<nested::Sample> == 3);  // float p[3] counts as one field
  static_assert(coalesce::leaf_count_v<nested::Sample> == 3 + 2 + 4);
  static_assert(coalesce::first_leaf_v<nested::Sample, 1> == 3 && coalesce::first_leaf_v<nested::Sample, 2> == 5);
  static_assert(std::is_same_v<coalesce::leaf_t<nested::Sample, 4>, std::int32_t> &&
                std::is_same_v<coalesce::leaf_t<nested::Sample, 8>, double>);

  std::vector<nested::Sample> aos(50);
  for (std::size_t i = 0; i < aos.size(); ++i) {
    const double d = double(i);
    aos[i] = {{float(i), float(i) + 0.5f, float(i) + 0.75f},
              {{std::int32_t(i), -std::int32_t(i)}},
              {{d, d + 1}, {d + 2, d + 3}}};
  }
  soa_vector<nested::Sample, host_space> v(aos);
  const auto view = v.view();
  for (std::size_t i = 0; i < aos.size(); ++i) {
    for (std::size_t k = 0; k < 3; ++k) {
      REQUIRE(view[i].p[k] == aos[i].p[k]);
      REQUIRE(static_cast<const float*>(view.columns()[k])[i] == aos[i].p[k]);
    }
    for (std::size_t k = 0; k < view[i].q.size(); ++k) REQUIRE(view[i].q[k] == aos[i].q[k]);
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t c = 0; c < 2; ++c) {
        REQUIRE(view[i].m[r][c] == aos[i].m[r][c]);
        REQUIRE(static_cast<const double*>(view.columns()[5 + 2 * r + c])[i] == aos[i].m[r][c]);
      }
  }
  std::size_t k = 2;  // known only at run time
  view[9].p[k] = -3.0f;
  view[9].q[k - 1] = 77;
  view[9].m[k - 1][0] = 0.125;
  REQUIRE(view.leaf_column<2>()[9] == -3.0f);
  REQUIRE(view.leaf_column<4>()[9] == 77);
  REQUIRE(view.leaf_column<7>()[9] == 0.125);
  const nested::Sample s = view[9];
  REQUIRE((s.p[2] == -3.0f && s.q[1] == 77 && s.m[1][0] == 0.125 && s.p[0] == aos[9].p[0]));
  const cuda::std::array<std::int32_t, 2> q = view[10].q;
  REQUIRE((q[0] == 10 && q[1] == -10));
  view[11].q = q;
  REQUIRE(view[11].q[1] == -10);
  view[12] = aos[40];
  const nested::Sample back = view[12];
  REQUIRE((back.m[1][1] == aos[40].m[1][1] && back.p[1] == aos[40].p[1] && back.q[0] == aos[40].q[0]));
}

TEST_CASE("every CUDA vector type splits into its components, read as .x .y .z .w") {
  using nested::Vectors;
  static_assert(coalesce::field_count_v<Vectors> == 12);
  static_assert(coalesce::leaf_count_v<Vectors> == 1 + 2 + 3 + 4 + 2 + 3 + 1 + 2 + 2 + 1 + 4 + 3);
  // Leaves: c 0, uc 1-2, s 3-5, us 6-9, i 10-11, ui 12-14, l 15, ul 16-17, ll 18-19, ull 20, f 21-24, d 25-27.
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 0>, signed char>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 3>, short>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 6>, unsigned short>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 10>, int>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 12>, unsigned int>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 18>, long long>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 24>, float>);
  static_assert(std::is_same_v<coalesce::leaf_t<Vectors, 27>, double>);

  soa_vector<Vectors, host_space> v(8);
  const auto view = v.view();
  view[3].c.x = 5;
  view[3].uc.y = 6;
  view[3].s.z = -7;
  view[3].us.w = 8;
  view[3].i.y = -9;
  view[3].ui.z = 10;
  view[3].l.x = -11;
  view[3].ul.y = 12;
  view[3].ll.x = -13;
  view[3].ull.x = 14;
  view[3].f.w = 1.5f;
  view[3].d.z = 2.25;
  const Vectors got = view[3];
  REQUIRE((got.c.x == 5 && got.uc.y == 6 && got.s.z == -7 && got.us.w == 8 && got.i.y == -9 && got.ui.z == 10u));
  REQUIRE(
      (got.l.x == -11 && got.ul.y == 12u && got.ll.x == -13 && got.ull.x == 14u && got.f.w == 1.5f && got.d.z == 2.25));
  REQUIRE(view.leaf_column<14>()[3] == 10u);  // ui.z
  REQUIRE(view.leaf_column<12>()[3] == 0u);   // ui.x, untouched
  REQUIRE(view.leaf_column<24>()[3] == 1.5f);  // f.w
  REQUIRE(view.leaf_column<27>()[3] == 2.25);  // d.z
}

TEST_CASE("a nested struct with COALESCE_FIELDS reads by name, one without by get<I>") {
  using nested::Holder;
  static_assert(coalesce::field_count_v<Holder> == 3);
  static_assert(coalesce::leaf_count_v<Holder> == 5);
  static_assert(std::is_same_v<coalesce::leaf_t<Holder, 2>, double> &&
                std::is_same_v<coalesce::leaf_t<Holder, 4>, std::int32_t>);
  soa_vector<Holder, host_space> v(4);
  const auto view = v.view();
  view[1].named.b = 3.0f;
  coalesce::get<1>(view[1].plain) = 4.5;
  coalesce::get<0>(coalesce::get<0>(view[2])) = -1.0f;
  view[2].id = 9;
  REQUIRE(view.leaf_column<1>()[1] == 3.0f);
  REQUIRE(view.leaf_column<3>()[1] == 4.5);
  REQUIRE(view.leaf_column<0>()[2] == -1.0f);
  const Holder h = view[1];
  REQUIRE((h.named.b == 3.0f && h.plain.v == 4.5 && h.id == 0));
  const nested::Named named = view[1].named;
  REQUIRE(named.b == 3.0f);
  view[3].plain = nested::Plain{1.0, 2.0};
  REQUIRE(view.leaf_column<2>()[3] == 1.0);

  // A top-level struct without the macro splits its fields too.
  static_assert(coalesce::leaf_count_v<nested::Unnamed> == 4);
  soa_vector<nested::Unnamed, host_space> u(3);
  coalesce::get<0>(u.view()[1]).z = 6.0f;
  REQUIRE(u.view().leaf_column<2>()[1] == 6.0f);
  const nested::Unnamed value = u.view()[1];
  REQUIRE(value.pos.z == 6.0f);
}

TEST_CASE("coalesce::keep_whole keeps a field's type as one column") {
  static_assert(coalesce::leaf_count_v<nested::Pixel> == 2);
  static_assert(std::is_same_v<coalesce::leaf_t<nested::Pixel, 0>, nested::Rgba>);
  soa_vector<nested::Pixel, host_space> v(4);
  const auto view = v.view();
  view[2].color = nested::Rgba{1, 2, 3, 4};
  view[2].color.b = 30;
  REQUIRE(view.column<&nested::Pixel::color>()[2].b == 30);
  REQUIRE(view.column<&nested::Pixel::color>()[2].a == 4);
}
