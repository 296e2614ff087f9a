// COALESCE_METHODS (<coalesce/element_methods.hpp>): a struct's member functions called on the
// elements of a host soa_vector, view[i].energy(), as on a T: const ones change nothing; others
// write back exactly the leaves whose bits changed (a NaN the call leaves alone keeps its bits);
// arguments, overloads and member function templates whose arguments are deduced pass through; a
// reference returned comes back as a copy; on a struct field's proxy (view[i].pos.norm2()), a
// positional element (no COALESCE_FIELDS) and a class template's, and on the read-only view for
// const ones. Plain host compiler, no GPU.
#include <coalesce/soa.hpp>

#include "coalesce_test.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace methods {

struct Vec3 {
  float x, y, z;
  float norm2() const { return x * x + y * y + z * z; }
  void scale(float s) {
    x *= s;
    y *= s;
    z *= s;
  }
};
COALESCE_FIELDS(Vec3, x, y, z);
COALESCE_METHODS(Vec3, norm2, scale);

struct Particle {
  Vec3 pos;
  float vx, vy, vz;
  std::int32_t id;
  float energy() const { return 0.5f * (vx * vx + vy * vy + vz * vz); }
  void kick(float ax, float dt) { vx += ax * dt; }
  void set_id(std::int32_t to) { id = to; }
  float moved(float dt) const { return pos.x + vx * dt; }        // two overloads
  float moved(float dt, float by) const { return pos.x + vx * dt + by; }
  template <class S>
  S scaled_vx(S by) const {  // a template whose arguments are deduced
    return S(vx) * by;
  }
  float& vx_ref() { return vx; }
  const std::int32_t& id_ref() const { return id; }
  bool same_as(const Particle& other) const { return id == other.id; }
};
COALESCE_FIELDS(Particle, pos, vx, vy, vz, id);
COALESCE_METHODS(Particle, energy, kick, set_id, moved, scaled_vx, vx_ref, id_ref, same_as);

// No COALESCE_FIELDS: the positional element gets the member functions too.
struct Pair {
  double a, b;
  double sum() const { return a + b; }
  void swap_halves() {
    const double t = a;
    a = b;
    b = t;
  }
};
COALESCE_METHODS(Pair, sum, swap_halves);

template <class T>
struct Box {
  T lo, hi;
  T width() const { return hi - lo; }
};
COALESCE_TEMPLATE_FIELDS((class T), Box<T>, lo, hi);
COALESCE_TEMPLATE_METHODS((class T), Box<T>, width);

std::vector<Particle> some_particles(std::size_t n) {
  std::vector<Particle> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = Particle{{float(i), 2.0f * float(i), 1.0f}, 1.0f + float(i), 2.0f, -3.0f, std::int32_t(100 + i)};
  return v;
}

}  // namespace methods

using methods::Particle;
using host_particles = coalesce::soa_vector<Particle, coalesce::host_space>;

TEST_CASE("a const member function called on an element reads it and changes nothing") {
  const auto start = methods::some_particles(5);
  host_particles p(start);
  const auto view = p.view();
  for (std::size_t i = 0; i < start.size(); ++i) {
    CHECK(view[i].energy() == start[i].energy());
    CHECK(p.const_view()[i].energy() == start[i].energy());  // the read-only element takes const ones
    CHECK(view[i].moved(0.5f) == start[i].moved(0.5f));
    CHECK(view[i].moved(0.5f, 3.0f) == start[i].moved(0.5f, 3.0f));
    CHECK(view[i].scaled_vx(2.5) == start[i].scaled_vx(2.5));
    static_assert(std::is_same_v<decltype(view[i].scaled_vx(2.5)), double>);
    CHECK(view[i].same_as(start[i]));
    CHECK(!view[i].same_as(start[(i + 1) % start.size()]));
  }
  const auto after = p.to_vector();
  for (std::size_t i = 0; i < start.size(); ++i) CHECK(std::memcmp(&after[i], &start[i], sizeof(Particle)) == 0);
}

TEST_CASE("a member function that changes the element writes back what it changed, and only that") {
  const auto start = methods::some_particles(4);
  host_particles p(start);
  const auto view = p.view();
  view[1].kick(2.0f, 0.25f);
  view[2].set_id(-7);
  auto expected = start;
  expected[1].kick(2.0f, 0.25f);
  expected[2].set_id(-7);
  const auto after = p.to_vector();
  for (std::size_t i = 0; i < start.size(); ++i) {
    INFO("particle " << i);
    CHECK(std::memcmp(&after[i], &expected[i], sizeof(Particle)) == 0);
  }

  // A call that changes nothing writes nothing: kick by 0 leaves vx's bits as they were, and a
  // column the call does not change is never written. A NaN the element held stays that NaN (its
  // bits compare equal to themselves), where a comparison of values would call it changed.
  float* vx = p.view().column<&Particle::vx>();
  vx[3] = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t before_bits = 0;
  std::memcpy(&before_bits, &vx[3], 4);
  view[3].set_id(5);
  std::uint32_t after_bits = 0;
  std::memcpy(&after_bits, &vx[3], 4);
  CHECK(after_bits == before_bits);
  CHECK(view[3].id == 5);
}

TEST_CASE("a member function returning a reference returns, through the element, a copy") {
  host_particles p(methods::some_particles(3));
  const auto view = p.view();
  static_assert(std::is_same_v<decltype(view[1].vx_ref()), float>);
  static_assert(std::is_same_v<decltype(view[1].id_ref()), std::int32_t>);
  CHECK(view[1].vx_ref() == 2.0f);
  CHECK(view[2].id_ref() == 102);
}

TEST_CASE("member functions on a struct field's proxy, a positional element and a class template's") {
  host_particles p(methods::some_particles(3));
  const auto view = p.view();
  CHECK(view[2].pos.norm2() == 4.0f + 16.0f + 1.0f);
  view[2].pos.scale(2.0f);
  CHECK(view[2].pos.x == 4.0f);
  CHECK(view[2].pos.y == 8.0f);
  CHECK(view[2].pos.z == 2.0f);
  CHECK(view[1].pos.x == 1.0f);  // the others untouched

  coalesce::soa_vector<methods::Pair, coalesce::host_space> pairs(std::vector<methods::Pair>{{1.0, 2.5}, {3.0, 4.0}});
  const auto pv = pairs.view();
  CHECK(pv[0].sum() == 3.5);
  pv[1].swap_halves();
  CHECK(coalesce::get<0>(pv[1]) == 4.0);
  CHECK(coalesce::get<1>(pv[1]) == 3.0);

  coalesce::soa_vector<methods::Box<int>, coalesce::host_space> boxes(std::vector<methods::Box<int>>{{-2, 5}, {1, 1}});
  CHECK(boxes.view()[0].width() == 7);
  CHECK(boxes.const_view()[1].width() == 0);
}
