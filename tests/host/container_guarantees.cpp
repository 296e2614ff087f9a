// The containers' exception safety and resources, with the plain host compiler and no GPU. An
// injecting resource (flaky_resource.hpp) fails each allocation of reserve, resize,
// resize_for_overwrite, push_back, the constructions, copies and copy assignments in turn: each
// failed run must throw, leave what the operation was handed as it was (elements, size, capacity,
// storage, resource) and hand back every allocation it took - the strong guarantee the class
// comments promise. A moved-from container keeps its resource and stream, copy assignment keeps
// the destination's, a copy takes the source's, and swap exchanges them.
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/soa.hpp>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"
#include "records.hpp"

namespace {

using coalesce::host_space;
using coalesce::line_aligned_rows;
using flaky = coalesce_test::flaky_host_resource;
using records = coalesce::soa_vector<Record, host_space, flaky>;
using matrix = coalesce::pitched_matrix<int, host_space, line_aligned_rows, flaky>;
using volume = coalesce::pitched_volume<int, host_space, line_aligned_rows, flaky>;

const std::size_t sizes[] = {0, 1, 2, 3, 31, 33, 4095, 4097};

// Streams that host containers report and never use.
cudaStream_t fake_stream(std::uintptr_t n) { return reinterpret_cast<cudaStream_t>(n * 0x1000); }

// n records whose every field differs from T{}'s and from the other records'.
std::vector<Record> some_records(std::size_t n, int salt = 0) {
  std::vector<Record> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::int64_t>(i) + 1000 * salt;
    v[i] = Record{k * 3 + 1, float(k) / 4.0f + 2.0f, std::int16_t(k % 30000 + 1), double(k) / 8.0 - 1.0};
  }
  return v;
}
std::vector<int> some_ints(std::size_t n, int salt = 0) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = int(i) * 7 + 1 + 100000 * salt;
  return v;
}

// Everything about a vector that a user can observe, compared before and after a failed call.
struct vector_state {
  std::vector<Record> elements;
  std::size_t size, capacity, allocated_bytes;
  const void* storage;
  int resource;
  cudaStream_t stream;
  bool operator==(const vector_state& o) const {
    return elements == o.elements && size == o.size && capacity == o.capacity && allocated_bytes == o.allocated_bytes &&
           storage == o.storage && resource == o.resource && stream == o.stream;
  }
};
vector_state state_of(const records& v) {
  return {v.to_vector(),        v.size(),        v.capacity(), v.allocated_bytes(),
          v.view().column<0>(), v.resource().id, v.stream()};
}

// The same for a matrix, or a volume (its extents in depth and height; 0 for a matrix).
struct matrix_state {
  std::vector<int> elements;
  std::size_t rows, cols, pitch, allocated_bytes;
  const void* storage;
  int resource;
  cudaStream_t stream;
  std::size_t depth = 0, height = 0;
  bool operator==(const matrix_state& o) const {
    return elements == o.elements && rows == o.rows && cols == o.cols && pitch == o.pitch &&
           allocated_bytes == o.allocated_bytes && storage == o.storage && resource == o.resource &&
           stream == o.stream && depth == o.depth && height == o.height;
  }
};
matrix_state state_of(const matrix& m) {
  return {m.to_vector(),       m.rows(), m.cols(),        m.pitch_bytes(),
          m.allocated_bytes(), m.data(), m.resource().id, m.stream()};
}
matrix_state state_of(const volume& v) {
  matrix_state s = state_of(v.as_matrix());
  s.depth = v.depth();
  s.height = v.height();
  return s;
}

// Runs `operation` on what `make` makes, with its k-th allocation failing, for k = 1, 2, ... until
// a run needs fewer than k allocations and succeeds. Every failing run must throw std::bad_alloc,
// leave `observe(subject)` as it was and hand back every allocation it took; the successful run
// is checked by `succeeded`. Returns the number of allocations the successful run made.
template <class Make, class Operation, class Observe, class Succeeded>
long fail_each_allocation_in_turn(Make make, Operation operation, Observe observe, Succeeded succeeded) {
  for (long k = 1;; ++k) {
    auto subject = make();
    const auto before = observe(subject);
    const long outstanding = flaky::outstanding, attempts = flaky::attempts;
    flaky::fail_allocation(k);
    bool threw = false;
    try {
      operation(subject);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    const bool failed_one = flaky::fail_in == 0;
    flaky::disarm();
    if (!failed_one) {
      REQUIRE_FALSE(threw);
      succeeded(subject);
      return flaky::attempts - attempts;
    }
    INFO("allocation " << k << " of the operation failed");
    REQUIRE(threw);
    CHECK(observe(subject) == before);
    CHECK(flaky::outstanding == outstanding);
  }
}

}  // namespace

TEST_CASE("soa_vector::reserve that fails to allocate leaves the elements, size, capacity and storage as they were") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements");
    const long allocations = fail_each_allocation_in_turn([&] { return records(some_records(n), flaky(1)); },
                                                          [&](records& v) { v.reserve(2 * n + 40); },
                                                          [](const records& v) { return state_of(v); },
                                                          [&](const records& v) {
                                                            CHECK(v.capacity() >= 2 * n + 40);
                                                            CHECK(v.to_vector() == some_records(n));
                                                          });
    CHECK(allocations >= 1);
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("soa_vector::resize beyond the capacity that fails to allocate leaves the vector as it was") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements, 5 spare");
    const long allocations = fail_each_allocation_in_turn(
        [&] {
          records v(some_records(n), flaky(1));
          v.reserve(n + 5);
          return v;
        },
        [&](records& v) { v.resize(n + 6); }, [](const records& v) { return state_of(v); },
        [&](const records& v) {
          auto expected = some_records(n);
          expected.resize(n + 6);  // T{}: the default member initializers
          CHECK(v.to_vector() == expected);
        });
    CHECK(allocations >= 1);
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("soa_vector::resize_for_overwrite beyond the capacity that fails to allocate leaves the vector as it was") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements");
    const long allocations = fail_each_allocation_in_turn(
        [&] { return records(some_records(n), flaky(1)); }, [&](records& v) { v.resize_for_overwrite(n + 1); },
        [](const records& v) { return state_of(v); },
        [&](const records& v) {
          REQUIRE(v.size() == n + 1);
          const auto kept = v.to_vector();
          CHECK(std::vector<Record>(kept.begin(), kept.begin() + std::ptrdiff_t(n)) == some_records(n));
        });
    CHECK(allocations >= 1);
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("soa_vector::push_back into a full vector that fails to allocate leaves the vector as it was") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements");
    const Record extra{-1, -2.0f, -3, -4.0};
    const long allocations =
        fail_each_allocation_in_turn([&] { return records(some_records(n), flaky(1)); },  // capacity n: full
                                     [&](records& v) { v.push_back(extra); },
                                     [](const records& v) { return state_of(v); },
                                     [&](const records& v) {
                                       auto expected = some_records(n);
                                       expected.push_back(extra);
                                       CHECK(v.to_vector() == expected);
                                     });
    CHECK(allocations >= 1);
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("soa_vector copy assignment that fails to allocate leaves the destination and the source as they were") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements assigned over 40");
    const long allocations = fail_each_allocation_in_turn(
        [&] { return std::make_pair(records(some_records(40, 1), flaky(1)), records(some_records(n, 2), flaky(2))); },
        [](std::pair<records, records>& p) { p.first = p.second; },
        [](const std::pair<records, records>& p) { return std::make_pair(state_of(p.first), state_of(p.second)); },
        [&](const std::pair<records, records>& p) {
          CHECK(p.first.to_vector() == some_records(n, 2));
          CHECK(p.first.resource().id == 1);
        });
    CHECK(allocations == (n > 0 ? 1 : 0));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("a soa_vector construction or copy that fails to allocate leaks nothing and leaves its source as it was") {
  for (const std::size_t n : sizes) {
    INFO(n << " elements");
    const auto allocations_are = [n](long allocations) { CHECK(allocations == (n > 0 ? 1 : 0)); };
    const auto source = [&] { return records(some_records(n), flaky(2)); };
    const auto observe = [](const records& v) { return state_of(v); };
    std::vector<Record> made;  // what the successful run made (no assertion inside an operation:
                               // Catch would take the exception it must let through)
    const auto made_is = [&](const std::vector<Record>& expected_elements) {
      return [&made, expected_elements](const records&) { CHECK(made == expected_elements); };
    };
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const records&) { made = records(n, flaky(1)).to_vector(); }, observe,
        made_is(std::vector<Record>(n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const records&) { made = records(some_records(n), flaky(1)).to_vector(); }, observe,
        made_is(some_records(n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const records& s) { made = records(s).to_vector(); }, observe, made_is(some_records(n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const records& s) { made = records(s, flaky(3)).to_vector(); }, observe, made_is(some_records(n))));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("resize, reserve and resize_for_overwrite within the capacity, swap, moves and assign never allocate") {
  records a(some_records(100), flaky(1)), b(some_records(30), flaky(2));
  a.reserve(200);
  matrix m(some_ints(12), 3, 4, flaky(3)), n(some_ints(12, 1), 3, 4, flaky(4));
  const long attempts = flaky::attempts;
  flaky::fail_next = true;  // any allocation would throw
  a.resize(150);            // fills T{} within the capacity
  a.resize(20);
  a.resize(20);
  a.reserve(200);
  a.resize_for_overwrite(180);
  a.resize(30);
  a.assign(b);
  swap(a, b);
  records c(std::move(a));
  a = std::move(c);
  a.clear();
  m.resize(3, 4);
  m.fill(5);
  m.copy_from(n);
  m.copy_from(some_ints(12, 2));
  CHECK(flaky::fail_next);
  CHECK(flaky::attempts == attempts);
  flaky::disarm();
  CHECK(m.to_vector() == some_ints(12, 2));
  CHECK(b.to_vector() == some_records(30));
  CHECK(b.capacity() == 200);
}

TEST_CASE("pitched_matrix::resize that fails to allocate leaves the matrix as it was") {
  const std::pair<std::size_t, std::size_t> shapes[][2] = {
      {{3, 4}, {5, 2}}, {{1, 1}, {33, 31}}, {{0, 5}, {2, 3}}, {{31, 33}, {0, 0}}, {{4095, 1}, {4097, 2}}};
  for (const auto& shape : shapes) {
    const auto [rows, cols] = shape[0];
    const auto [new_rows, new_cols] = shape[1];
    INFO(rows << " x " << cols << " to " << new_rows << " x " << new_cols);
    const long allocations =
        fail_each_allocation_in_turn([&] { return matrix(some_ints(rows * cols), rows, cols, flaky(1)); },
                                     [&](matrix& m) { m.resize(new_rows, new_cols); },
                                     [](const matrix& m) { return state_of(m); },
                                     [&](const matrix& m) {
                                       const auto old = some_ints(rows * cols);
                                       std::vector<int> expected(new_rows * new_cols, 0);
                                       for (std::size_t r = 0; r < rows && r < new_rows; ++r)
                                         for (std::size_t c = 0; c < cols && c < new_cols; ++c)
                                           expected[r * new_cols + c] = old[r * cols + c];
                                       CHECK(m.to_vector() == expected);
                                     });
    CHECK(allocations == (new_rows * new_cols > 0 ? 1 : 0));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("pitched_matrix copy assignment that fails to allocate leaves the destination and the source as they were") {
  for (const std::size_t n : sizes) {
    INFO("3 x " << n << " assigned over 2 x 5");
    const long allocations = fail_each_allocation_in_turn(
        [&] {
          return std::make_pair(matrix(some_ints(10), 2, 5, flaky(1)), matrix(some_ints(3 * n, 1), 3, n, flaky(2)));
        },
        [](std::pair<matrix, matrix>& p) { p.first = p.second; },
        [](const std::pair<matrix, matrix>& p) { return std::make_pair(state_of(p.first), state_of(p.second)); },
        [&](const std::pair<matrix, matrix>& p) {
          CHECK(p.first.to_vector() == some_ints(3 * n, 1));
          CHECK(p.first.resource().id == 1);
        });
    CHECK(allocations == (n > 0 ? 1 : 0));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE(
    "a pitched_matrix construction or copy that fails to allocate leaks nothing and leaves its source as it was") {
  using narrow = coalesce::pitched_matrix<int, host_space, coalesce::aligned_rows<16>, flaky>;
  for (const std::size_t n : sizes) {
    INFO("2 x " << n);
    const auto allocations_are = [n](long allocations) { CHECK(allocations == (n > 0 ? 1 : 0)); };
    const auto source = [&] { return matrix(some_ints(2 * n), 2, n, flaky(2)); };
    const auto observe = [](const matrix& m) { return state_of(m); };
    std::vector<int> made;  // what the successful run made
    const auto made_is = [&](const std::vector<int>& expected_elements) {
      return [&made, expected_elements](const matrix&) { CHECK(made == expected_elements); };
    };
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const matrix&) { made = matrix(2, n, flaky(1)).to_vector(); }, observe,
        made_is(std::vector<int>(2 * n, 0))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const matrix&) { made = matrix(2, n, 9, flaky(1)).to_vector(); }, observe,
        made_is(std::vector<int>(2 * n, 9))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const matrix&) { made = matrix(some_ints(2 * n), 2, n, flaky(1)).to_vector(); }, observe,
        made_is(some_ints(2 * n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const matrix& s) { made = matrix(s).to_vector(); }, observe, made_is(some_ints(2 * n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const matrix& s) { made = narrow(s, flaky(3)).to_vector(); }, observe, made_is(some_ints(2 * n))));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("pitched_volume copy assignment that fails to allocate leaves the destination and the source as they were") {
  for (const std::size_t n : sizes) {
    INFO("2 x 3 x " << n << " assigned over 2 x 2 x 2");
    const long allocations = fail_each_allocation_in_turn(
        [&] {
          return std::make_pair(volume(some_ints(8), 2, 2, 2, flaky(1)),
                                volume(some_ints(6 * n, 1), 2, 3, n, flaky(2)));
        },
        [](std::pair<volume, volume>& p) { p.first = p.second; },
        [](const std::pair<volume, volume>& p) { return std::make_pair(state_of(p.first), state_of(p.second)); },
        [&](const std::pair<volume, volume>& p) {
          CHECK(p.first.depth() == 2);
          CHECK(p.first.height() == 3);
          CHECK(p.first.to_vector() == some_ints(6 * n, 1));
          CHECK(p.first.resource().id == 1);
        });
    CHECK(allocations == (n > 0 ? 1 : 0));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE(
    "a pitched_volume construction or copy that fails to allocate leaks nothing and leaves its source as it was") {
  for (const std::size_t n : sizes) {
    INFO("2 x 3 x " << n);
    const auto allocations_are = [n](long allocations) { CHECK(allocations == (n > 0 ? 1 : 0)); };
    const auto source = [&] { return volume(some_ints(6 * n), 2, 3, n, flaky(2)); };
    const auto observe = [](const volume& v) { return state_of(v); };
    std::vector<int> made;  // what the successful run made
    const auto made_is = [&](const std::vector<int>& expected_elements) {
      return [&made, expected_elements](const volume&) { CHECK(made == expected_elements); };
    };
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const volume&) { made = volume(2, 3, n, 4, flaky(1)).to_vector(); }, observe,
        made_is(std::vector<int>(6 * n, 4))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const volume&) { made = volume(some_ints(6 * n), 2, 3, n, flaky(1)).to_vector(); }, observe,
        made_is(some_ints(6 * n))));
    allocations_are(fail_each_allocation_in_turn(
        source, [&](const volume& s) { made = volume(s).to_vector(); }, observe, made_is(some_ints(6 * n))));
  }
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("a moved-from soa_vector is empty, holds no memory and keeps its resource and stream") {
  records v(some_records(33), flaky(7, fake_stream(7)));
  const void* storage = v.view().column<0>();
  records moved(std::move(v));
  CHECK(moved.view().column<0>() == storage);
  CHECK(moved.resource().id == 7);
  CHECK(v.size() == 0);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(v.capacity() == 0);
  CHECK(v.allocated_bytes() == 0);
  CHECK(v.resource().id == 7);
  CHECK(v.stream() == fake_stream(7));
  CHECK(flaky::outstanding == 1);

  // A device vector: no allocation, so no GPU needed.
  coalesce::soa_vector<Record> on_device{coalesce::pool_resource(fake_stream(8))};
  coalesce::soa_vector<Record> moved_on_device(std::move(on_device));
  CHECK(on_device.stream() == fake_stream(8));  // NOLINT(bugprone-use-after-move)
  CHECK(moved_on_device.stream() == fake_stream(8));
}

TEST_CASE("a moved-from soa_vector grows again from its own resource") {
  records v(some_records(33), flaky(7, fake_stream(7)));
  records moved(std::move(v));
  v.resize(5);  // NOLINT(bugprone-use-after-move)
  CHECK(flaky::last_allocator == 7);
  CHECK(flaky::outstanding == 2);
  CHECK(v.to_vector() == std::vector<Record>(5));
  v.push_back(Record{1, 2.0f, 3, 4.0});
  CHECK(v.to_vector()[5] == Record{1, 2.0f, 3, 4.0});
}

TEST_CASE(
    "soa_vector move assignment gives the target the source's storage and resource, and the source its own back") {
  records target(some_records(10), flaky(1, fake_stream(1)));
  records source(some_records(20, 1), flaky(2, fake_stream(2)));
  const void* storage = source.view().column<0>();
  target = std::move(source);
  CHECK(target.view().column<0>() == storage);
  CHECK(target.to_vector() == some_records(20, 1));
  CHECK(target.resource().id == 2);
  CHECK(target.stream() == fake_stream(2));
  CHECK(source.size() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(source.allocated_bytes() == 0);
  CHECK(source.resource().id == 2);
  CHECK(source.stream() == fake_stream(2));
  CHECK(flaky::outstanding == 1);  // the target's old storage went back
}

TEST_CASE("soa_vector copy assignment keeps the destination's resource and stream; a copy takes the source's") {
  records target(some_records(10), flaky(1, fake_stream(1)));
  const records source(some_records(20, 1), flaky(2, fake_stream(2)));
  target = source;
  CHECK(flaky::last_allocator == 1);
  CHECK(target.resource().id == 1);
  CHECK(target.stream() == fake_stream(1));
  CHECK(target.to_vector() == some_records(20, 1));
  const records copy(source);
  CHECK(flaky::last_allocator == 2);
  CHECK(copy.resource().id == 2);
  CHECK(copy.stream() == fake_stream(2));
  const records given(source, flaky(3, fake_stream(3)));
  CHECK(flaky::last_allocator == 3);
  CHECK(given.stream() == fake_stream(3));
  CHECK(given.to_vector() == some_records(20, 1));
}

TEST_CASE("swap exchanges two soa_vectors' elements, storage and resources") {
  records a(some_records(10), flaky(1, fake_stream(1)));
  records b(some_records(20, 1), flaky(2, fake_stream(2)));
  const void* a_storage = a.view().column<0>();
  const long attempts = flaky::attempts;
  swap(a, b);
  CHECK(flaky::attempts == attempts);
  CHECK(b.view().column<0>() == a_storage);
  CHECK(b.to_vector() == some_records(10));
  CHECK(b.resource().id == 1);
  CHECK(b.stream() == fake_stream(1));
  CHECK(a.to_vector() == some_records(20, 1));
  CHECK(a.stream() == fake_stream(2));
}

TEST_CASE("a moved-from pitched_matrix is 0 x 0, holds no memory, keeps its resource and stream and grows from it") {
  matrix m(some_ints(12), 3, 4, flaky(7, fake_stream(7)));
  const int* storage = m.data();
  matrix moved(std::move(m));
  CHECK(moved.data() == storage);
  CHECK(m.rows() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(m.cols() == 0);
  CHECK(m.pitch_bytes() == 0);
  CHECK(m.allocated_bytes() == 0);
  CHECK(m.resource().id == 7);
  CHECK(m.stream() == fake_stream(7));
  m.resize(2, 3);
  CHECK(flaky::last_allocator == 7);
  CHECK(m.to_vector() == std::vector<int>(6, 0));

  coalesce::pitched_matrix<float> on_device{coalesce::pool_resource(fake_stream(8))};
  coalesce::pitched_matrix<float> moved_on_device(std::move(on_device));
  CHECK(on_device.stream() == fake_stream(8));  // NOLINT(bugprone-use-after-move)
}

TEST_CASE(
    "pitched_matrix move assignment gives the target the source's storage and resource, and the source its own back") {
  matrix target(some_ints(6), 2, 3, flaky(1, fake_stream(1)));
  matrix source(some_ints(20, 1), 4, 5, flaky(2, fake_stream(2)));
  const int* storage = source.data();
  target = std::move(source);
  CHECK(target.data() == storage);
  CHECK(target.to_vector() == some_ints(20, 1));
  CHECK(target.stream() == fake_stream(2));
  CHECK(source.rows() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(source.allocated_bytes() == 0);
  CHECK(source.resource().id == 2);
  CHECK(source.stream() == fake_stream(2));
  CHECK(flaky::outstanding == 1);
}

TEST_CASE("pitched_matrix copy assignment keeps the destination's resource and stream; a copy takes the source's") {
  matrix target(some_ints(6), 2, 3, flaky(1, fake_stream(1)));
  const matrix source(some_ints(20, 1), 4, 5, flaky(2, fake_stream(2)));
  target = source;
  CHECK(flaky::last_allocator == 1);
  CHECK(target.stream() == fake_stream(1));
  CHECK(target.to_vector() == some_ints(20, 1));
  matrix copy(source);
  CHECK(flaky::last_allocator == 2);
  CHECK(copy.stream() == fake_stream(2));
  swap(target, copy);
  CHECK(target.stream() == fake_stream(2));
  CHECK(copy.stream() == fake_stream(1));
}

TEST_CASE("a moved-from pitched_volume is 0 x 0 x 0, holds no memory and keeps its resource and stream") {
  volume v(some_ints(24), 2, 3, 4, flaky(7, fake_stream(7)));
  volume moved(std::move(v));
  CHECK(moved.to_vector() == some_ints(24));
  CHECK(v.depth() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(v.height() == 0);
  CHECK(v.width() == 0);
  CHECK(v.allocated_bytes() == 0);
  CHECK(v.resource().id == 7);
  CHECK(v.stream() == fake_stream(7));
  volume target(some_ints(8), 2, 2, 2, flaky(1, fake_stream(1)));
  target = std::move(moved);
  CHECK(target.to_vector() == some_ints(24));
  CHECK(target.stream() == fake_stream(7));
  CHECK(moved.depth() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(moved.resource().id == 7);
  CHECK(flaky::outstanding == 1);
}

TEST_CASE("pitched_volume copy assignment keeps the destination's resource and stream; a copy takes the source's") {
  volume target(some_ints(8), 2, 2, 2, flaky(1, fake_stream(1)));
  const volume source(some_ints(24, 1), 2, 3, 4, flaky(2, fake_stream(2)));
  target = source;
  CHECK(flaky::last_allocator == 1);
  CHECK(target.stream() == fake_stream(1));
  CHECK(target.height() == 3);
  CHECK(target.to_vector() == some_ints(24, 1));
  const volume copy(source);
  CHECK(flaky::last_allocator == 2);
  CHECK(copy.stream() == fake_stream(2));
}
