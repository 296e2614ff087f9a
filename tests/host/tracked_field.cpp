// coalesce::tracked_field and the element for_each hands f (for_each_reference_t): which leaves
// f overwrote (wrote before reading the value the column held), the only ones the walk stores
// without comparing to, or loading, their old values. Every way f can read or write a field is
// tried on the host, where the proxy and its notes are the same code as on the device (the walk
// runs make_reference<tracked<T>> over tracked_leaves, both host-capable). Plain host compiler.
#include <coalesce/detail/make_reference.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/tracked_field.hpp>

#include "coalesce_test.hpp"

#include <array>
#include <type_traits>

namespace {

enum class phase : unsigned char { gas, liquid };
struct Vec3 {
  float x, y, z;
};

}  // namespace

template <>
struct coalesce::keep_whole<Vec3> : std::true_type {};

namespace {

struct Cell {
  float a, b, c;
  int k;
  phase state;
  Vec3 p;  // kept whole: a plain reference, never counted as overwritten
};
COALESCE_FIELDS(Cell, a, b, c, k, state, p);

constexpr std::size_t leaves = coalesce::leaf_count_v<Cell>;
static_assert(leaves == 6);

struct outcome {
  Cell after;
  std::array<bool, leaves> overwritten;
};

// f on an element loaded as `before`, as the walk runs it: what it leaves, and which leaves it
// overwrote.
template <class F>
outcome run(const Cell& before, F&& f) {
  coalesce::detail::tracked_leaves<Cell> held(before);
  f(coalesce::detail::make_reference<coalesce::detail::tracked<Cell>>(coalesce::detail::tracked_source<Cell>{held}));
  outcome o{};
  bool overwritten[leaves];
  held.give(o.after, overwritten);
  for (std::size_t l = 0; l < leaves; ++l) o.overwritten[l] = overwritten[l];
  return o;
}

const Cell start{1.0f, 2.0f, 3.0f, 4, phase::gas, {5.0f, 6.0f, 7.0f}};
constexpr std::array<bool, leaves> only(std::size_t leaf) {
  std::array<bool, leaves> o{};
  o[leaf] = true;
  return o;
}
constexpr std::array<bool, leaves> none{};

static_assert(
    std::is_same_v<decltype(std::declval<coalesce::for_each_reference_t<Cell>>().a), coalesce::tracked_field<float>&>);
static_assert(std::is_same_v<decltype(std::declval<coalesce::for_each_reference_t<Cell>>().p), Vec3&>);

}  // namespace

TEST_CASE("a field f writes without reading first is overwritten; one it reads is not") {
  auto copy = run(start, [](auto e) { e.c = e.a; });  // BabelStream's Copy
  CHECK(copy.after.c == 1.0f);
  CHECK(copy.overwritten == only(2));

  auto add = run(start, [](auto e) { e.c = e.a + e.b; });
  CHECK(add.after.c == 3.0f);
  CHECK(add.overwritten == only(2));

  auto accumulate = run(start, [](auto e) { e.c += e.a; });
  CHECK(accumulate.after.c == 4.0f);
  CHECK(accumulate.overwritten == none);

  auto read_first = run(start, [](auto e) {
    const float old = e.c;
    e.c = old * 2;
  });
  CHECK(read_first.after.c == 6.0f);
  CHECK(read_first.overwritten == none);

  auto written_then_read = run(start, [](auto e) {
    e.c = 10.0f;
    e.b = e.c + 1;  // reads f's own value, not the column's
  });
  CHECK(written_then_read.after.c == 10.0f);
  CHECK(written_then_read.after.b == 11.0f);
  CHECK(written_then_read.overwritten == std::array<bool, leaves>{false, true, true, false, false, false});
}

TEST_CASE("every way of reading a field counts: references, addresses, copies, increments") {
  auto by_reference = run(start, [](auto e) {
    float& r = e.b;
    r = 8.0f;
  });
  CHECK(by_reference.after.b == 8.0f);
  CHECK(by_reference.overwritten == none);  // r could have read b: compared, as before

  auto by_address = run(start, [](auto e) { *&e.b = 9.0f; });
  CHECK(by_address.after.b == 9.0f);
  CHECK(by_address.overwritten == none);

  auto clamped = run(start, [](auto e) { e.c = e.a > 1.5f ? e.a : 0.0f; });
  CHECK(clamped.after.c == 0.0f);
  CHECK(clamped.overwritten == only(2));

  auto increments = run(start, [](auto e) {
    ++e.k;
    e.k++;
    e.a -= 1;
  });
  CHECK(increments.after.k == 6);
  CHECK(increments.after.a == 0.0f);
  CHECK(increments.overwritten == none);

  // A copy is a value of its own, as a float's copy is: writing it leaves the element alone.
  auto copied = run(start, [](auto e) {
    auto x = e.c;
    x = 100.0f;
    e.a = x;
  });
  CHECK(copied.after.c == 3.0f);
  CHECK(copied.after.a == 100.0f);
  CHECK(copied.overwritten == only(0));
}

TEST_CASE("a write on a condition not taken leaves the field as loaded and not overwritten") {
  for (const bool take : {false, true}) {
    auto o = run(start, [take](auto e) {
      if (take) e.c = 0.5f;
    });
    CHECK(o.after.c == (take ? 0.5f : 3.0f));
    CHECK(o.overwritten == (take ? only(2) : none));
  }
}

TEST_CASE("assigning a whole element overwrites every tracked leaf; a leaf kept whole is always compared") {
  auto whole = run(start, [](auto e) { e = Cell{9.0f, 8.0f, 7.0f, 6, phase::liquid, {1.0f, 1.0f, 1.0f}}; });
  CHECK(whole.after.a == 9.0f);
  CHECK(whole.after.state == phase::liquid);
  CHECK(whole.after.p.z == 1.0f);
  CHECK(whole.overwritten == std::array<bool, leaves>{true, true, true, true, true, false});

  auto enum_field = run(start, [](auto e) { e.state = phase::liquid; });
  CHECK(enum_field.overwritten == only(4));

  auto kept_whole = run(start, [](auto e) { e.p.x = 2.5f; });
  CHECK(kept_whole.after.p.x == 2.5f);
  CHECK(kept_whole.overwritten == none);
}

TEST_CASE("f declared to take soa_reference_t gets the element through a conversion that compares every field") {
  auto named = run(start, [](coalesce::soa_reference_t<Cell> e) {
    e.c = e.a;
    e.k = 11;
  });
  CHECK(named.after.c == 1.0f);
  CHECK(named.after.k == 11);
  CHECK(named.overwritten == none);
  auto value = run(start, [](auto e) {
    const Cell v = e;  // coalesce::value(e) as well
    e.b = v.a + coalesce::value(e).c;
  });
  CHECK(value.after.b == 4.0f);
  CHECK(value.overwritten == none);  // the gather read b first
}

TEST_CASE("tracked_field reads and assigns like the number it holds") {
  coalesce::tracked_field<int> t(3);
  t = t * 2 + 1;
  CHECK(int(t) == 7);
  t <<= 1;
  t |= 1;
  t %= 10;
  CHECK(int(t) == 5);
  const int old = t++;
  CHECK(old == 5);
  CHECK(int(t) == 6);
  coalesce::tracked_field<double> d(1.5);
  d = d + t;  // a tracked_field<int> converts as an int would
  CHECK(double(d) == 7.5);
  CHECK(!d.overwritten());  // d read itself before its first write
  // A conditional with a number on one side is of the number's type.
  for (const bool take : {false, true}) {
    const float picked = take ? coalesce::tracked_field<float>(2.0f) : 0.5f;
    const double wider = take ? d : 0.25;
    CHECK(picked == (take ? 2.0f : 0.5f));
    CHECK(wider == (take ? 7.5 : 0.25));
  }
}
