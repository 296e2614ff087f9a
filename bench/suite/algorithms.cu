// The algorithm groups of the benchmark: for each piece of work, coalesce against its competitors
// (tests/support/competitors.cuh: one element per thread, the fastest hand-written kernel we know,
// Thrust with par_nosync, CUB) on the same buffers. Every implementation is checked once against
// the host before it is timed.
#include "bench.hpp"

#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>

#include "mixed.hpp"
#include "particles.hpp"

#include <cstdint>
#include <vector>

namespace bench {
namespace {

namespace cc = coalesce_test::competitors;

// dt is a power of two, so v * dt is exact and the device's fused multiply-add rounds as the host does.
constexpr float dt = 0.5f;

using coalesce_test::random_particles;

std::vector<Particle> drifted(std::vector<Particle> p) {
  for (auto& q : p) cc::drift_struct{dt}(q);
  return p;
}

bool same_particles(const std::vector<Particle>& a, const std::vector<Particle>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!coalesce_test::same(a[i], b[i])) return false;
  return true;
}

struct drift {
  template <class P>
  __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

struct reflect_in_place {
  __device__ void operator()(float& x) const { x = 0.25f - x; }
};

// Why a row may run above 100% of cudaMemcpy.
std::string read_heavy_note(const std::string& mix) {
  return mix + ": more bytes read than written, where a copy reads and writes equal amounts; such mixes can run "
               "above 100% of cudaMemcpy, never above the DRAM peak";
}

}  // namespace

void particle_update(runner& r) {
  const std::string group = "particle update in place (6 float columns, 3 written)";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = random_particles(n);
  const auto expected = drifted(initial);
  const coalesce::soa_vector<Particle, coalesce::host_space> initial_columns(initial);
  coalesce::soa_vector<Particle> soa(initial);
  ct::device_buffer<Particle> aos(initial);
  const auto v = soa.view();
  const cc::particle_columns columns{v.column<&Particle::x>(),
                                     v.column<&Particle::y>(),
                                     v.column<&Particle::z>(),
                                     v.column<&Particle::vx>(),
                                     v.column<&Particle::vy>(),
                                     v.column<&Particle::vz>(),
                                     n};
  Particle* structs = aos.data();

  const auto candidates = cc::particle_update(columns, dt) +
                          std::vector<candidate>{
                              cc::particle_update_on_structs(structs, n, dt),
                              {"coalesce::for_each(soa_view)", row_role::library,
                               [=](cudaStream_t s) { coalesce::for_each(v, drift{}, s); },
                               target(targets::particle_update_of_peak), read_heavy_note("6 columns read, 3 written")},
                          };
  for (const auto& c : candidates) {
    const bool on_structs = c.role == row_role::context;
    if (on_structs) {
      aos.upload(initial);
    } else {
      soa.assign(initial_columns);
    }
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(on_structs ? aos.download() : soa.to_vector(), expected)) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 36.0 * double(n));
}

void column_in_place(runner& r) {
  const std::string group = "one float column in place";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 28;
  const auto initial = ct::random_values<float>(n);
  std::vector<float> expected(initial);
  for (auto& e : expected) e = cc::reflect{}(e);
  ct::device_buffer<float> data(initial);
  float* x = data.data();

  const auto candidates =
      cc::column_in_place(x, n) +
      std::vector<candidate>{
          {"coalesce::for_each(span)", row_role::library,
           [=](cudaStream_t s) { coalesce::for_each(cuda::std::span<float>(x, n), reflect_in_place{}, s); },
           target(targets::one_column_of_peak)}};
  for (const auto& c : candidates) {
    data.upload(initial);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (data.download() != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 8.0 * double(n));
}

void column_into_another(runner& r) {
  const std::string group = "one float column into another";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 28;
  const auto initial = ct::random_values<float>(n);
  std::vector<float> expected(initial);
  for (auto& e : expected) e = cc::reflect{}(e);
  const ct::device_buffer<float> data(initial);
  ct::device_buffer<float> out(n);
  const float* x = data.data();
  float* y = out.data();

  const auto candidates = cc::column_into_another(x, y, n) +
                          std::vector<candidate>{{"coalesce::transform(span, span)", row_role::library,
                                                  [=](cudaStream_t s) {
                                                    coalesce::transform(cuda::std::span<const float>(x, n),
                                                                        cuda::std::span<float>(y, n), cc::reflect{}, s);
                                                  },
                                                  target(targets::one_column_of_peak)}};
  for (const auto& c : candidates) {
    out.poison();
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (out.download() != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 8.0 * double(n));
}

// --- eight mixed columns -----------------------------------------------------------------------

namespace {

// The same update as competitors' mix_tuple, on coalesce's element proxy.
struct mix {
  template <class M>
  __host__ __device__ void operator()(M&& m) const {
    coalesce::get<0>(m) += coalesce::get<4>(m) * float(coalesce::get<2>(m) & 7);
    coalesce::get<1>(m) = coalesce::get<5>(m) * double(coalesce::get<3>(m)) - coalesce::get<1>(m);
    coalesce::get<6>(m) += std::int32_t(coalesce::get<7>(m));
  }
};

std::vector<Mixed> random_mixed(std::size_t n) {
  const auto r = ct::random_values<float>(2 * n);
  std::vector<Mixed> m(n);
  for (std::size_t i = 0; i < n; ++i)
    // e and f hold few significant bits, so every product is exact and the device's fused
    // multiply-adds round as the host's separate operations do.
    m[i] = {
        r[2 * i],         double(r[2 * i + 1]), std::int32_t(i * 7919u), std::int16_t(i % 1000), float(i % 1024) * 0.5f,
        double(i % 4096), std::int32_t(i),      std::int16_t(i % 77)};
  return m;
}

bool same_mixed(const std::vector<Mixed>& x, const std::vector<Mixed>& y) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].a != y[i].a || x[i].b != y[i].b || x[i].c != y[i].c || x[i].d != y[i].d || x[i].e != y[i].e ||
        x[i].f != y[i].f || x[i].g != y[i].g || x[i].h != y[i].h)
      return false;
  return x.size() == y.size();
}

}  // namespace

void mixed_columns(runner& r) {
  const std::string group = "8 mixed columns (float, double, int, short), 3 written";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 24;
  const auto initial = random_mixed(n);
  auto expected = initial;
  for (auto& m : expected) mix{}(m);
  const coalesce::soa_vector<Mixed, coalesce::host_space> initial_columns(initial);
  coalesce::soa_vector<Mixed> soa(initial);
  const auto v = soa.view();
  const cc::mixed_columns columns{v.column<0>(), v.column<1>(), v.column<2>(),
                                  v.column<3>(), v.column<4>(), v.column<5>(),
                                  v.column<6>(), v.column<7>(), n};

  const auto candidates =
      cc::mixed_update(columns) + std::vector<candidate>{{"coalesce::for_each(soa_view)", row_role::library,
                                                          [=](cudaStream_t s) { coalesce::for_each(v, mix{}, s); },
                                                          target(targets::mixed_columns_of_peak),
                                                          read_heavy_note("36 bytes read, 16 written per element")}};
  // Bytes the work must move: all 8 columns read (36 B), a, b, g written (16 B).
  for (const auto& c : candidates) {
    soa.assign(initial_columns);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_mixed(soa.to_vector(), expected)) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 52.0 * double(n));
}

// --- pitched rows --------------------------------------------------------------------------------

namespace {

struct reflect_at {
  coalesce::pitched_view<float> v;
  __device__ void operator()(std::size_t i, std::size_t j) const { v(i, j) = 0.25f - v(i, j); }
};

}  // namespace

void pitched_rows(runner& r) {
  const std::string group = "row operation in place, pitched 200000 x 1000 floats";
  std::printf("%s\n", group.c_str());
  const std::size_t rows = 200000, cols = 1000;
  const auto initial = ct::random_values<float>(rows * cols);
  std::vector<float> expected(initial);
  for (auto& e : expected) e = cc::reflect{}(e);
  coalesce::pitched_matrix<float> m(initial, rows, cols);
  ct::device_buffer<float> dense(initial);
  const auto v = m.view();
  float* dense_data = dense.data();

  const auto candidates =
      cc::pitched_in_place(v) +
      std::vector<candidate>{
          cc::column_in_place_with_cub(dense_data, rows * cols, "cub::DeviceTransform, the same floats dense"),
          {"coalesce::for_each_index(r, c), 128 x 4 walk", row_role::library,
           [=](cudaStream_t s) { coalesce::for_each_index(v, reflect_at{v}, s); }, std::nullopt,
           "f(r, c) may read anything, so the walk loads one element per call; no target"},
          {"coalesce::for_each(pitched_view)", row_role::library,
           [=](cudaStream_t s) { coalesce::for_each(v, reflect_in_place{}, s); },
           target(targets::pitched_rows_of_peak)},
      };
  for (const auto& c : candidates) {
    const bool on_dense = c.role == row_role::context;
    if (on_dense) {
      dense.upload(initial);
    } else {
      m.copy_from(initial);
    }
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if ((on_dense ? dense.download() : m.to_vector()) != expected) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 8.0 * double(rows * cols));
}

// --- array of structs ------------------------------------------------------------------------------

void array_of_structs(runner& r) {
  const std::string group = "array of structs in place (Particle*, 24 B), whole structs read and written";
  std::printf("%s\n", group.c_str());
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = random_particles(n);
  const auto expected = drifted(initial);
  ct::device_buffer<Particle> aos(initial);
  Particle* p = aos.data();

  const auto candidates =
      cc::structs_in_place(p, n, dt) +
      std::vector<candidate>{{"coalesce::for_each(Particle*, n), staged", row_role::library,
                              [=](cudaStream_t s) { coalesce::for_each(p, n, cc::drift_struct{dt}, s); },
                              target(targets::array_of_structs_of_peak)}};
  for (const auto& c : candidates) {
    aos.upload(initial);
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(aos.download(), expected)) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 48.0 * double(n));
}

// --- conversion ------------------------------------------------------------------------------------

void conversion(runner& r) {
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = random_particles(n);
  const ct::device_buffer<Particle> aos(initial);
  ct::device_buffer<Particle> back(n);
  coalesce::soa_vector<Particle> soa(n);
  const auto v = soa.view();
  const cc::writable_particle_columns out{v.column<&Particle::x>(),  v.column<&Particle::y>(),
                                          v.column<&Particle::z>(),  v.column<&Particle::vx>(),
                                          v.column<&Particle::vy>(), v.column<&Particle::vz>()};
  const Particle* from = aos.data();
  Particle* to = back.data();

  const std::string split = "array of structs to columns (Particle* to soa_vector)";
  std::printf("%s\n", split.c_str());
  const auto splitters = cc::aos_to_soa(from, out, n) +
                         std::vector<candidate>{{"coalesce::copy_aos_to_soa", row_role::library,
                                                 [=](cudaStream_t s) { coalesce::copy_aos_to_soa(from, v, s); },
                                                 target(targets::conversion_of_peak)}};
  for (const auto& c : splitters) {
    for (float* column : {out.x, out.y, out.z, out.vx, out.vy, out.vz})
      coalesce::throw_on_error(cudaMemset(column, 0xFF, n * sizeof(float)), "cudaMemset (poison)");
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(soa.to_vector(), initial)) r.mismatch(split + ": " + c.name);
  }
  r.measure(split, splitters, 48.0 * double(n));

  const std::string join = "columns to an array of structs (soa_vector to Particle*)";
  std::printf("%s\n", join.c_str());
  const auto cv = soa.const_view();
  const cc::readable_particle_columns in{out.x, out.y, out.z, out.vx, out.vy, out.vz, n};
  const auto joiners =
      cc::soa_to_aos(in, to) + std::vector<candidate>{{"coalesce::copy_soa_to_aos", row_role::library,
                                                       [=](cudaStream_t s) { coalesce::copy_soa_to_aos(cv, to, s); },
                                                       target(targets::conversion_of_peak)}};
  for (const auto& c : joiners) {
    back.poison();
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_particles(back.download(), initial)) r.mismatch(join + ": " + c.name);
  }
  r.measure(join, joiners, 48.0 * double(n));
}

}  // namespace bench
