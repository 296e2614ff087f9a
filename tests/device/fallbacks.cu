// The walks' fallbacks as good as their fast paths: a 12-byte field among float columns, a 16-byte
// struct of 4-byte alignment (transform and for_each), and AoS <-> SoA conversion from an array 4
// bytes off 16-byte alignment. Each is exact against a host reference at every head and tail, moves
// in the widest accesses its alignment allows (hardware counters), and keeps at least
// targets::fallback_versus_aligned of the aligned case's bandwidth in the same process
// (tests/support/fallbacks.hpp holds the work; the benchmark runs the same).
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/array>
#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "fallbacks.hpp"
#include "targets.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

namespace ct = coalesce::testing;
namespace fb = coalesce_test::fallbacks;
namespace targets = coalesce_test::targets;
using coalesce_test::profiler;

namespace {

std::size_t count_or_small(std::size_t n) { return ct::under_sanitizer() ? (std::size_t(1) << 14) + 5 : n; }

// The aligned case as the one competitor of a comparison.
std::vector<coalesce_test::candidate> aligned_case(const std::string& name, std::function<void(cudaStream_t)> launch) {
  return {{name + " (the aligned case)", ct::row_role::competitor, std::move(launch)}};
}

}  // namespace

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


namespace large {
// 4096 bytes: a conversion chunk of 6 (24 KiB of shared memory); 2001 bytes of odd size: no chunk
// fits, so it converts element by element.
struct Page {
  cuda::std::array<float, 1023> values;
  float sum;
};
COALESCE_FIELDS(Page, values, sum);
struct Odd {
  cuda::std::array<unsigned char, 2000> bytes;
  unsigned char tag;
};
COALESCE_FIELDS(Odd, bytes, tag);
// for_each on contiguous runs of them: 600 bytes stage in 150 KiB (more than the 48 KiB a block
// gets without opting in); 1204 bytes would need 301 KiB, more than any device gives a block, so
// they are walked unstaged.
template <std::size_t Floats>
struct Record {
  cuda::std::array<float, Floats> values;
  int id;
};
struct bump {
  template <class R>
  __host__ __device__ void operator()(R& r) const {
    for (auto& v : r.values) v += float(r.id % 7);
    r.id += 1;
  }
};

template <class T>
std::vector<T> numbered(std::size_t n) {
  std::vector<T> out(n);
  unsigned char* bytes = reinterpret_cast<unsigned char*>(out.data());
  for (std::size_t b = 0; b < n * sizeof(T); ++b) bytes[b] = static_cast<unsigned char>((b * 2654435761u) >> 13);
  return out;
}

template <class T>
bool round_trip_exact(std::size_t n) {
  const auto structs = numbered<T>(n);
  ct::device_buffer<T> aos(structs);
  coalesce::soa_vector<T> soa(n);
  coalesce::copy_aos_to_soa(static_cast<const T*>(aos.data()), soa.view());
  const auto same_bytes = [&](const std::vector<T>& got) {
    return got.size() == n && std::memcmp(got.data(), structs.data(), n * sizeof(T)) == 0;
  };
  if (!same_bytes(soa.to_vector())) return false;
  aos.poison();
  coalesce::copy_soa_to_aos(soa.const_view(), aos.data());
  return same_bytes(aos.download());
}

template <class T>
bool for_each_exact(std::size_t n) {
  std::vector<T> records(n);  // finite values: a NaN's payload need not survive the device's arithmetic
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < records[i].values.size(); ++k) records[i].values[k] = float((i * 31 + k) % 1000) * 0.25f;
    records[i].id = int(i);
  }
  ct::device_buffer<T> buffer(records);
  coalesce::for_each(cuda::std::span<T>(buffer.data(), n), bump{});
  const auto got = buffer.download();
  for (std::size_t i = 0; i < n; ++i) {
    T expected = records[i];
    bump{}(expected);
    if (std::memcmp(&got[i], &expected, sizeof(T)) != 0) return false;
  }
  return true;
}
}  // namespace large

TEST_CASE("structs too large for the fast paths take a path that works: conversion of 4096- and 2001-byte structs, for_each on 600- and 1204-byte ones") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  static_assert(sizeof(large::Page) == 4096 && coalesce::detail::convert_chunk<large::Page> == 6);
  static_assert(sizeof(large::Odd) == 2001 && coalesce::detail::convert_chunk<large::Odd> == 0);
  CHECK(large::round_trip_exact<large::Page>(1000));
  CHECK(large::round_trip_exact<large::Odd>(777));
  CHECK(large::for_each_exact<large::Record<149>>(3001));  // 600 bytes: staged, opted in
  CHECK(large::for_each_exact<large::Record<300>>(1001));  // 1204 bytes: unstaged
  ct::check_sync("large structs");
}

TEST_CASE("a 12-byte field beside float columns moves in consecutive 16-byte words, DRAM bytes ideal, within 5% of seven float columns") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::twelve_byte_columns work(count_or_small(std::size_t(1) << 25));
  work.fallback(0);
  work.aligned(0);
  CHECK(work.fallback_exact());
  CHECK(work.aligned_exact());
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { work.fallback(0); });
  std::printf("\nfor_each(soa_view<Body>), Vec3f columns: load / store sectors per request %.2f / %.2f, DRAM %.1f MB "
              "(ideal %.1f MB)\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(),
              (m.dram_bytes_read() + m.dram_bytes_write()) / 1e6, work.bytes / 1e6);
  // The float3 columns are staged a warp at a time, so every global request covers 512
  // consecutive bytes (16 sectors), as for the float column; read straight, with lanes 48 bytes
  // apart, each would touch 32. What reaches DRAM is the ideal.
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.dram_bytes_read() + m.dram_bytes_write() <= 1.05 * work.bytes);
  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(
      meter, "12-byte columns (pos, vel) and a float column: coalesce::for_each(soa_view<Body>)",
      [&](cudaStream_t s) { work.fallback(s); },
      aligned_case("coalesce::for_each(soa_view<FlatBody>), 7 float columns", [&](cudaStream_t s) { work.aligned(s); }),
      work.bytes);
  CHECK(c.versus_best_competitor() >= targets::fallback_versus_aligned);
}

TEST_CASE("a 16-byte struct of 4-byte alignment: transform and for_each read it as one 16-byte access, within 5% of the aligned struct") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::under_aligned_structs work(count_or_small(std::size_t(1) << 26));
  work.transform_fallback(0);
  CHECK(work.sums_exact());
  work.transform_aligned(0);
  CHECK(work.sums_exact());
  work.for_each_fallback(0);
  work.for_each_aligned(0);
  CHECK(work.halved_exact(1));
  CHECK(work.aligned_halved_exact(1));
  // At a 4-byte-aligned address the same calls take the element walk, and stay exact.
  {
    fb::under_aligned_structs shifted(4097);
    // 4095 Quads starting one float in (4-byte aligned), then 4095 starting one Quad in (16-byte aligned).
    auto odd = cuda::std::span<fb::Quad>(reinterpret_cast<fb::Quad*>(reinterpret_cast<float*>(shifted.quad_span().data()) + 1), 4095);
    auto quads = shifted.quad_span().subspan(1, 4095);
    coalesce::for_each(odd, fb::quad_halve{});
    coalesce::for_each(quads, fb::quad_halve{});
    const auto got = shifted.quads.download();
    const auto* before = reinterpret_cast<const float*>(shifted.initial.data());
    const auto* after = reinterpret_cast<const float*>(got.data());
    for (std::size_t k = 0; k < 4 * 4097; ++k) {
      // Floats 1 .. 4 x 4095 were halved by the 4-byte-aligned walk; floats 4 .. 4 x 4096 - 1 by the 16-byte one.
      float expected = before[k];
      if (k >= 1 && k < 1 + 4 * 4095) expected *= 0.5f;
      if (k >= 4 && k < 4 + 4 * 4095) expected *= 0.5f;
      if (after[k] != expected) FAIL("float " << k << " differs");
    }
  }
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto t = profiler().measure([&] { work.transform_fallback(0); });
  const auto f = profiler().measure([&] { work.for_each_fallback(0); });
  std::printf("\ntransform(span<const Quad>): load / store sectors per request %.2f / %.2f; for_each(span<Quad>): "
              "%.2f / %.2f\n",
              t.load_sectors_per_request(), t.store_sectors_per_request(), f.load_sectors_per_request(),
              f.store_sectors_per_request());
  // One 16-byte load per lane: 16 sectors a request (four 4-byte loads would make 4 x 4 requests of
  // 16 sectors' span each, 4 sectors per request on average).
  CHECK(t.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(t.store_sectors_per_request() == Approx(4.0).epsilon(0.01));
  CHECK(f.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(f.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  ct::bandwidth_meter meter;
  const auto a = coalesce_test::compare_with_competitors(
      meter, "a 16-byte struct of 4-byte alignment into a float each: coalesce::transform(span<const Quad>)",
      [&](cudaStream_t s) { work.transform_fallback(s); },
      aligned_case("coalesce::transform(span<const AlignedQuad>)", [&](cudaStream_t s) { work.transform_aligned(s); }),
      20.0 * double(work.n));
  CHECK(a.versus_best_competitor() >= targets::fallback_versus_aligned);
  const auto b = coalesce_test::compare_with_competitors(
      meter, "a 16-byte struct of 4-byte alignment in place: coalesce::for_each(span<Quad>)",
      [&](cudaStream_t s) { work.for_each_fallback(s); },
      aligned_case("coalesce::for_each(span<AlignedQuad>)", [&](cudaStream_t s) { work.for_each_aligned(s); }),
      32.0 * double(work.n));
  CHECK(b.versus_best_competitor() >= targets::fallback_versus_aligned);
}

TEST_CASE("AoS <-> SoA conversion from and to an array 4, 8 or 12 bytes off 16-byte alignment is exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 256 * 7 + 13;  // a partial last chunk
  const auto particles = coalesce_test::random_particles(n);
  ct::device_buffer<unsigned char> raw(n * sizeof(Particle) + 16);
  for (std::size_t offset : {4, 8, 12}) {
    auto* structs = reinterpret_cast<Particle*>(raw.data() + offset);
    COALESCE_CUDA_CHECK(cudaMemcpy(structs, particles.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
    coalesce::soa_vector<Particle> soa(n);
    coalesce::copy_aos_to_soa(static_cast<const Particle*>(structs), soa.view());
    const auto columns = soa.to_vector();
    for (std::size_t i = 0; i < n; ++i)
      if (!coalesce_test::same(columns[i], particles[i])) FAIL("offset " << offset << ": AoS -> SoA differs at " << i);
    raw.poison();
    coalesce::copy_soa_to_aos(soa.const_view(), structs);
    std::vector<Particle> back(n);
    COALESCE_CUDA_CHECK(cudaMemcpy(back.data(), structs, n * sizeof(Particle), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (!coalesce_test::same(back[i], particles[i])) FAIL("offset " << offset << ": SoA -> AoS differs at " << i);
  }
}

TEST_CASE("AoS <-> SoA conversion 4 bytes off 16-byte alignment keeps 16-byte copies and is within 5% of the aligned array") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::offset_array_of_structs work(count_or_small(std::size_t(1) << 25));
  Particle* aligned = work.aligned_structs();
  Particle* offset = work.offset_structs();
  for (Particle* structs : {offset, aligned}) {
    work.prepare_to_soa(structs);
    work.to_soa(structs, 0);
    CHECK(work.soa_exact());
    work.prepare_to_aos();
    work.to_aos(structs, 0);
    CHECK(work.aos_exact(structs));
  }
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto in = profiler().measure([&] { work.to_soa(offset, 0); });
  const auto out = profiler().measure([&] { work.to_aos(offset, 0); });
  std::printf("\ncopy_aos_to_soa from +4 bytes: global load sectors per request %.2f; copy_soa_to_aos to +4 bytes: "
              "global store sectors per request %.2f\n",
              in.load_sectors_per_request(), out.store_sectors_per_request());
  // 16-byte words: 12 requests of 16-17 sectors per 6 KiB chunk, and one each for the head's 12
  // bytes and the tail's 4 (about 14 on average; 4-byte words would give 4, a byte loop 1-2).
  CHECK(in.load_sectors_per_request() >= 12.0);
  CHECK(out.store_sectors_per_request() >= 12.0);
  ct::bandwidth_meter meter;
  const auto a = coalesce_test::compare_with_competitors(
      meter, "AoS to SoA from 4 bytes off 16-byte alignment: coalesce::copy_aos_to_soa",
      [&](cudaStream_t s) { work.to_soa(offset, s); },
      aligned_case("coalesce::copy_aos_to_soa from a 16-byte-aligned array", [&](cudaStream_t s) { work.to_soa(aligned, s); }),
      work.bytes);
  CHECK(a.versus_best_competitor() >= targets::fallback_versus_aligned);
  const auto b = coalesce_test::compare_with_competitors(
      meter, "SoA to AoS at 4 bytes off 16-byte alignment: coalesce::copy_soa_to_aos",
      [&](cudaStream_t s) { work.to_aos(offset, s); },
      aligned_case("coalesce::copy_soa_to_aos to a 16-byte-aligned array", [&](cudaStream_t s) { work.to_aos(aligned, s); }),
      work.bytes);
  CHECK(b.versus_best_competitor() >= targets::fallback_versus_aligned);
}
