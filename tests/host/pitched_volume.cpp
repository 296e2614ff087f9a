// pitched_volume and pitched_volume_view in host space: pitches, element addresses, blocks,
// slices, the rows as one matrix, mdspan interop and copies, with the plain host compiler and no
// GPU.
#include <coalesce/pitched_volume.hpp>

#include "coalesce_test.hpp"

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

using coalesce::host_space;

namespace {

template <class T, class Policy = coalesce::line_aligned_rows>
using host_volume = coalesce::pitched_volume<T, host_space, Policy>;

// Element (z, y, x) of a dense depth x height x width array, as the volume's dense order has it.
std::size_t dense_index(std::size_t z, std::size_t y, std::size_t x, std::size_t height, std::size_t width) {
  return (z * height + y) * width + x;
}

std::vector<float> counting(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

}  // namespace

TEST_CASE("a pitched_volume pads each row to 128 bytes and puts slices height rows apart") {
  const host_volume<float> v(3, 5, 1001);
  CHECK(v.depth() == 3);
  CHECK(v.height() == 5);
  CHECK(v.width() == 1001);
  CHECK(v.size() == 3u * 5u * 1001u);
  CHECK(v.pitch_bytes() == 4096);  // 4004 bytes rounded up to 128
  CHECK(v.slice_pitch_bytes() == 5u * 4096u);
  CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % 256 == 0);
  const auto view = v.view();
  for (std::size_t z = 0; z < 3; ++z)
    for (std::size_t y = 0; y < 5; ++y) {
      const auto row = reinterpret_cast<std::uintptr_t>(view.row(z, y));
      CHECK(row - reinterpret_cast<std::uintptr_t>(v.data()) == z * v.slice_pitch_bytes() + y * v.pitch_bytes());
      CHECK(row % 128 == 0);
    }
  for (float x : v.to_vector()) REQUIRE(x == 0.0f);  // new elements are zero
}

TEST_CASE("a pitched_volume from a dense array reads back element (z, y, x) where the dense order has it") {
  const std::size_t d = 4, h = 3, w = 37;
  const auto dense = counting(d * h * w);
  host_volume<float> v(dense, d, h, w);
  for (std::size_t z = 0; z < d; ++z)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) REQUIRE(v(z, y, x) == dense[dense_index(z, y, x, h, w)]);
  CHECK(v.to_vector() == dense);
  CHECK_THROWS_AS(host_volume<float>(dense, d, h, w + 1), std::invalid_argument);
}

TEST_CASE("blocks and slices of a volume view address the parent's elements") {
  const std::size_t d = 5, h = 6, w = 70;
  const auto dense = counting(d * h * w);
  host_volume<float> v(dense, d, h, w);
  const auto view = v.view();

  const auto b = view.block(1, 2, 3, 3, 4, 60);
  CHECK(b.depth() == 3);
  CHECK(b.height() == 4);
  CHECK(b.width() == 60);
  CHECK(b.pitch_bytes() == view.pitch_bytes());
  CHECK(b.slice_pitch_bytes() == view.slice_pitch_bytes());
  for (std::size_t z = 0; z < 3; ++z)
    for (std::size_t y = 0; y < 4; ++y)
      for (std::size_t x = 0; x < 60; ++x) REQUIRE(&b(z, y, x) == &view(z + 1, y + 2, x + 3));
  CHECK_FALSE(b.rows_are_one_matrix());  // cut in y
  CHECK(b.owned_row_bytes() == 60 * sizeof(float));  // ends before the parent's last x: owns no padding

  const auto whole_slices = view.block(1, 0, 0, 3, h, w);
  CHECK(whole_slices.rows_are_one_matrix());
  CHECK(whole_slices.owned_row_bytes() == view.pitch_bytes());  // reaches the last x: keeps the padding
  const auto rows = whole_slices.rows();
  CHECK(rows.rows() == 3 * h);
  CHECK(rows.cols() == w);
  for (std::size_t r = 0; r < rows.rows(); ++r) REQUIRE(&rows(r, 5) == &view(1 + r / h, r % h, 5));

  const auto s = view.slice(4);
  CHECK(s.rows() == h);
  CHECK(s.cols() == w);
  CHECK(&s(2, 9) == &view(4, 2, 9));

  const coalesce::pitched_volume_view<const float, host_space> read_only = view;
  CHECK(read_only(1, 1, 1) == dense[dense_index(1, 1, 1, h, w)]);
}

TEST_CASE("a volume view is a rank-3 mdspan with strides (slice, row, 1) in elements") {
  const std::size_t d = 3, h = 4, w = 10;
  const auto dense = counting(d * h * w);
  host_volume<float> v(dense, d, h, w);
  const auto m = v.view().to_mdspan();
  CHECK(m.extent(0) == d);
  CHECK(m.extent(1) == h);
  CHECK(m.extent(2) == w);
  CHECK(m.stride(0) == v.slice_pitch_bytes() / sizeof(float));
  CHECK(m.stride(1) == v.pitch_bytes() / sizeof(float));
  CHECK(m.stride(2) == 1);
  for (std::size_t z = 0; z < d; ++z)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) REQUIRE(&m(z, y, x) == &v(z, y, x));
}

TEST_CASE("volumes copy between pitch policies, and coalesce::copy moves a block into another volume") {
  const std::size_t d = 3, h = 5, w = 33;
  const auto dense = counting(d * h * w);
  host_volume<float> v(dense, d, h, w);
  const host_volume<float, coalesce::aligned_rows<512>> wide(v);
  CHECK(wide.pitch_bytes() == 512);
  CHECK(wide.to_vector() == dense);

  host_volume<float> copy_target(2, 3, 20, -1.0f);
  coalesce::copy(v.view().block(1, 1, 4, 2, 3, 20), copy_target.view());
  for (std::size_t z = 0; z < 2; ++z)
    for (std::size_t y = 0; y < 3; ++y)
      for (std::size_t x = 0; x < 20; ++x) REQUIRE(copy_target(z, y, x) == v(z + 1, y + 1, x + 4));
  CHECK_THROWS_AS(coalesce::copy(v.view(), copy_target.view()), std::invalid_argument);

  host_volume<float> other(d, h, w);
  other.copy_from(v);
  CHECK(other.to_vector() == dense);
  host_volume<float> wrong(d, h + 1, w);
  CHECK_THROWS_AS(wrong.copy_from(v), std::invalid_argument);

  host_volume<float> filled(2, 2, 3, 7.0f);
  for (float x : filled.to_vector()) REQUIRE(x == 7.0f);
}

TEST_CASE("a volume copies deeply, assigns, and leaves a moved-from volume empty") {
  const std::size_t d = 3, h = 4, w = 5;
  const auto dense = counting(d * h * w);
  host_volume<float> v(dense, d, h, w);

  host_volume<float> copy(v);
  copy(0, 0, 0) = -1.0f;  // deep: the original keeps its element
  CHECK(v(0, 0, 0) == 0.0f);
  host_volume<float> assigned(1, 1, 1);
  assigned = v;
  CHECK(assigned.depth() == d);
  CHECK(assigned.height() == h);
  CHECK(assigned.to_vector() == dense);

  host_volume<float> moved(std::move(v));
  CHECK(moved.to_vector() == dense);
  CHECK(v.depth() == 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  CHECK(v.height() == 0);
  CHECK(v.empty());
  host_volume<float> target(2, 2, 2);
  target = std::move(moved);
  CHECK(target.depth() == d);
  CHECK(target.to_vector() == dense);
  CHECK(moved.depth() == 0);
  CHECK(moved.empty());
  auto& alias = target;
  target = std::move(alias);  // a self-move keeps the elements
  CHECK(target.to_vector() == dense);
}

TEST_CASE("a volume whose depth x height overflows says so") {
  CHECK_THROWS_AS(host_volume<float>(std::size_t(1) << 40, std::size_t(1) << 40, 1), std::length_error);
}
