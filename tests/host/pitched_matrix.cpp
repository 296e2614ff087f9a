// pitched_matrix and pitched_view in host space: pitches, alignment, copies, views and mdspan
// interop, with the plain host compiler and no GPU.
#include <coalesce/pitched_matrix.hpp>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"

#include <cstdint>
#include <new>
#include <numeric>
#include <stdexcept>
#include <vector>

using coalesce::aligned_rows;
using coalesce::host_space;
using coalesce::pitched_matrix;
using coalesce::pitched_view;

namespace {

template <class T, class Policy = coalesce::line_aligned_rows>
using host_matrix = pitched_matrix<T, host_space, Policy>;
template <class T>
using host_view = pitched_view<T, host_space>;

struct twelve_bytes {
  float a, b, c;
};
static_assert(sizeof(twelve_bytes) == 12);

// A resource that hands out 16-byte-aligned addresses, breaking coalesce's 256-byte contract.
struct misaligned_resource {
  using memory_space = host_space;
  void* allocate(std::size_t bytes) {
    return static_cast<unsigned char*>(coalesce::host_resource().allocate(bytes + 16)) + 16;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    coalesce::host_resource().deallocate(static_cast<unsigned char*>(p) - 16, bytes + 16);
  }
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

std::vector<int> iota_vector(std::size_t n, int first = 1) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

TEST_CASE("the default pitch rounds a row up to a multiple of 128 bytes") {
  REQUIRE(host_matrix<float>::pitch_for(1000) == 4096);
  REQUIRE(host_matrix<float>::pitch_for(33) == 256);
  REQUIRE(host_matrix<float>::pitch_for(32) == 128);
  REQUIRE(host_matrix<float>::pitch_for(1) == 128);
  REQUIRE(host_matrix<twelve_bytes>::pitch_for(10) == 128);
  REQUIRE(host_matrix<double>::pitch_for(17) == 256);
  REQUIRE(host_matrix<float>::pitch_for(0) == 0);
  REQUIRE(host_matrix<float>(3, 1000).pitch_bytes() == 4096);
}

TEST_CASE("a pitch policy chooses other row alignments") {
  REQUIRE(host_matrix<float, aligned_rows<512>>::pitch_for(1000) == 4096);
  REQUIRE(host_matrix<float, aligned_rows<512>>::pitch_for(33) == 512);
  REQUIRE(host_matrix<float, aligned_rows<16>>::pitch_for(33) == 144);
  REQUIRE(host_matrix<twelve_bytes, aligned_rows<16>>::pitch_for(10) == 128);
  REQUIRE(host_matrix<twelve_bytes, aligned_rows<16>>::pitch_for(3) == 48);
}

TEST_CASE("every row starts on the policy's boundary and the base on at least 256 bytes") {
  host_matrix<float> m(7, 33);
  REQUIRE(address(m.data()) % 256 == 0);
  for (std::size_t r = 0; r < m.rows(); ++r) REQUIRE(address(m.view().row(r)) % 128 == 0);

  host_matrix<float, aligned_rows<1024>> wide(5, 3);
  REQUIRE(wide.pitch_bytes() == 1024);
  for (std::size_t r = 0; r < wide.rows(); ++r) REQUIRE(address(wide.view().row(r)) % 1024 == 0);
}

TEST_CASE("element types whose size does not divide the pitch are addressed by bytes") {
  host_matrix<twelve_bytes> m(4, 10);
  REQUIRE(m.pitch_bytes() == 128);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 10; ++c) m(r, c) = twelve_bytes{float(r), float(c), float(r * 10 + c)};
  REQUIRE(address(&m(1, 0)) - address(&m(0, 0)) == 128);
  REQUIRE(address(&m(3, 9)) - address(&m(3, 0)) == 9 * 12);
  REQUIRE(m(3, 9).c == 39.0f);
  REQUIRE_FALSE(m.view().is_mdspan_compatible());
}

TEST_CASE("a new matrix is zero and a filled one holds the value everywhere") {
  host_matrix<int> m(37, 45);
  for (std::size_t r = 0; r < m.rows(); ++r)
    for (std::size_t c = 0; c < m.cols(); ++c) REQUIRE(m(r, c) == 0);
  m.fill(-7);
  for (std::size_t r = 0; r < m.rows(); ++r)
    for (std::size_t c = 0; c < m.cols(); ++c) REQUIRE(m(r, c) == -7);
  REQUIRE(host_matrix<int>(5, 3, 9).to_vector() == std::vector<int>(15, 9));
}

TEST_CASE("a dense row-major vector goes in and comes back out unchanged") {
  const auto dense = iota_vector(13 * 1000);
  host_matrix<int> m(dense, 13, 1000);
  REQUIRE(m(0, 0) == 1);
  REQUIRE(m(12, 999) == 13000);
  REQUIRE(m(3, 7) == 3 * 1000 + 7 + 1);
  REQUIRE(m.to_vector() == dense);
}

TEST_CASE("copies between matrices of different pitches keep every element") {
  const auto dense = iota_vector(9 * 33);
  host_matrix<int> narrow(dense, 9, 33);
  host_matrix<int, aligned_rows<512>> wide(narrow);
  REQUIRE(wide.pitch_bytes() == 512);
  REQUIRE(wide.to_vector() == dense);
  host_matrix<int, aligned_rows<16>> tight(9, 33);
  tight.copy_from(wide);
  REQUIRE(tight.pitch_bytes() == 144);
  REQUIRE(tight.to_vector() == dense);
}

TEST_CASE("copy is deep, move steals, and swap exchanges") {
  host_matrix<int> a(iota_vector(6), 2, 3);
  host_matrix<int> b = a;
  b(0, 0) = 100;
  REQUIRE(a(0, 0) == 1);
  REQUIRE(b.data() != a.data());

  const int* storage = a.data();
  host_matrix<int> c = std::move(a);
  REQUIRE(c.data() == storage);
  REQUIRE(c.rows() == 2);

  b = c;
  REQUIRE(b(0, 0) == 1);
  swap(b, c);
  REQUIRE(b.data() == storage);
}

TEST_CASE("resize keeps the overlapping block and zeroes the rest") {
  host_matrix<int> m(iota_vector(12), 3, 4);
  m.resize(4, 2);
  REQUIRE(m.rows() == 4);
  REQUIRE(m.cols() == 2);
  REQUIRE(m.to_vector() == std::vector<int>{1, 2, 5, 6, 9, 10, 0, 0});
  m.resize(2, 5);
  REQUIRE(m.to_vector() == std::vector<int>{1, 2, 0, 0, 0, 5, 6, 0, 0, 0});
}

TEST_CASE("zero rows or columns make a valid empty matrix") {
  host_matrix<float> none;
  REQUIRE(none.empty());
  REQUIRE(none.to_vector().empty());
  host_matrix<float> no_rows(0, 1000);
  REQUIRE(no_rows.empty());
  REQUIRE(no_rows.allocated_bytes() == 0);
  REQUIRE(no_rows.pitch_bytes() == 4096);
  host_matrix<float> no_cols(1000, 0);
  REQUIRE(no_cols.empty());
  no_cols.fill(1.0f);
  no_cols.resize(2, 2);
  REQUIRE(no_cols.to_vector() == std::vector<float>(4, 0.0f));
}

TEST_CASE("sub-blocks keep the pitch and write through to the matrix") {
  host_matrix<int> m(iota_vector(6 * 40), 6, 40);
  host_view<int> block = m.view().block(2, 5, 3, 10);
  REQUIRE(block.rows() == 3);
  REQUIRE(block.cols() == 10);
  REQUIRE(block.pitch_bytes() == m.pitch_bytes());
  REQUIRE(block(0, 0) == m(2, 5));
  REQUIRE(block(2, 9) == m(4, 14));
  block(1, 1) = -1;
  REQUIRE(m(3, 6) == -1);
  const host_view<const int> read_only = block;
  REQUIRE(read_only(1, 1) == -1);
  static_assert(!std::is_assignable_v<decltype(read_only(0, 0)), int>, "a const view must not write");
  static_assert(std::is_trivially_copyable_v<pitched_view<float>>, "views are passed to kernels by value");
  // The memory space is part of the view's type: a host matrix's view is not a device view.
  static_assert(std::is_same_v<decltype(m.view()), host_view<int>>);
  static_assert(std::is_same_v<decltype(pitched_matrix<int>().view()), pitched_view<int, coalesce::device_space>>);
  static_assert(!std::is_convertible_v<host_view<int>, pitched_view<int>>,
                "host memory must not pass for device memory");
}

TEST_CASE("a matrix's view owns its rows' padding, a right-edge block keeps it, other blocks do not") {
  host_matrix<float> m(7, 1001, 1.0f);
  const auto whole = m.view();
  REQUIRE(whole.owned_row_bytes() == m.pitch_bytes());
  REQUIRE(whole.block(1, 5, 3, 996).owned_row_bytes() == m.pitch_bytes() - 5 * sizeof(float));
  REQUIRE(whole.block(1, 5, 3, 10).owned_row_bytes() == 10 * sizeof(float));
  REQUIRE(host_view<float>(m.data(), 7, 1001, m.pitch_bytes()).owned_row_bytes() == 1001 * sizeof(float));
  REQUIRE(host_view<const float>(whole).owned_row_bytes() == m.pitch_bytes());
  // A view from an mdspan knows nothing of padding: it owns its elements only, and so do its blocks.
  const host_view<float> from_mdspan(whole.to_mdspan());
  REQUIRE(from_mdspan.owned_row_bytes() == 1001 * sizeof(float));
  REQUIRE(from_mdspan.block(0, 5, 7, 996).owned_row_bytes() == 996 * sizeof(float));
  // The padding holds zero bytes whatever filled the elements.
  const auto* bytes = reinterpret_cast<const unsigned char*>(m.data());
  for (std::size_t r = 0; r < 7; ++r)
    for (std::size_t b = 1001 * sizeof(float); b < m.pitch_bytes(); ++b) REQUIRE(bytes[r * m.pitch_bytes() + b] == 0);
}

TEST_CASE("to_mdspan gives the same elements with strides {pitch / sizeof(T), 1}") {
  host_matrix<float> m(5, 1000);
  m(4, 999) = 3.5f;
  auto md = m.view().to_mdspan();
  REQUIRE(md.extent(0) == 5);
  REQUIRE(md.extent(1) == 1000);
  REQUIRE(md.stride(0) == 1024);
  REQUIRE(md.stride(1) == 1);
  REQUIRE(md(4, 999) == 3.5f);
  REQUIRE(&md(2, 3) == &m(2, 3));

  // and back: a view built from that mdspan addresses the same elements
  host_view<float> again(md);
  REQUIRE(again.pitch_bytes() == m.pitch_bytes());
  REQUIRE(&again(2, 3) == &m(2, 3));

  auto block = m.view().block(1, 2, 3, 4).to_mdspan();
  REQUIRE(&block(0, 0) == &m(1, 2));
  REQUIRE(block.stride(0) == 1024);
}

TEST_CASE("a size whose bytes overflow size_t is a length_error, not a wrapped allocation") {
  const std::size_t huge = std::size_t(1) << 62;
  REQUIRE_THROWS_AS(host_matrix<float>(huge, 1000), std::length_error);
  REQUIRE_THROWS_AS(host_matrix<float>(2, huge), std::length_error);
  REQUIRE_THROWS_AS(host_matrix<double>(1, std::size_t(-1) / 4), std::length_error);
  try {
    host_matrix<float> m(huge, 1000);
  } catch (const std::length_error& e) {
    REQUIRE(std::string(e.what()).find("coalesce::pitched_matrix") != std::string::npos);
  }
}

TEST_CASE("a mismatched copy says which shapes differ and changes nothing") {
  host_matrix<int> a(iota_vector(6), 2, 3);
  host_matrix<int> b(3, 2);
  REQUIRE_THROWS_AS(b.copy_from(a), std::invalid_argument);
  REQUIRE_THROWS_AS(a.copy_from(std::vector<int>(5)), std::invalid_argument);
  try {
    b.copy_from(a);
  } catch (const std::invalid_argument& e) {
    REQUIRE(std::string(e.what()) ==
            "coalesce::pitched_matrix::copy_from: the source is 2 x 3 but the destination is 3 x 2");
  }
  REQUIRE(a.to_vector() == iota_vector(6));
  REQUIRE(b.to_vector() == std::vector<int>(6, 0));
}

namespace {
// Host memory that says it is page-locked, so that copy_from_async accepts it with no GPU to pin it.
struct said_pinned_resource : coalesce::host_resource {
  static constexpr bool pinned = true;
};
}  // namespace

TEST_CASE("a device matrix's stream is its resource's, where its copies and algorithms are ordered") {
  const auto stream = reinterpret_cast<cudaStream_t>(std::uintptr_t(0x1000));  // never used: nothing is allocated
  const pitched_matrix<float> on_device{coalesce::pool_resource(stream)};
  REQUIRE(on_device.stream() == stream);
  REQUIRE(host_matrix<float>().stream() == cudaStream_t{});
}

TEST_CASE("copy_from_async between matrices of different shapes says so before it copies anything") {
  using pinned_matrix = pitched_matrix<int, host_space, coalesce::line_aligned_rows, said_pinned_resource>;
  const pinned_matrix on_host(iota_vector(6), 2, 3);
  pitched_matrix<int> on_device;  // 0 x 0: no allocation, no GPU needed
  try {
    on_device.copy_from_async(on_host);
    FAIL("copy_from_async of a different shape did not throw");
  } catch (const std::invalid_argument& e) {
    REQUIRE(std::string(e.what()) ==
            "coalesce::pitched_matrix::copy_from_async: the source is 2 x 3 but the destination is 0 x 0");
  }
  pinned_matrix back(1, 1);
  REQUIRE_THROWS_AS(back.copy_from_async(on_device), std::invalid_argument);
  REQUIRE(back.to_vector() == std::vector<int>{0});
}

TEST_CASE("a failed allocation leaves the matrix unchanged and leaks nothing") {
  using counted = pitched_matrix<int, host_space, coalesce::line_aligned_rows, coalesce_test::flaky_host_resource>;
  {
    counted m(iota_vector(12), 3, 4);
    REQUIRE(coalesce_test::flaky_host_resource::outstanding == 1);
    coalesce_test::flaky_host_resource::fail_next = true;
    REQUIRE_THROWS_AS(m.resize(100, 100), std::bad_alloc);
    REQUIRE(m.rows() == 3);
    REQUIRE(m.to_vector() == iota_vector(12));
    coalesce_test::flaky_host_resource::fail_next = true;
    REQUIRE_THROWS_AS(counted(2, 2), std::bad_alloc);
  }
  REQUIRE_FALSE(coalesce_test::flaky_host_resource::fail_next);
  REQUIRE(coalesce_test::flaky_host_resource::outstanding == 0);
}

TEST_CASE("a resource that breaks the 256-byte alignment contract is refused without a leak") {
  using broken = pitched_matrix<float, host_space, coalesce::line_aligned_rows, misaligned_resource>;
  std::string message;
  try {
    broken m(4, 4);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  REQUIRE(message.find("not 256-byte aligned") != std::string::npos);
}
