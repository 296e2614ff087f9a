// soa_vector of records as they are in real codes (issue 32): 64 and 32 fields, and a field whose
// type is bitwise copyable only by coalesce::is_bitwise_copyable (a class like Eigen::Vector3d).
// Plain host compiler, no GPU.
#include <coalesce/soa.hpp>

#include "coalesce_test.hpp"
#include "many_fields.hpp"

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using coalesce::host_space;
using coalesce::soa_vector;
using coalesce_test::many_field_type;
using coalesce_test::many_field_value;

// Whether every column L of `view` has the type of field L and holds field L's value for every
// element: the columns checked against what the records were filled with by name.
template <class View, std::size_t... L>
bool columns_hold_field_values(const View& view, std::index_sequence<L...>) {
  using T = typename View::value_type;
  static_assert((std::is_same_v<coalesce::leaf_t<T, L>, many_field_type<L>> && ...),
                "column L must have the type of field L");
  bool exact = true;
  for (std::size_t i = 0; i < view.size(); ++i)
    exact = exact && ((view.template leaf_column<L>()[i] == many_field_value<L>(i)) && ...);
  return exact;
}

// Whether get<L>(view[i]) reads field L's value for every element and field.
template <class View, std::size_t... L>
bool elements_hold_field_values(const View& view, std::index_sequence<L...>) {
  bool exact = true;
  for (std::size_t i = 0; i < view.size(); ++i)
    exact = exact && ((coalesce::get<L>(view[i]) == many_field_value<L>(i)) && ...);
  return exact;
}

template <class T>
std::vector<T> records(std::size_t n, T (*make)(std::size_t)) {
  std::vector<T> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(make(i));
  return v;
}

TEST_CASE("a record of 64 fields is 64 columns, one per field in declaration order") {
  STATIC_REQUIRE(coalesce::field_count_v<event64> == 64);
  STATIC_REQUIRE(coalesce::leaf_count_v<event64> == 64);
  STATIC_REQUIRE(soa_vector<event64, host_space>::leaf_count == 64);
  // The member named last is the last column, and one in the middle is where its position says.
  STATIC_REQUIRE(
      std::is_same_v<decltype(std::declval<coalesce::soa_view<event64, host_space>>().column<&event64::h7>()), float*>);
  soa_vector<event64, host_space> v(records<event64>(3, make_event64));
  REQUIRE(v.view().column<&event64::h7>() == v.view().leaf_column<63>());
  REQUIRE(v.view().column<&event64::e3>() == v.view().leaf_column<4 * 8 + 3>());
}

TEST_CASE("a record of 64 fields round-trips through soa_vector<T, host_space>, every column exact") {
  const std::size_t n = 7;
  const auto aos = records<event64>(n, make_event64);
  soa_vector<event64, host_space> v(aos);
  REQUIRE(v.size() == n);
  REQUIRE(columns_hold_field_values(v.const_view(), std::make_index_sequence<64>{}));
  REQUIRE(elements_hold_field_values(v.view(), std::make_index_sequence<64>{}));
  const auto back = v.to_vector();
  REQUIRE(back.size() == n);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(same_event64(back[i], aos[i]));
}

TEST_CASE("the named fields of a 64-field record are references into their columns") {
  soa_vector<event64, host_space> v(records<event64>(4, make_event64));
  const auto view = v.view();
  view[2].h7 = 1.25f;
  view[3].a0 = -2.5;
  REQUIRE(view.leaf_column<63>()[2] == 1.25f);
  REQUIRE(view.leaf_column<0>()[3] == -2.5);
  REQUIRE(view[1].d4 == many_field_value<3 * 8 + 4>(1));
  // Every other column is as it was.
  event64 expected = make_event64(2);
  expected.h7 = 1.25f;
  REQUIRE(same_event64(view[2], expected));
}

TEST_CASE("a record of 32 fields without COALESCE_FIELDS round-trips through soa_vector<T, host_space>") {
  STATIC_REQUIRE(coalesce::field_count_v<event32> == 32);
  STATIC_REQUIRE(coalesce::leaf_count_v<event32> == 32);
  const std::size_t n = 5;
  const auto aos = records<event32>(n, make_event32);
  soa_vector<event32, host_space> v(aos);
  REQUIRE(columns_hold_field_values(v.const_view(), std::make_index_sequence<32>{}));
  REQUIRE(elements_hold_field_values(v.view(), std::make_index_sequence<32>{}));
  const auto back = v.to_vector();
  for (std::size_t i = 0; i < n; ++i) REQUIRE(same_event32(back[i], aos[i]));
}

TEST_CASE("is_bitwise_copyable is true for trivially copyable types and for types specialized, false otherwise") {
  struct plain {
    float x;
    int y[2];
  };
  // Like vector3d, but without the specialization.
  class unspecialized {
   public:
    unspecialized() = default;
    unspecialized(const unspecialized& other) : x_(other.x_) {}

   private:
    double x_ = 0;
  };
  STATIC_REQUIRE(coalesce::is_bitwise_copyable_v<float>);
  STATIC_REQUIRE(coalesce::is_bitwise_copyable_v<plain>);
  STATIC_REQUIRE(!std::is_trivially_copyable_v<vector3d>);
  STATIC_REQUIRE(coalesce::is_bitwise_copyable_v<vector3d>);
  STATIC_REQUIRE(!coalesce::is_bitwise_copyable_v<unspecialized>);
  STATIC_REQUIRE(!coalesce::is_bitwise_copyable_v<std::string>);
  STATIC_REQUIRE(!coalesce::is_bitwise_copyable_v<float&>);
}

TEST_CASE("a field bitwise copyable by specialization is one column of its type") {
  STATIC_REQUIRE(coalesce::field_count_v<track> == 3);
  STATIC_REQUIRE(coalesce::leaf_count_v<track> == 3);
  STATIC_REQUIRE(std::is_same_v<coalesce::leaf_t<track, 1>, vector3d>);
  soa_vector<track, host_space> v(records<track>(2, make_track));
  const auto view = v.view();
  STATIC_REQUIRE(std::is_same_v<decltype(view.column<&track::momentum>()), vector3d*>);
  REQUIRE(view.column<&track::momentum>() == static_cast<vector3d*>(view.columns()[1]));
  STATIC_REQUIRE(std::is_same_v<decltype(view[0].momentum), vector3d&>);
}

TEST_CASE("a record with a field bitwise copyable by specialization round-trips, copies and assigns exactly") {
  const std::size_t n = 9;
  const auto aos = records<track>(n, make_track);
  soa_vector<track, host_space> v(aos);
  const vector3d* momentum = v.const_view().column<&track::momentum>();
  for (std::size_t i = 0; i < n; ++i) REQUIRE(same_vector3d(momentum[i], aos[i].momentum));

  // A copy of the vector copies the column's bytes.
  const soa_vector<track, host_space> copy(v);
  auto back = copy.to_vector();
  REQUIRE(back.size() == n);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(same_track(back[i], aos[i]));

  // Assignment through the proxy, of the field and of the whole element, reaches the column.
  v.view()[4].momentum = vector3d(7.0, 8.0, 9.0);
  v.view()[5] = make_track(100);
  back = v.to_vector();
  REQUIRE(same_vector3d(back[4].momentum, vector3d(7.0, 8.0, 9.0)));
  REQUIRE(same_track(back[5], make_track(100)));
  for (std::size_t i = 0; i < n; ++i)
    if (i != 4 && i != 5) REQUIRE(same_track(back[i], aos[i]));
  REQUIRE(back[4].charge == aos[4].charge);
  REQUIRE(back[4].hits == aos[4].hits);
}

}  // namespace

// An aggregate that holds a vector3d is not itself bitwise copyable by any specialization: it
// splits into its leaves. Specialized itself, it stays one column. (In a named namespace: clang
// rejects COALESCE_FIELDS for a type without linkage that is not trivially copyable.)
namespace geometry {
struct frame {
  vector3d origin;
  float scale;
};
struct frame_whole {
  vector3d origin;
  float scale;
};
struct placed {
  frame where;
  std::int32_t id;
};
COALESCE_FIELDS(frame, origin, scale)
COALESCE_FIELDS(placed, where, id)
struct placed_whole {
  frame_whole where;
  std::int32_t id;
};
}  // namespace geometry

template <>
struct coalesce::is_bitwise_copyable<geometry::frame_whole> : std::true_type {};

namespace {

using geometry::frame_whole;
using geometry::placed;
using geometry::placed_whole;

TEST_CASE("an aggregate that holds a type bitwise copyable by specialization splits into its leaves") {
  STATIC_REQUIRE(coalesce::leaf_count_v<placed> == 3);
  STATIC_REQUIRE(std::is_same_v<coalesce::leaf_t<placed, 0>, vector3d>);
  STATIC_REQUIRE(std::is_same_v<coalesce::leaf_t<placed, 1>, float>);
  STATIC_REQUIRE(std::is_same_v<coalesce::leaf_t<placed, 2>, std::int32_t>);

  std::vector<placed> aos;
  for (std::size_t i = 0; i < 3; ++i)
    aos.push_back({{vector3d(double(i), 1.0, 2.0), float(i) + 0.5f}, std::int32_t(i)});
  soa_vector<placed, host_space> v(aos);
  REQUIRE(v.view()[2].where.scale == 2.5f);
  REQUIRE(same_vector3d(v.view()[2].where.origin, vector3d(2.0, 1.0, 2.0)));
  const auto back = v.to_vector();
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(same_vector3d(back[i].where.origin, aos[i].where.origin));
    REQUIRE(back[i].where.scale == aos[i].where.scale);
    REQUIRE(back[i].id == aos[i].id);
  }
}

TEST_CASE("an aggregate bitwise copyable by its own specialization stays one column of its type") {
  STATIC_REQUIRE(coalesce::leaf_count_v<placed_whole> == 2);
  STATIC_REQUIRE(std::is_same_v<coalesce::leaf_t<placed_whole, 0>, frame_whole>);
  std::vector<placed_whole> aos{{{vector3d(1.0, 2.0, 3.0), 4.5f}, 6}, {{vector3d(-1.0, -2.0, -3.0), -4.5f}, -6}};
  soa_vector<placed_whole, host_space> v(aos);
  const frame_whole* where = v.const_view().column<0>();
  REQUIRE(same_vector3d(where[1].origin, vector3d(-1.0, -2.0, -3.0)));
  REQUIRE(where[1].scale == -4.5f);
  REQUIRE(v.const_view().column<1>()[0] == 6);
}

}  // namespace
