// The walks' fallbacks, each next to the aligned case of the same work, shared by the device test
// (tests/device/fallbacks.cu) and the benchmark so that both measure the same code. A layout that
// misses the fast path's assumptions - a 12-byte field among float columns, a 16-byte struct of
// 4-byte alignment, an array of structs 4 bytes off 16-byte alignment - must cost at most 5% of
// the bandwidth of the layout that does not (targets::fallback_versus_aligned).
//
// Each case owns its buffers: `aligned` and `fallback` enqueue the two versions of the work on a
// stream, `reset()` restores the input, `fallback_exact()` / `aligned_exact()` compare the last
// result with a host reference, and `bytes` is what the work must read plus write.
#pragma once

#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/span>

#include "particles.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace coalesce_test::fallbacks {

namespace ct = coalesce::testing;
using coalesce_test::same;

// --- a 12-byte field next to float columns ------------------------------------------------------

struct Vec3f {
  float x, y, z;
};

}  // namespace coalesce_test::fallbacks

// Kept whole: this case measures the walk over 12-byte columns, which a user who keeps a type
// whole still gets (a split Vec3f would be the aligned case below).
template <>
struct coalesce::keep_whole<coalesce_test::fallbacks::Vec3f> : std::true_type {};

namespace coalesce_test::fallbacks {
// Positions and velocities as 12-byte columns: 4 elements a chunk, three 16-byte accesses each.
struct Body {
  Vec3f pos;
  Vec3f vel;
  float mass;
};
COALESCE_FIELDS(Body, pos, vel, mass);
// The same 28 bytes as seven float columns: the aligned case.
struct FlatBody {
  float px, py, pz, vx, vy, vz, mass;
};
COALESCE_FIELDS(FlatBody, px, py, pz, vx, vy, vz, mass);

inline constexpr float dt = 0.5f;  // a power of two: v * dt is exact, so device and host agree

struct advance_body {
  template <class B>
  __device__ void operator()(B&& b) const {
    b.pos.x += b.vel.x * dt;
    b.pos.y += b.vel.y * dt;
    b.pos.z += b.vel.z * dt;
  }
};
struct advance_flat_body {
  template <class B>
  __device__ void operator()(B&& b) const {
    b.px += b.vx * dt;
    b.py += b.vy * dt;
    b.pz += b.vz * dt;
  }
};

inline std::vector<Body> random_bodies(std::size_t n) {
  const auto r = ct::random_values<float>(7 * n);
  std::vector<Body> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = {{r[7 * i], r[7 * i + 1], r[7 * i + 2]}, {r[7 * i + 3], r[7 * i + 4], r[7 * i + 5]}, r[7 * i + 6]};
  return v;
}
inline FlatBody flat(const Body& b) { return {b.pos.x, b.pos.y, b.pos.z, b.vel.x, b.vel.y, b.vel.z, b.mass}; }
inline Body advanced(Body b) {
  b.pos.x += b.vel.x * dt;
  b.pos.y += b.vel.y * dt;
  b.pos.z += b.vel.z * dt;
  return b;
}
inline bool same(const Body& a, const Body& b) { return std::memcmp(&a, &b, sizeof(Body)) == 0; }
inline bool same(const FlatBody& a, const FlatBody& b) { return std::memcmp(&a, &b, sizeof(FlatBody)) == 0; }

// for_each(soa_view<Body>) against for_each(soa_view<FlatBody>): 24 bytes read, 12 written.
struct twelve_byte_columns {
  std::vector<Body> initial;
  coalesce::soa_vector<Body, coalesce::host_space> initial_columns;
  coalesce::soa_vector<FlatBody, coalesce::host_space> initial_flat_columns;
  coalesce::soa_vector<Body> bodies;
  coalesce::soa_vector<FlatBody> flat_bodies;
  double bytes;

  explicit twelve_byte_columns(std::size_t n)
      : initial(random_bodies(n)), initial_columns(initial), initial_flat_columns(flat_all(initial)),
        bodies(initial_columns), flat_bodies(initial_flat_columns), bytes(36.0 * double(n)) {}
  static std::vector<FlatBody> flat_all(const std::vector<Body>& b) {
    std::vector<FlatBody> f(b.size());
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = flat(b[i]);
    return f;
  }
  void reset() {
    bodies.assign(initial_columns);
    flat_bodies.assign(initial_flat_columns);
  }
  void fallback(cudaStream_t s) { coalesce::for_each(bodies.view(), advance_body{}, s); }
  void aligned(cudaStream_t s) { coalesce::for_each(flat_bodies.view(), advance_flat_body{}, s); }
  bool fallback_exact() const {
    const auto got = bodies.to_vector();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(got[i], advanced(initial[i]))) return false;
    return true;
  }
  bool aligned_exact() const {
    const auto got = flat_bodies.to_vector();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(got[i], flat(advanced(initial[i])))) return false;
    return true;
  }
};

// --- a 16-byte struct of 4-byte alignment ---------------------------------------------------------

struct Quad {
  float a, b, c, d;
};
struct alignas(16) AlignedQuad {
  float a, b, c, d;
};
static_assert(sizeof(Quad) == 16 && alignof(Quad) == 4 && sizeof(AlignedQuad) == 16);

struct quad_sum {
  template <class Q>
  __device__ float operator()(const Q& q) const {
    return (q.a + q.b) + (q.c + q.d);
  }
};
struct quad_halve {
  template <class Q>
  __device__ void operator()(Q& q) const {
    q.a *= 0.5f;
    q.b *= 0.5f;
    q.c *= 0.5f;
    q.d *= 0.5f;
  }
};

inline std::vector<Quad> random_quads(std::size_t n) {
  const auto r = ct::random_values<float>(4 * n);
  std::vector<Quad> v(n);
  std::memcpy(v.data(), r.data(), n * sizeof(Quad));
  return v;
}

// transform(span<const Quad>, span<float>) against the same with AlignedQuad (20 bytes an
// element), and for_each(span<Quad>) against for_each(span<AlignedQuad>) (32 bytes an element).
// Both buffers are cudaMalloc'd, so the Quads are 16-byte aligned although their type says 4.
struct under_aligned_structs {
  std::vector<Quad> initial;
  ct::device_buffer<Quad> quads;
  ct::device_buffer<AlignedQuad> aligned_quads;
  ct::device_buffer<float> sums;
  std::size_t n;

  explicit under_aligned_structs(std::size_t count)
      : initial(random_quads(count)), quads(count), aligned_quads(count), sums(count), n(count) {
    reset();
  }
  void reset() {
    quads.upload(initial);
    coalesce::throw_on_error(cudaMemcpy(aligned_quads.data(), initial.data(), n * sizeof(Quad), cudaMemcpyHostToDevice),
                             "upload");
  }
  cuda::std::span<Quad> quad_span() { return {quads.data(), n}; }
  cuda::std::span<AlignedQuad> aligned_span() { return {aligned_quads.data(), n}; }
  cuda::std::span<float> sum_span() { return {sums.data(), n}; }

  void transform_fallback(cudaStream_t s) {
    coalesce::transform(cuda::std::span<const Quad>(quad_span()), sum_span(), quad_sum{}, s);
  }
  void transform_aligned(cudaStream_t s) {
    coalesce::transform(cuda::std::span<const AlignedQuad>(aligned_span()), sum_span(), quad_sum{}, s);
  }
  void for_each_fallback(cudaStream_t s) { coalesce::for_each(quad_span(), quad_halve{}, s); }
  void for_each_aligned(cudaStream_t s) { coalesce::for_each(aligned_span(), quad_halve{}, s); }

  bool sums_exact() const {
    const auto got = sums.download();
    for (std::size_t i = 0; i < n; ++i) {
      const Quad& q = initial[i];
      if (got[i] != (q.a + q.b) + (q.c + q.d)) return false;
    }
    return true;
  }
  // After `launches` in-place halvings (exact: powers of two).
  bool halved_exact(int launches) const { return halved(quads.download(), launches); }
  bool aligned_halved_exact(int launches) const {
    std::vector<Quad> got(n);
    coalesce::throw_on_error(cudaMemcpy(got.data(), aligned_quads.data(), n * sizeof(Quad), cudaMemcpyDeviceToHost),
                             "download");
    return halved(got, launches);
  }

 private:
  bool halved(const std::vector<Quad>& got, int launches) const {
    const float scale = 1.0f / float(1 << launches);
    for (std::size_t i = 0; i < n; ++i) {
      const Quad& q = initial[i];
      const Quad e{q.a * scale, q.b * scale, q.c * scale, q.d * scale};
      if (std::memcmp(&got[i], &e, sizeof e) != 0) return false;
    }
    return true;
  }
};

// --- an array of structs off 16-byte alignment -----------------------------------------------------

// copy_aos_to_soa and copy_soa_to_aos from and to Particle arrays at a 16-byte-aligned address
// and at 4 bytes past one (24-byte structs of 4-byte alignment: a legal Particle*).
struct offset_array_of_structs {
  static constexpr std::size_t offset_bytes = 4;
  std::vector<Particle> initial;
  coalesce::soa_vector<Particle, coalesce::host_space> initial_columns;
  ct::device_buffer<unsigned char> raw;  // cudaMalloc'd: 256-byte aligned
  coalesce::soa_vector<Particle> soa;
  std::size_t n;
  double bytes;

  explicit offset_array_of_structs(std::size_t count)
      : initial(random_particles(count)), initial_columns(initial), raw(count * sizeof(Particle) + 16),
        soa(initial_columns), n(count), bytes(48.0 * double(count)) {}
  Particle* aligned_structs() { return reinterpret_cast<Particle*>(raw.data()); }
  Particle* offset_structs() { return reinterpret_cast<Particle*>(raw.data() + offset_bytes); }
  // Before an AoS -> SoA copy: the initial particles at `structs` (the two placements overlap:
  // each case prepares before it runs), every column poisoned.
  void prepare_to_soa(Particle* structs) {
    coalesce::throw_on_error(cudaMemcpy(structs, initial.data(), n * sizeof(Particle), cudaMemcpyHostToDevice),
                             "upload");
    const auto columns = soa.view().columns();
    for (void* column : columns) coalesce::throw_on_error(cudaMemset(column, 0xFF, n * sizeof(float)), "poison");
  }
  // Before an SoA -> AoS copy: the initial particles in the columns, the structs poisoned.
  void prepare_to_aos() {
    soa.assign(initial_columns);
    raw.poison();
  }
  void to_soa(const Particle* structs, cudaStream_t s) { coalesce::copy_aos_to_soa(structs, soa.view(), s); }
  void to_aos(Particle* structs, cudaStream_t s) { coalesce::copy_soa_to_aos(soa.const_view(), structs, s); }
  bool soa_exact() const {
    const auto got = soa.to_vector();
    for (std::size_t i = 0; i < n; ++i)
      if (!same(got[i], initial[i])) return false;
    return true;
  }
  bool aos_exact(const Particle* structs) const {
    std::vector<Particle> got(n);
    coalesce::throw_on_error(cudaMemcpy(got.data(), structs, n * sizeof(Particle), cudaMemcpyDeviceToHost), "download");
    for (std::size_t i = 0; i < n; ++i)
      if (!same(got[i], initial[i])) return false;
    return true;
  }
};

}  // namespace coalesce_test::fallbacks
