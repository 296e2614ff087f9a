// The walks' fallbacks as good as their fast paths: a 12-byte field among float columns, a 16-byte
// struct of 4-byte alignment (transform and for_each), and AoS <-> SoA conversion from an array 4
// bytes off 16-byte alignment. Each is exact against a host reference at every head and tail, moves
// in the widest accesses its alignment allows (hardware counters), and keeps at least
// targets::fallback_versus_aligned of the aligned case's bandwidth in the same process
// (tests/support/fallbacks.hpp holds the work; the benchmark runs the same).
//
// This part: the exact results at every head and tail (12-byte fields, chunks that are not whole
// 16-byte words). large_convert.cu and large_for_each.cu: structs too large for the fast paths;
// measured.cu: the counters and bandwidth. Translation units of one executable, so that nvcc
// compiles them in parallel.
#include "fallbacks_common.hpp"

TEST_CASE("a 12-byte field beside float columns: every head and tail exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 4099;
  const auto bodies = fb::random_bodies(n);
  coalesce::soa_vector<fb::Body> v(bodies);
  // Sub-views starting 0 to 4 elements in and ending short of the end: every head, every tail.
  for (std::size_t first = 0; first < 5; ++first) {
    v.assign(coalesce::soa_vector<fb::Body, coalesce::host_space>(bodies));
    auto columns = v.view().columns();
    columns[0] = static_cast<fb::Vec3f*>(columns[0]) + first;
    columns[1] = static_cast<fb::Vec3f*>(columns[1]) + first;
    columns[2] = static_cast<float*>(columns[2]) + first;
    const std::size_t count = n - first - (first % 3);
    coalesce::for_each(coalesce::soa_view<fb::Body>(columns, count), fb::advance_body{});
    const auto got = v.to_vector();
    for (std::size_t i = 0; i < n; ++i) {
      const bool inside = i >= first && i < first + count;
      if (!fb::same(got[i], inside ? fb::advanced(bodies[i]) : bodies[i]))
        FAIL("sub-view from " << first << ": element " << i << " differs");
    }
  }
}

namespace odd_chunks {
struct Double3 {
  double x, y, z;
};
struct Five {
  float a, b, c, d, e;
};
}  // namespace odd_chunks

// Kept whole: these cases measure the walk over 24- and 20-byte columns.
template <>
struct coalesce::keep_whole<odd_chunks::Double3> : std::true_type {};
template <>
struct coalesce::keep_whole<odd_chunks::Five> : std::true_type {};

namespace odd_chunks {
// A 24-byte column makes N = 1 (24-byte chunks); without it, the 20-byte column makes N = 2
// (40-byte chunks). Neither chunk is whole 16-byte words: they are read directly, not staged.
struct Wide {
  Double3 p;
  Five q;
  float w;
};
COALESCE_FIELDS(Wide, p, q, w);
struct Narrow {
  Five q;
  float w;
};
COALESCE_FIELDS(Narrow, q, w);

struct update_wide {
  template <class E>
  __host__ __device__ void operator()(E&& e) const {
    e.p.z += double(e.w);
    e.q.e -= e.w;
  }
};
struct update_narrow {
  template <class E>
  __host__ __device__ void operator()(E&& e) const {
    e.q.a += e.w;
    e.q.e -= e.w;
  }
};

// Runs `f` through for_each on the columns of `initial` and compares every byte with f on the host.
template <class T, class F>
bool exact_after_for_each(const std::vector<T>& initial, F f) {
  coalesce::soa_vector<T> v(initial);
  coalesce::for_each(v.view(), f);
  const auto got = v.to_vector();
  for (std::size_t i = 0; i < initial.size(); ++i) {
    T expected = initial[i];
    f(expected);
    if (std::memcmp(&got[i], &expected, sizeof(T)) != 0) return false;
  }
  return true;
}
}  // namespace odd_chunks

TEST_CASE("columns whose chunks are not whole 16-byte words (24- and 40-byte chunks) are exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  using namespace odd_chunks;
  const std::size_t n = 10007;
  const auto r = ct::random_values<float>(9 * n);
  std::vector<Wide> wide(n);
  std::vector<Narrow> narrow(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* x = &r[9 * i];
    wide[i] = {{x[0], x[1], x[2]}, {x[3], x[4], x[5], x[6], x[7]}, x[8]};
    narrow[i] = {{x[3], x[4], x[5], x[6], x[7]}, x[8]};
  }
  CHECK(exact_after_for_each(wide, update_wide{}));
  CHECK(exact_after_for_each(narrow, update_narrow{}));
}
