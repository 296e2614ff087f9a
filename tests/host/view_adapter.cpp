// view_adapter: what coalesce's algorithms walk for a cuda::std::mdspan and for a type of the
// user's. Only the views' shapes are checked here (no GPU); tests/device/algorithm.cu walks them.
#include <coalesce/view_adapter.hpp>

#include "coalesce_test.hpp"

#include <cuda/std/mdspan>

#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

struct my_grid {
  float* data;
  std::size_t nx, ny, row_bytes;
};

}  // namespace

template <>
struct coalesce::view_adapter<my_grid> {
  static coalesce::pitched_view<float> adapt(const my_grid& g) { return {g.data, g.ny, g.nx, g.row_bytes}; }
};

using extents_2d = cuda::std::dextents<std::size_t, 2>;
using extents_1d = cuda::std::dextents<std::size_t, 1>;

TEST_CASE("a rank-2 layout_right mdspan is walked as rows, its row stride the pitch") {
  std::vector<float> storage(6 * 10);
  cuda::std::mdspan<float, extents_2d> m(storage.data(), 6, 10);
  const auto v = coalesce::detail::as_walkable(m);
  static_assert(std::is_same_v<decltype(v), const coalesce::pitched_view<float>>);
  REQUIRE(v.data() == storage.data());
  REQUIRE(v.rows() == 6);
  REQUIRE(v.cols() == 10);
  REQUIRE(v.pitch_bytes() == 10 * sizeof(float));
}

TEST_CASE("a layout_stride mdspan with padded rows keeps its padding as the pitch") {
  std::vector<double> storage(4 * 32);
  using mapping = cuda::std::layout_stride::mapping<extents_2d>;
  const cuda::std::array<std::size_t, 2> strides{32, 1};
  cuda::std::mdspan<double, extents_2d, cuda::std::layout_stride> m(storage.data(),
                                                                    mapping(extents_2d(4, 30), strides));
  const auto v = coalesce::detail::as_walkable(m);
  REQUIRE(v.rows() == 4);
  REQUIRE(v.cols() == 30);
  REQUIRE(v.pitch_bytes() == 32 * sizeof(double));
}

TEST_CASE("rank 1: contiguous layouts become a span, a strided one rows of one element") {
  std::vector<int> storage(100);
  cuda::std::mdspan<int, extents_1d> contiguous(storage.data(), 100);
  const auto s = coalesce::detail::as_walkable(contiguous);
  static_assert(std::is_same_v<decltype(s), const cuda::std::span<int>>);
  REQUIRE(s.size() == 100);

  using mapping = cuda::std::layout_stride::mapping<extents_1d>;
  cuda::std::mdspan<int, extents_1d, cuda::std::layout_stride> column(
      storage.data(), mapping(extents_1d(25), cuda::std::array<std::size_t, 1>{4}));
  const auto c = coalesce::detail::as_walkable(column);
  REQUIRE(c.rows() == 25);
  REQUIRE(c.cols() == 1);
  REQUIRE(c.pitch_bytes() == 4 * sizeof(int));

  cuda::std::mdspan<int, extents_1d, cuda::std::layout_stride> unit(
      storage.data(), mapping(extents_1d(100), cuda::std::array<std::size_t, 1>{1}));
  const auto u = coalesce::detail::as_walkable(unit);
  REQUIRE(u.rows() == 1);
  REQUIRE(u.cols() == 100);
}

TEST_CASE("an mdspan whose last index is not the contiguous one is refused with a reason") {
  std::vector<float> storage(8 * 8);
  cuda::std::mdspan<float, extents_2d, cuda::std::layout_left> m(storage.data(), 8, 8);
  REQUIRE_THROWS_AS(coalesce::detail::as_walkable(m), std::invalid_argument);
}

TEST_CASE("a type of the user's is walkable through its view_adapter; the views themselves pass as they are") {
  std::vector<float> storage(3 * 64);
  const my_grid g{storage.data(), 50, 3, 64 * sizeof(float)};
  static_assert(coalesce::detail::has_view_adapter<my_grid>::value);
  const auto v = coalesce::detail::as_walkable(g);
  REQUIRE(v.rows() == 3);
  REQUIRE(v.cols() == 50);
  REQUIRE(v.pitch_bytes() == 256);
  static_assert(!coalesce::detail::has_view_adapter<coalesce::pitched_view<float>>::value);
  static_assert(!coalesce::detail::has_view_adapter<cuda::std::span<float>>::value);
}
