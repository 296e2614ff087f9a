// Property tests of the containers on the host, with the plain host compiler and no GPU: random
// sequences of construct, resize, reserve, resize_for_overwrite, push_back, assign, copy, move,
// swap, erase (std::remove_if on the vector's iterators, then resize: what a user writes) and
// element writes on two soa_vectors, and of construct, copy, move, swap, resize, fill, copy_from
// and element writes on two pitched_matrices, each checked after every step against a std::vector
// model: the elements, the sizes, the resource and stream each container holds, the capacity
// where the step must keep it, the matrices' zero padding, and that every allocation still out is
// one a container holds. Sizes are drawn from 0, 1, 2, 3, 31, 33, 4095, 4097 and at random. In the
// second run of each, an injecting resource fails a random allocation now and then: the step must
// throw std::bad_alloc and leave both containers as the model says they were.
//
// The seeds are fixed; COALESCE_PROPERTY_ITERATIONS sets the steps per seed (default 300).
#include <algorithm>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "coalesce_test.hpp"
#include "flaky_resource.hpp"
#include "records.hpp"

namespace {

using coalesce::host_space;
using flaky = coalesce_test::flaky_host_resource;
using records = coalesce::soa_vector<Record, host_space, flaky>;
using matrix = coalesce::pitched_matrix<int, host_space, coalesce::line_aligned_rows, flaky>;
using narrow_matrix = coalesce::pitched_matrix<int, host_space, coalesce::aligned_rows<16>, flaky>;

const std::uint64_t seeds[] = {1, 2, 3, 4};

std::size_t steps_per_seed() {
  if (const char* set = std::getenv("COALESCE_PROPERTY_ITERATIONS"))
    return std::size_t(std::strtoull(set, nullptr, 10));
  return 300;
}

cudaStream_t fake_stream(int id) { return reinterpret_cast<cudaStream_t>(std::uintptr_t(id) * 0x1000); }
// The resources a step may construct with: ids 1 to 3, each reporting its own stream.
flaky resource_number(int id) { return flaky(id, fake_stream(id)); }

class random_steps {
 public:
  explicit random_steps(std::uint64_t seed) : engine_(seed) {}
  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::size_t(engine_() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
  // A size from the list the issue names, or one at random.
  std::size_t size() {
    static const std::size_t listed[] = {0, 1, 2, 3, 31, 33, 4095, 4097};
    return one_in(2) ? listed[below(8)] : below(5000);
  }
  // rows and cols of a matrix: each a size, the product kept below 2^16 elements.
  std::pair<std::size_t, std::size_t> shape() {
    std::size_t rows = size(), cols = size();
    if (rows * cols > (std::size_t(1) << 16)) (one_in(2) ? rows : cols) = below(40);
    return {rows, cols};
  }
  Record record() {
    const auto k = static_cast<std::int64_t>(engine_() % 2000001) - 1000000;
    return Record{k, float(below(4001)) / 4.0f - 500.0f, std::int16_t(int(below(60001)) - 30000), double(k) / 8.0};
  }
  std::vector<Record> records_of(std::size_t n) {
    std::vector<Record> v(n);
    for (auto& r : v) r = record();
    return v;
  }
  int value() { return int(engine_() % 2000001) - 1000000; }
  std::vector<int> values(std::size_t n) {
    std::vector<int> v(n);
    for (auto& x : v) x = value();
    return v;
  }
  int resource_id() { return 1 + int(below(3)); }

 private:
  std::mt19937_64 engine_;
};

// A vector's model: its elements and the resource (id and stream) it holds.
struct vector_model {
  std::vector<Record> elements;
  int resource;
};

// Every allocation still out is one a container holds (one each, for a container with storage).
template <class Containers>
long held_allocations(const Containers& containers) {
  long held = 0;
  for (const auto& c : containers) held += c.allocated_bytes() > 0 ? 1 : 0;
  return held;
}

void check_vector(const records& v, const vector_model& model, std::size_t slot) {
  INFO("vector " << slot);
  REQUIRE(v.size() == model.elements.size());
  CHECK(v.capacity() >= v.size());
  CHECK(v.resource().id == model.resource);
  CHECK(v.stream() == fake_stream(model.resource));
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(Record(v[i]) == model.elements[i])) FAIL("element " << i << " differs from the model");
}

// One random step on the vectors (and, where the step says so, the same on the models).
// Returns the step's name; `keeps_capacity[k]` says that vector k's capacity may not change.
std::string vector_step(random_steps& random, records (&v)[2], vector_model (&model)[2], bool (&keeps_capacity)[2]) {
  const std::size_t i = random.below(2), j = random.below(2);
  records& a = v[i];
  vector_model& m = model[i];
  switch (random.below(16)) {
    case 0: {
      const std::size_t n = random.size();
      const int id = random.resource_id();
      a = records(n, resource_number(id));
      m = {std::vector<Record>(n), id};
      return "construct " + std::to_string(n) + " elements";
    }
    case 1: {
      const auto elements = random.records_of(random.size());
      const int id = random.resource_id();
      a = records(elements, resource_number(id));
      m = {elements, id};
      return "construct from " + std::to_string(elements.size()) + " structs";
    }
    case 2: {
      a = records(v[j]);
      m = model[j];
      return "copy-construct from the other vector (or itself)";
    }
    case 3: {
      const int id = random.resource_id();
      a = records(v[j], resource_number(id));
      m = {model[j].elements, id};
      return "copy-construct with a given resource";
    }
    case 4: {
      a = v[j];
      m.elements = model[j].elements;
      return "copy-assign";
    }
    case 5: {
      if (i == j) return "nothing (a move onto itself)";
      a = std::move(v[j]);
      m = model[j];
      model[j].elements.clear();
      return "move-assign";
    }
    case 6: {
      records moved(std::move(a));
      check_vector(a, {{}, m.resource}, i);  // NOLINT(bugprone-use-after-move): moved-from state is specified
      a = std::move(moved);
      return "move-construct and move back";
    }
    case 7: {
      swap(v[0], v[1]);
      std::swap(model[0], model[1]);
      return "swap";
    }
    case 8: {
      const std::size_t n = random.size();
      keeps_capacity[i] = n <= a.capacity();
      a.resize(n);
      m.elements.resize(n);
      return "resize to " + std::to_string(n);
    }
    case 9: {
      const std::size_t n = random.size();
      keeps_capacity[i] = n <= a.capacity();
      a.reserve(n);
      CHECK(a.capacity() >= n);
      return "reserve " + std::to_string(n);
    }
    case 10: {
      const std::size_t n = random.size(), old = a.size();
      keeps_capacity[i] = n <= a.capacity();
      a.resize_for_overwrite(n);
      m.elements.resize(n);
      for (std::size_t k = old; k < n; ++k) a[k] = m.elements[k] = random.record();  // never read unwritten
      return "resize_for_overwrite to " + std::to_string(n) + " and write the new elements";
    }
    case 11: {
      const Record r = random.record();
      keeps_capacity[i] = a.size() < a.capacity();
      a.push_back(r);
      m.elements.push_back(r);
      return "push_back";
    }
    case 12: {
      keeps_capacity[i] = true;
      for (std::size_t k = 0, writes = random.below(20); k < writes && !m.elements.empty(); ++k) {
        const std::size_t at = random.below(m.elements.size());
        a[at] = m.elements[at] = random.record();
      }
      return "write elements";
    }
    case 13: {
      const std::int64_t divisor = 2 + std::int64_t(random.below(4));
      const auto pred = [divisor](const auto& r) { return r.key % divisor == 0; };
      keeps_capacity[i] = true;
      const auto end = std::remove_if(a.begin(), a.end(), pred);
      a.resize(std::size_t(end - a.begin()));
      m.elements.erase(std::remove_if(m.elements.begin(), m.elements.end(), pred), m.elements.end());
      return "erase with std::remove_if and resize";
    }
    case 14: {
      keeps_capacity[i] = true;
      if (a.size() != v[j].size()) {
        REQUIRE_THROWS_AS(a.assign(v[j]), std::invalid_argument);
        return "assign of another size (refused)";
      }
      a.assign(v[j]);
      m.elements = model[j].elements;
      return "assign";
    }
    default: {
      keeps_capacity[i] = true;
      a.clear();
      m.elements.clear();
      return "clear";
    }
  }
}

void run_vector_steps(std::uint64_t seed, bool inject_failures) {
  random_steps random(seed);
  records v[2] = {records(resource_number(1)), records(resource_number(2))};
  vector_model model[2] = {{{}, 1}, {{}, 2}};
  for (std::size_t step = 0; step < steps_per_seed(); ++step) {
    const vector_model before[2] = {model[0], model[1]};
    const std::size_t capacity[2] = {v[0].capacity(), v[1].capacity()};
    bool keeps_capacity[2] = {false, false};
    const bool armed = inject_failures && random.one_in(4);
    if (armed) flaky::fail_allocation(1 + long(random.below(2)));
    std::string name;
    bool failed = false;
    try {
      name = vector_step(random, v, model, keeps_capacity);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    const bool injected = armed && flaky::fail_in == 0;
    flaky::disarm();
    INFO("seed " << seed << ", step " << step << ": " << (failed ? "a step that failed" : name));
    REQUIRE(failed == injected);
    if (failed) {
      model[0] = before[0];
      model[1] = before[1];
    }
    for (std::size_t k = 0; k < 2; ++k) {
      check_vector(v[k], model[k], k);
      if (failed || keeps_capacity[k]) CHECK(v[k].capacity() == capacity[k]);
    }
    REQUIRE(flaky::outstanding == held_allocations(v));
  }
}

// A matrix's model: its shape, its elements row-major and the resource it holds.
struct matrix_model {
  std::size_t rows, cols;
  std::vector<int> elements;
  int resource;
};

void check_matrix(const matrix& a, const matrix_model& model, std::size_t slot) {
  INFO("matrix " << slot);
  REQUIRE(a.rows() == model.rows);
  REQUIRE(a.cols() == model.cols);
  CHECK(a.resource().id == model.resource);
  CHECK(a.stream() == fake_stream(model.resource));
  CHECK(a.pitch_bytes() == matrix::pitch_for(a.cols()));
  CHECK(a.allocated_bytes() >= a.rows() * a.pitch_bytes());
  for (std::size_t r = 0; r < a.rows(); ++r) {
    for (std::size_t c = 0; c < a.cols(); ++c)
      if (a(r, c) != model.elements[r * model.cols + c])
        FAIL("element (" << r << ", " << c << ") differs from the model");
    // The padding after each row's elements holds zero bytes, whatever was written.
    const auto* row = reinterpret_cast<const unsigned char*>(a.data()) + r * a.pitch_bytes();
    for (std::size_t b = a.cols() * sizeof(int); b < a.pitch_bytes(); ++b)
      if (row[b] != 0) FAIL("padding byte " << b << " of row " << r << " is " << int(row[b]));
  }
}

std::string matrix_step(random_steps& random, matrix (&v)[2], matrix_model (&model)[2]) {
  const std::size_t i = random.below(2), j = random.below(2);
  matrix& a = v[i];
  matrix_model& m = model[i];
  switch (random.below(13)) {
    case 0: {
      const auto [rows, cols] = random.shape();
      const int id = random.resource_id();
      a = matrix(rows, cols, resource_number(id));
      m = {rows, cols, std::vector<int>(rows * cols, 0), id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " zeros";
    }
    case 1: {
      const auto [rows, cols] = random.shape();
      const int id = random.resource_id(), value = random.value();
      a = matrix(rows, cols, value, resource_number(id));
      m = {rows, cols, std::vector<int>(rows * cols, value), id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " of a value";
    }
    case 2: {
      const auto [rows, cols] = random.shape();
      const int id = random.resource_id();
      const auto dense = random.values(rows * cols);
      a = matrix(dense, rows, cols, resource_number(id));
      m = {rows, cols, dense, id};
      return "construct " + std::to_string(rows) + " x " + std::to_string(cols) + " from a dense vector";
    }
    case 3: {
      a = matrix(v[j]);
      m = model[j];
      return "copy-construct";
    }
    case 4: {
      // Through another pitch policy and back, with given resources.
      const int id = random.resource_id();
      const narrow_matrix narrow(v[j], resource_number(3));
      a = matrix(narrow, resource_number(id));
      m = model[j];
      m.resource = id;
      return "copy through a 16-byte pitch policy";
    }
    case 5: {
      a = v[j];
      m.rows = model[j].rows;
      m.cols = model[j].cols;
      m.elements = model[j].elements;
      return "copy-assign";
    }
    case 6: {
      if (i == j) return "nothing (a move onto itself)";
      a = std::move(v[j]);
      m = model[j];
      model[j] = {0, 0, {}, model[j].resource};
      return "move-assign";
    }
    case 7: {
      matrix moved(std::move(a));
      check_matrix(a, {0, 0, {}, m.resource}, i);  // NOLINT(bugprone-use-after-move)
      a = std::move(moved);
      return "move-construct and move back";
    }
    case 8: {
      swap(v[0], v[1]);
      std::swap(model[0], model[1]);
      return "swap";
    }
    case 9: {
      const auto [rows, cols] = random.shape();
      a.resize(rows, cols);
      std::vector<int> resized(rows * cols, 0);
      for (std::size_t r = 0; r < rows && r < m.rows; ++r)
        for (std::size_t c = 0; c < cols && c < m.cols; ++c) resized[r * cols + c] = m.elements[r * m.cols + c];
      m = {rows, cols, resized, m.resource};
      return "resize to " + std::to_string(rows) + " x " + std::to_string(cols);
    }
    case 10: {
      const int value = random.value();
      a.fill(value);
      m.elements.assign(m.elements.size(), value);
      return "fill";
    }
    case 11: {
      if (random.one_in(2)) {
        if (a.rows() != v[j].rows() || a.cols() != v[j].cols()) {
          REQUIRE_THROWS_AS(a.copy_from(v[j]), std::invalid_argument);
          return "copy_from a matrix of another shape (refused)";
        }
        a.copy_from(v[j]);
        m.elements = model[j].elements;
        return "copy_from the other matrix";
      }
      const std::size_t size = random.one_in(8) ? m.elements.size() + 1 : m.elements.size();
      const auto dense = random.values(size);
      if (size != m.elements.size()) {
        REQUIRE_THROWS_AS(a.copy_from(dense), std::invalid_argument);
        return "copy_from a dense vector of another size (refused)";
      }
      a.copy_from(dense);
      m.elements = dense;
      return "copy_from a dense vector";
    }
    default: {
      for (std::size_t k = 0, writes = random.below(20); k < writes && !m.elements.empty(); ++k) {
        const std::size_t r = random.below(m.rows), c = random.below(m.cols);
        a(r, c) = m.elements[r * m.cols + c] = random.value();
      }
      return "write elements";
    }
  }
}

void run_matrix_steps(std::uint64_t seed, bool inject_failures) {
  random_steps random(seed);
  matrix v[2] = {matrix(resource_number(1)), matrix(resource_number(2))};
  matrix_model model[2] = {{0, 0, {}, 1}, {0, 0, {}, 2}};
  for (std::size_t step = 0; step < steps_per_seed(); ++step) {
    const matrix_model before[2] = {model[0], model[1]};
    const bool armed = inject_failures && random.one_in(4);
    if (armed) flaky::fail_allocation(1 + long(random.below(2)));
    std::string name;
    bool failed = false;
    try {
      name = matrix_step(random, v, model);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    const bool injected = armed && flaky::fail_in == 0;
    flaky::disarm();
    INFO("seed " << seed << ", step " << step << ": " << (failed ? "a step that failed" : name));
    REQUIRE(failed == injected);
    if (failed) {
      model[0] = before[0];
      model[1] = before[1];
    }
    for (std::size_t k = 0; k < 2; ++k) check_matrix(v[k], model[k], k);
    REQUIRE(flaky::outstanding == held_allocations(v));
  }
}

}  // namespace

TEST_CASE("random steps on two host soa_vectors keep them equal to std::vector models") {
  for (const std::uint64_t seed : seeds) run_vector_steps(seed, false);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two host soa_vectors whose allocations fail at random leave them as the models say") {
  for (const std::uint64_t seed : seeds) run_vector_steps(seed, true);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two host pitched_matrices keep them equal to dense models, with zero padding") {
  for (const std::uint64_t seed : seeds) run_matrix_steps(seed, false);
  CHECK(flaky::outstanding == 0);
}

TEST_CASE("random steps on two host pitched_matrices whose allocations fail at random leave them as the models say") {
  for (const std::uint64_t seed : seeds) run_matrix_steps(seed, true);
  CHECK(flaky::outstanding == 0);
}
