// soa_vector and soa_view in host space: field reflection, column layout, named and positional
// element access, the vector operations and their guarantees. Plain host compiler, no GPU.
#include <coalesce/soa.hpp>
#include <coalesce/soa_span.hpp>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace physics {
struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

struct Body {
  double mass;
  int id;
};

template <class T>
struct Vec3 {
  T x, y, z;
};
COALESCE_TEMPLATE_FIELDS((class T), Vec3<T>, x, y, z)  // no semicolon: the macro takes one or none

template <class A, class B>
struct Pair {
  A first;
  B second;
};
}  // namespace physics

namespace physics {
struct Imported {
  float a, b;
};
}  // namespace physics

// At global scope, with a qualified name (and a type with a comma, in parentheses), or through a
// using-declaration.
COALESCE_FIELDS(physics::Body, mass, id);
using physics::Imported;
COALESCE_FIELDS(Imported, a, b);
COALESCE_TEMPLATE_FIELDS((class A, class B), (physics::Pair<A, B>), first, second);

namespace {

using coalesce::host_space;
using coalesce::soa_vector;
using physics::Particle;

struct Mixed {
  double d;
  std::int8_t c;
  float f;
  std::int16_t s;
};

struct WithDefaults {
  int id = 7;
  float weight = 1.5f;
};

struct Twenty {
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19;
};

template <class T>
using host_soa = soa_vector<T, host_space>;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The user's code, written once for an array of structs; it also compiles for a soa_view.
template <class Particles>
void advance(Particles p, std::size_t n, float dt) {
  for (std::size_t i = 0; i < n; ++i) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

std::vector<Particle> some_particles(std::size_t n) {
  std::vector<Particle> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = float(i);
    v[i] = Particle{f, 2 * f, 3 * f, 0.5f * f, -f, 1.0f};
  }
  return v;
}

bool same_elements(const std::vector<Particle>& a, const std::vector<Particle>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Particle& p, const Particle& q) {
           return p.x == q.x && p.y == q.y && p.z == q.z && p.vx == q.vx && p.vy == q.vy && p.vz == q.vz;
         });
}

}  // namespace

TEST_CASE("fields of a plain aggregate are found without a macro") {
  static_assert(coalesce::field_count_v<Particle> == 6);
  static_assert(coalesce::field_count_v<Mixed> == 4);
  static_assert(coalesce::field_count_v<Twenty> == 20);
  static_assert(std::is_same_v<coalesce::field_t<Mixed, 0>, double>);
  static_assert(std::is_same_v<coalesce::field_t<Mixed, 1>, std::int8_t>);
  static_assert(std::is_same_v<coalesce::field_t<Mixed, 3>, std::int16_t>);
  Mixed m{1.5, 2, 3.5f, 4};
  coalesce::get<2>(m) = 9.0f;
  REQUIRE(m.f == 9.0f);
  REQUIRE(coalesce::get<3>(m) == 4);
}

TEST_CASE("every column starts on a 256-byte boundary in one allocation") {
  host_soa<Mixed> v(1000);
  const auto view = v.view();
  const std::uintptr_t c0 = address(view.column<0>()), c1 = address(view.column<1>()), c2 = address(view.column<2>()),
                       c3 = address(view.column<3>());
  for (auto c : {c0, c1, c2, c3}) REQUIRE(c % 256 == 0);
  REQUIRE(c1 - c0 == 8192);  // 1000 doubles = 8000 B, padded to 8192
  REQUIRE(c2 - c1 == 1024);  // 1000 bytes, padded to 1024
  REQUIRE(c3 - c2 == 4096);  // 1000 floats = 4000 B, padded to 4096
  REQUIRE(v.allocated_bytes() == 8192 + 1024 + 4096 + 2048);
  REQUIRE(view.column<&Mixed::f>() == view.column<2>());
  REQUIRE(view.column<&Mixed::d>() == view.column<0>());
  REQUIRE(coalesce::column_span<&Mixed::s>(view).size() == 1000);
  REQUIRE(coalesce::column_span<1>(view).data() == view.column<1>());
}

TEST_CASE("view[i] gathers to T, scatters from T, and get<I> reaches one column") {
  host_soa<Mixed> v(std::vector<Mixed>{{1.0, 1, 1.0f, 1}, {2.0, 2, 2.0f, 2}, {3.0, 3, 3.0f, 3}});
  auto view = v.view();
  const Mixed second = view[1];
  REQUIRE(second.d == 2.0);
  REQUIRE(second.s == 2);
  view[2] = Mixed{30.0, 31, 32.0f, 33};
  REQUIRE(view.column<0>()[2] == 30.0);
  REQUIRE(view.column<3>()[2] == 33);
  coalesce::get<2>(view[0]) = -1.0f;
  REQUIRE(view.column<2>()[0] == -1.0f);
  view[0] = view[2];  // assigning one element to another copies the values
  REQUIRE(static_cast<Mixed>(view[0]).c == 31);
  const coalesce::soa_view<const Mixed, host_space> read_only = view;
  REQUIRE(coalesce::get<0>(read_only[1]) == 2.0);
  // The memory space is part of the view's type: host columns never pass for device columns.
  static_assert(std::is_same_v<decltype(view), coalesce::soa_view<Mixed, host_space>>);
  static_assert(!std::is_convertible_v<coalesce::soa_view<Mixed, host_space>, coalesce::soa_view<Mixed>>);
  static_assert(std::is_same_v<soa_vector<Mixed>::view_type, coalesce::soa_view<Mixed, coalesce::device_space>>);
}

TEST_CASE("subview(first, count) is elements first .. first + count - 1 of every column, writable and read-only") {
  std::vector<Mixed> rows(37);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i] = Mixed{double(i), std::int8_t(i), float(i) / 2, std::int16_t(-std::int16_t(i))};
  host_soa<Mixed> v(rows);
  const auto view = v.view();
  for (const auto& [first, count] : {std::pair<std::size_t, std::size_t>{0, 37}, {1, 35}, {5, 0}, {36, 1}, {37, 0}}) {
    INFO("subview(" << first << ", " << count << ")");
    const auto part = view.subview(first, count);
    REQUIRE(part.size() == count);
    // Every column moves on by `first` of its own elements.
    CHECK(address(part.column<0>()) == address(view.column<0>()) + first * sizeof(double));
    CHECK(address(part.column<1>()) == address(view.column<1>()) + first * sizeof(std::int8_t));
    CHECK(address(part.column<2>()) == address(view.column<2>()) + first * sizeof(float));
    CHECK(address(part.column<3>()) == address(view.column<3>()) + first * sizeof(std::int16_t));
    for (std::size_t i = 0; i < count; ++i) {
      const Mixed m = part[i];
      CHECK(m.d == double(first + i));
      CHECK(m.s == -std::int16_t(first + i));
    }
    CHECK(view.subview(first).size() == 37 - first);
  }
  // Writes through a subview land in the vector; a read-only view's subview is read-only.
  view.subview(10, 3)[1] = Mixed{-1.0, -1, -1.0f, -1};
  CHECK(static_cast<Mixed>(view[11]).d == -1.0);
  CHECK(static_cast<Mixed>(view[10]).d == 10.0);
  const coalesce::soa_view<const Mixed, host_space> read_only = view;
  static_assert(std::is_same_v<decltype(read_only.subview(1, 2)), coalesce::soa_view<const Mixed, host_space>>);
  CHECK(coalesce::get<0>(read_only.subview(11, 1)[0]) == -1.0);
}

TEST_CASE("after COALESCE_FIELDS, view[i].x is a reference into the x column") {
  host_soa<Particle> v(some_particles(4));
  auto view = v.view();
  view[1].x = 100.0f;
  REQUIRE(view.column<&Particle::x>()[1] == 100.0f);
  view[2].vz += 5.0f;
  REQUIRE(view.column<5>()[2] == 6.0f);
  REQUIRE(&view[3].y == view.column<1>() + 3);
  const Particle p = view[1];
  REQUIRE(p.x == 100.0f);
  REQUIRE(coalesce::get<0>(view[1]) == 100.0f);
}

TEST_CASE(
    "COALESCE_FIELDS names fields of qualified, template and comma-separated types, with or without its semicolon") {
  soa_vector<physics::Body, host_space> bodies(2);
  bodies[1].mass = 2.5;
  bodies[1].id = 7;
  REQUIRE(bodies.to_vector()[1].mass == 2.5);
  REQUIRE(bodies.to_vector()[1].id == 7);
  REQUIRE(&bodies[1].id == bodies.view().column<&physics::Body::id>() + 1);

  soa_vector<physics::Vec3<double>, host_space> positions(3);
  positions[2].z = 4.0;
  positions[2].x = positions[2].z * 2;
  REQUIRE(positions.to_vector()[2].x == 8.0);
  REQUIRE(&positions[2].z == positions.view().column<2>() + 2);

  soa_vector<physics::Imported, host_space> imported(1);
  imported[0].b = 3.0f;
  REQUIRE(imported.to_vector()[0].b == 3.0f);

  soa_vector<physics::Pair<int, float>, host_space> pairs(1);
  pairs[0].second = 0.25f;
  REQUIRE(pairs.to_vector()[0].second == 0.25f);

  // The read-only proxy reads and cannot be assigned.
  const auto& read_only = positions;
  REQUIRE(read_only[2].x == 8.0);
  static_assert(!std::is_assignable_v<decltype(read_only[2].x), double>);
  static_assert(!std::is_assignable_v<decltype(read_only[2]), physics::Vec3<double>>);
}

TEST_CASE("one function template runs on Particle* and on soa_view<Particle> with identical results") {
  auto aos = some_particles(257);
  host_soa<Particle> soa(aos);
  advance(aos.data(), aos.size(), 0.25f);
  advance(soa.view(), soa.size(), 0.25f);
  const auto back = soa.to_vector();
  for (std::size_t i = 0; i < aos.size(); ++i) {
    REQUIRE(back[i].x == aos[i].x);
    REQUIRE(back[i].y == aos[i].y);
    REQUIRE(back[i].z == aos[i].z);
    REQUIRE(back[i].vx == aos[i].vx);
  }
}

TEST_CASE("push_back, reserve and resize keep the contents; new elements are T{}") {
  host_soa<WithDefaults> v;
  REQUIRE(v.empty());
  for (int i = 0; i < 40; ++i) v.push_back({i, float(i) / 2});
  REQUIRE(v.size() == 40);
  REQUIRE(v.capacity() >= 40);
  v.reserve(1000);
  REQUIRE(v.capacity() == 1000);
  REQUIRE(static_cast<WithDefaults>(v[39]).id == 39);
  v.resize(45);
  REQUIRE(static_cast<WithDefaults>(v[44]).id == 7);  // default member initializers, not zero
  REQUIRE(static_cast<WithDefaults>(v[44]).weight == 1.5f);
  REQUIRE(static_cast<WithDefaults>(v[10]).weight == 5.0f);
  v.resize(3);
  REQUIRE(v.size() == 3);
  REQUIRE(v.capacity() == 1000);
  v.clear();
  REQUIRE(v.empty());
}

TEST_CASE("copies are deep, moves steal, swap exchanges") {
  host_soa<Particle> a(some_particles(10));
  host_soa<Particle> b = a;
  b[0].x = -5.0f;
  REQUIRE(a[0].x == 0.0f);
  const float* storage = a.view().column<0>();
  host_soa<Particle> c = std::move(a);
  REQUIRE(c.view().column<0>() == storage);
  b = c;
  REQUIRE(b[0].x == 0.0f);
  swap(b, c);
  REQUIRE(b.view().column<0>() == storage);
}

TEST_CASE("iterators walk the elements with standard algorithms") {
  host_soa<Particle> v(some_particles(100));
  const auto view = v.view();
  const float sum = std::accumulate(view.begin(), view.end(), 0.0f, [](float s, const Particle& p) { return s + p.x; });
  REQUIRE(sum == 4950.0f);
  REQUIRE(std::count_if(v.begin(), v.end(), [](const Particle& p) { return p.vx > 10.0f; }) == 79);
  REQUIRE(v.end() - v.begin() == 100);
  std::vector<float> xs(100);
  std::transform(view.begin(), view.end(), xs.begin(), [](const Particle& p) { return p.x; });
  REQUIRE(xs[99] == 99.0f);
}

TEST_CASE("proxies swap, and standard algorithms sort, reverse and rotate through them") {
  auto particles = some_particles(200);
  std::reverse(particles.begin(), particles.end());
  std::rotate(particles.begin(), particles.begin() + 37, particles.end());
  host_soa<Particle> v(particles);
  auto view = v.view();

  // swap and std::iter_swap exchange whole elements, every column.
  swap(view[0], view[1]);
  std::swap(particles[0], particles[1]);
  std::iter_swap(view.begin() + 5, view.begin() + 150);
  std::iter_swap(particles.begin() + 5, particles.begin() + 150);
  REQUIRE(same_elements(v.to_vector(), particles));

  // std::sort moves values out (value_type), proxies into proxies, and swaps through them.
  const auto by_x = [](const auto& a, const auto& b) { return a.x < b.x; };
  std::sort(view.begin(), view.end(), by_x);
  std::sort(particles.begin(), particles.end(), by_x);
  REQUIRE(same_elements(v.to_vector(), particles));
  REQUIRE(std::is_sorted(view.begin(), view.end(), by_x));
  std::stable_sort(view.begin(), view.end(), [](const auto& a, const auto& b) { return a.vx > b.vx; });
  REQUIRE(std::is_sorted(view.begin(), view.end(), [](const auto& a, const auto& b) { return a.vx > b.vx; }));
  std::reverse(view.begin(), view.end());
  REQUIRE(std::is_sorted(view.begin(), view.end(), [](const auto& a, const auto& b) { return a.vx < b.vx; }));

  // Without COALESCE_FIELDS, through get<I>: the positional proxy swaps too.
  host_soa<Mixed> mixed(std::vector<Mixed>{{1.0, 1, 1.5f, 10}, {2.0, 2, 2.5f, 20}, {3.0, 3, 3.5f, 30}});
  auto m = mixed.view();
  swap(m[0], m[2]);
  REQUIRE(coalesce::get<3>(m[0]) == 30);
  REQUIRE(coalesce::get<3>(m[2]) == 10);
  std::sort(m.begin(), m.end(), [](const auto& l, const auto& r) { return coalesce::get<0>(l) < coalesce::get<0>(r); });
  REQUIRE(coalesce::get<3>(m[0]) == 10);
  REQUIRE(coalesce::get<2>(m[1]) == 2.5f);
  REQUIRE(coalesce::get<3>(m[2]) == 30);
}

TEST_CASE("auto copies a proxy, which still writes the columns; coalesce::value copies the element") {
  host_soa<Particle> v(some_particles(3));
  auto view = v.view();
  auto alias = view[1];  // a proxy: a reference to element 1
  alias.x = 500.0f;
  REQUIRE(view[1].x == 500.0f);
  auto copy = coalesce::value(view[2]);  // a Particle
  static_assert(std::is_same_v<decltype(copy), Particle>);
  copy.x = 600.0f;
  REQUIRE(view[2].x != 600.0f);
  const Particle plain = coalesce::value(copy);  // anything else: a copy
  REQUIRE(plain.x == 600.0f);
  // The documented swap of two elements through values.
  const Particle first = coalesce::value(view[0]);
  view[0] = view[1];
  view[1] = first;
  REQUIRE(view[0].x == 500.0f);
  REQUIRE(view[1].x == first.x);
}

TEST_CASE("assign between vectors of different sizes says so and changes nothing") {
  host_soa<Particle> a(some_particles(3)), b(some_particles(4));
  try {
    b.assign(a);
    FAIL("assign of a different size did not throw");
  } catch (const std::invalid_argument& e) {
    REQUIRE(std::string(e.what()).find("3 elements but the destination 4") != std::string::npos);
  }
  REQUIRE(b.to_vector()[3].x == 3.0f);
  host_soa<Particle> c(3);
  c.assign(a);
  REQUIRE(c.to_vector()[2].y == 4.0f);
}

namespace {
// Host memory that says it is page-locked, so that assign_async accepts it with no GPU to pin it.
struct said_pinned_resource : coalesce::host_resource {
  static constexpr bool pinned = true;
};
}  // namespace

TEST_CASE("a device vector's stream is its resource's, where its copies and algorithms are ordered") {
  const auto stream = reinterpret_cast<cudaStream_t>(std::uintptr_t(0x1000));  // never used: nothing is allocated
  const soa_vector<Particle> on_device{coalesce::pool_resource(stream)};
  REQUIRE(on_device.stream() == stream);
  REQUIRE(soa_vector<Particle>().stream() == cudaStream_t{});
  REQUIRE(host_soa<Particle>().stream() == cudaStream_t{});
}

TEST_CASE("assign_async between vectors of different sizes says so before it copies anything") {
  using pinned_soa = soa_vector<Particle, host_space, said_pinned_resource>;
  const pinned_soa on_host(some_particles(3));
  soa_vector<Particle> on_device;  // empty: no allocation, no GPU needed
  try {
    on_device.assign_async(on_host);
    FAIL("assign_async of a different size did not throw");
  } catch (const std::invalid_argument& e) {
    REQUIRE(std::string(e.what()) ==
            "coalesce::soa_vector::assign_async: the source has 3 elements but the destination 0; resize first or "
            "construct a new vector");
  }
  pinned_soa back(2);
  REQUIRE_THROWS_AS(back.assign_async(on_device), std::invalid_argument);
  pinned_soa empty;
  empty.assign_async(on_device);  // nothing to copy: returns without a CUDA call
  REQUIRE(empty.empty());
}

TEST_CASE("a size whose bytes overflow size_t is a length_error") {
  host_soa<Particle> v;
  REQUIRE_THROWS_AS(v.reserve(std::size_t(1) << 62), std::length_error);
  REQUIRE_THROWS_AS(v.resize(std::size_t(-1) / 2), std::length_error);
  REQUIRE(v.capacity() == 0);
}

TEST_CASE("a failed allocation leaves the vector unchanged and leaks nothing") {
  using flaky = soa_vector<Particle, host_space, coalesce_test::flaky_host_resource>;
  {
    flaky v(some_particles(20));
    REQUIRE(coalesce_test::flaky_host_resource::outstanding == 1);
    coalesce_test::flaky_host_resource::fail_next = true;
    REQUIRE_THROWS_AS(v.reserve(10000), std::bad_alloc);
    REQUIRE(v.size() == 20);
    REQUIRE(v.capacity() == 20);
    REQUIRE(v.to_vector()[19].y == 38.0f);
    coalesce_test::flaky_host_resource::fail_next = true;
    REQUIRE_THROWS_AS(v.push_back(Particle{}), std::bad_alloc);
    REQUIRE(v.size() == 20);
  }
  REQUIRE(coalesce_test::flaky_host_resource::outstanding == 0);
}

TEST_CASE("views are trivially copyable and carry one pointer per field") {
  static_assert(std::is_trivially_copyable_v<coalesce::soa_view<Particle>>);
  static_assert(sizeof(coalesce::soa_view<Particle>) == 6 * sizeof(void*) + sizeof(std::size_t));
  static_assert(std::is_trivially_copyable_v<coalesce::soa_view<const Twenty>>);
}
