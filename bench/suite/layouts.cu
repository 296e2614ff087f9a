// The layouts group of the benchmark: the same work on coalesce::vector<Particle> in layout::soa,
// layout::aosoa<32> and layout::aos, each row a target against the row the issue names:
//   - the particle update (6 float fields read, 3 written): tiles >= 0.98 x the same on SoA;
//     records >= 0.95 x the staged for_each(Particle*, n) on the same bytes;
//   - convert between every pair of layouts: >= 0.95 x cudaMemcpy of the same bytes;
//   - a random gather of whole particles on records: >= 0.9 x the floor of the reorder group's
//     gathers (32-byte records staged beforehand, one scattered record read a particle);
//   - sort_by_key of 32 M particles on records: >= 1.4 x the same on SoA, and >= 1.0 x CUB's
//     SortPairs of (key, index) followed by the best record gather we can write by hand;
//   - layout::split (48-byte bodies, six hot floats in columns, 24 cold bytes in records): the
//     hot update >= 0.98 x the same on SoA, a random gather of whole bodies >= 1.0 x SoA's, and
//     convert to and from columns and records >= 0.95 x cudaMemcpy, as the other conversions.
// Every row is checked once against the host before it is timed.
#include "bench.hpp"

#include <coalesce/algorithm.hpp>
#include <coalesce/convert.hpp>
#include <coalesce/layout_vector.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cuda/std/span>

#include "particles.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace bench {
namespace {

namespace layout = coalesce::layout;
constexpr float dt = 0.5f;  // a power of two: v * dt is exact, fused or not

struct drift {
  template <class P>
  __host__ __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

bool same_particles(const std::vector<Particle>& a, const std::vector<Particle>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!coalesce_test::same(a[i], b[i])) return false;
  return true;
}

row_target versus(const char* name, double ratio) {
  row_target t;
  t.named_competitor = name;
  t.min_ratio_to_named_competitor = ratio;
  return t;
}

// The reorder group's cell key: 10 bits of each of x, y, z in [-1, 1).
struct cell_key {
  __host__ __device__ static std::uint32_t cell(float v) {
    const int c = int((v + 1.0f) * 512.0f);
    return std::uint32_t(c < 0 ? 0 : c > 1023 ? 1023 : c);
  }
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float x = p.x, y = p.y, z = p.z;
    return cell(x) | cell(y) << 10 | cell(z) << 20;
  }
};

// By hand, on records: a particle's key and index; one record a thread, read as three 8-byte words
// through the read-only path and written in order.
__global__ void record_keys_by_hand(const Particle* __restrict__ p, std::size_t n, std::uint32_t* keys,
                                    std::uint32_t* indices) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  keys[i] = cell_key{}(p[i]);
  indices[i] = std::uint32_t(i);
}
__global__ void gather_records_by_hand(const Particle* __restrict__ in, const std::uint32_t* __restrict__ indices,
                                       std::size_t n, Particle* __restrict__ out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint2* from = reinterpret_cast<const uint2*>(in + indices[i]);
  uint2* to = reinterpret_cast<uint2*>(out + i);
  const uint2 a = __ldg(from), b = __ldg(from + 1), c = __ldg(from + 2);
  to[0] = a, to[1] = b, to[2] = c;
}
// The reorder group's floor: 32-byte records (six floats and two of padding) staged beforehand, one
// read a particle, its fields written to columns.
struct alignas(32) padded_record {
  float v[8];
};
__global__ void stage_padded(const Particle* in, std::size_t n, padded_record* records) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const Particle p = in[i];
  records[i] = padded_record{{p.x, p.y, p.z, p.vx, p.vy, p.vz, 0, 0}};
}
__global__ void gather_padded(const padded_record* __restrict__ records, const std::uint32_t* __restrict__ indices,
                              std::size_t n, float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                              float* __restrict__ vx, float* __restrict__ vy, float* __restrict__ vz) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const padded_record r = records[indices[i]];
  x[i] = r.v[0], y[i] = r.v[1], z[i] = r.v[2], vx[i] = r.v[3], vy[i] = r.v[4], vz[i] = r.v[5];
}
unsigned blocks_of(std::size_t n) { return unsigned((n + 255) / 256); }

void copy_device(void* to, const void* from, std::size_t bytes, cudaStream_t s) {
  coalesce::throw_on_error(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
}

// Gather and sort on records against their competitors; `particles` as the group's input.
void records_reordered(runner& r, const std::vector<Particle>& particles) {
  const std::size_t n = particles.size();
  std::vector<std::uint32_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(ct::test_seed()));
  std::vector<Particle> gathered(n);
  for (std::size_t i = 0; i < n; ++i) gathered[i] = particles[permutation[i]];
  const ct::device_buffer<std::uint32_t> permutation_on_device(permutation);
  const std::uint32_t* indices = permutation_on_device.data();
  const cuda::std::span<const std::uint32_t> order(indices, n);

  const coalesce::vector<Particle, layout::aos> pristine(particles);  // never written
  coalesce::vector<Particle, layout::aos> records_out(n), records_work(n), records_lib(n);
  const coalesce::vector<Particle> soa_pristine(particles);
  coalesce::vector<Particle> soa_out(n), soa_lib(n);
  ct::device_buffer<padded_record> padded(n);
  const Particle* from = pristine.const_view().data();
  Particle* to = records_out.view().data();
  Particle* work = records_work.view().data();
  padded_record* staged = padded.data();
  const auto so = soa_out.view();
  float* x = so.column<&Particle::x>();
  float* y = so.column<&Particle::y>();
  float* z = so.column<&Particle::z>();
  float* vx = so.column<&Particle::vx>();
  float* vy = so.column<&Particle::vy>();
  float* vz = so.column<&Particle::vz>();
  const auto in_records = pristine.const_view();
  const auto out_records = records_out.view();
  const auto in_soa = soa_pristine.const_view();

  {
    const std::string group = "layouts: random gather of whole 24-byte particles";
    std::printf("%s\n", group.c_str());
    stage_padded<<<blocks_of(n), 256>>>(from, n, staged);
    const std::vector<candidate> candidates{
        {"floor: 32-byte records staged beforehand, one read a particle", row_role::competitor,
         [=](cudaStream_t s) { gather_padded<<<blocks_of(n), 256, 0, s>>>(staged, indices, n, x, y, z, vx, vy, vz); }},
        {"hand-written: one 24-byte record per particle, aos to aos", row_role::competitor,
         [=](cudaStream_t s) { gather_records_by_hand<<<blocks_of(n), 256, 0, s>>>(from, indices, n, to); }},
        {"coalesce::gather(vector<Particle>) [soa]", row_role::context,
         [=](cudaStream_t s) { coalesce::gather(in_soa, order, so, s); }},
        {"coalesce::gather(vector<Particle, aos>)", row_role::library,
         [=](cudaStream_t s) { coalesce::gather(in_records, order, out_records, s); },
         row_target{0.0, 0.0, "floor: 32-byte records", 0.9}}};
    for (const auto& c : candidates) {
      c.launch(0);
      ct::check_sync(c.name.c_str());
      const bool to_records = c.name.find("aos") != std::string::npos;
      if (!same_particles(to_records ? records_out.to_vector() : soa_out.to_vector(), gathered))
        r.mismatch(group + ": " + c.name);
    }
    r.measure(group, candidates, (24.0 + 4.0 + 24.0) * double(n));
  }

  {
    std::vector<Particle> sorted = particles;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Particle& a, const Particle& b) { return cell_key{}(a) < cell_key{}(b); });
    const std::string group = "layouts: sort_by_key of particles by cell, records against columns";
    std::printf("%s\n", group.c_str());
    ct::device_buffer<std::uint32_t> key_buffer(2 * n), index_buffer(2 * n);
    std::uint32_t* keys = key_buffer.data();
    std::uint32_t* index_pairs = index_buffer.data();
    cub::DoubleBuffer<std::uint32_t> probe_keys(keys, keys + n), probe_indices(index_pairs, index_pairs + n);
    std::size_t temp_bytes = 0;
    coalesce::throw_on_error(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, probe_keys, probe_indices,
                                                             std::uint32_t(n)),
                             "cub::DeviceRadixSort::SortPairs (sizing)");
    ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
    unsigned char* temp_storage = temp.data();
    auto* soa_lib_ptr = &soa_lib;
    auto* records_lib_ptr = &records_lib;
    const auto* soa_pristine_ptr = &soa_pristine;
    const auto* pristine_ptr = &pristine;
    const std::vector<candidate> candidates{
        {"restoring the records alone (cudaMemcpyAsync)", row_role::context,
         [=](cudaStream_t s) { copy_device(work, from, n * sizeof(Particle), s); }},
        {"CUB: SortPairs of (key, index), then records gathered by hand", row_role::competitor,
         [=](cudaStream_t s) {
           copy_device(work, from, n * sizeof(Particle), s);
           record_keys_by_hand<<<blocks_of(n), 256, 0, s>>>(work, n, keys, index_pairs);
           cub::DoubleBuffer<std::uint32_t> k(keys, keys + n), v(index_pairs, index_pairs + n);
           std::size_t bytes = temp_bytes;
           coalesce::throw_on_error(cub::DeviceRadixSort::SortPairs(temp_storage, bytes, k, v, std::uint32_t(n), 0, 32,
                                                                    s),
                                    "cub::DeviceRadixSort::SortPairs");
           gather_records_by_hand<<<blocks_of(n), 256, 0, s>>>(work, v.Current(), n, to);
         }},
        {"coalesce::sort_by_key(vector<Particle>) [soa]", row_role::competitor,
         [=](cudaStream_t s) {
           soa_lib_ptr->assign_async(*soa_pristine_ptr, s);
           coalesce::sort_by_key(*soa_lib_ptr, cell_key{});
         }},
        {"coalesce::sort_by_key(vector<Particle, aos>)", row_role::library,
         [=](cudaStream_t s) {
           records_lib_ptr->assign_async(*pristine_ptr, s);
           coalesce::sort_by_key(*records_lib_ptr, cell_key{});
         },
         row_target{1.0, 0.0, "coalesce::sort_by_key(vector<Particle>) [soa]", 1.4},
         "every row first restores its input (the context row)"}};
    for (const auto& c : candidates) {
      if (c.role == row_role::context) continue;
      c.launch(0);
      ct::check_sync(c.name.c_str());
      const auto got = c.name.rfind("CUB", 0) == 0               ? records_out.to_vector()
                       : c.name.find("aos") != std::string::npos ? records_lib.to_vector()
                                                                 : soa_lib.to_vector();
      if (!same_particles(got, sorted)) r.mismatch(group + ": " + c.name);
    }
    r.measure(group, candidates, 48.0 * double(n) + 48.0 * double(n));
  }
}

// A body of 48 bytes: six hot floats (the particle update's) and 24 cold bytes read rarely.
struct Body {
  float x, y, z, vx, vy, vz;
  double charge;
  std::uint32_t id, species;
  float mass, radius;
};
}  // namespace
}  // namespace bench
COALESCE_FIELDS(bench::Body, x, y, z, vx, vy, vz, charge, id, species, mass, radius);
namespace bench {
namespace {

bool same_bodies(const std::vector<Body>& a, const std::vector<Body>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Body)) == 0);
}

// layout::split against the layouts it sits between: the update of the hot fields (on columns:
// 36 bytes a body moved, the cold ones untouched; on records: all 48) and a random gather of whole
// bodies (columns: a sector a field; records: one record; split: one hot sector a field and one
// cold record).
void split_bodies(runner& r) {
  const std::size_t n = std::size_t(1) << 24;
  std::vector<Body> initial(n);
  std::mt19937_64 random(ct::test_seed());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i)
    initial[i] = Body{uniform(random),
                      uniform(random),
                      uniform(random),
                      uniform(random),
                      uniform(random),
                      uniform(random),
                      double(uniform(random)),
                      std::uint32_t(i),
                      std::uint32_t(i % 3),
                      1.0f,
                      0.5f};
  using hot = layout::split<layout::fields<&Body::x, &Body::y, &Body::z, &Body::vx, &Body::vy, &Body::vz>>;
  coalesce::vector<Body> soa(initial);
  coalesce::vector<Body, layout::aos> records(initial);
  coalesce::vector<Body, hot> split(initial);
  auto expected = initial;
  for (auto& b : expected) drift{}(b);
  {
    const std::string group = "layouts: split, update of 48-byte bodies' 6 hot float fields (3 written)";
    std::printf("%s\n", group.c_str());
    const auto sv = soa.view();
    const auto rv = records.view();
    const auto hv = split.view();
    const std::vector<candidate> candidates{{"coalesce::for_each(vector<Body>) [soa]", row_role::competitor,
                                             [=](cudaStream_t s) { coalesce::for_each(sv, drift{}, s); }},
                                            {"coalesce::for_each(vector<Body, aos>)", row_role::context,
                                             [=](cudaStream_t s) { coalesce::for_each(rv, drift{}, s); }},
                                            {"coalesce::for_each(vector<Body, split<hot fields>>)", row_role::library,
                                             [=](cudaStream_t s) { coalesce::for_each(hv, drift{}, s); },
                                             versus("coalesce::for_each(vector<Body>) [soa]", 0.98)}};
    for (const auto& c : candidates) c.launch(0);
    ct::check_sync("split update");
    if (!same_bodies(soa.to_vector(), expected)) r.mismatch(group + ": soa");
    if (!same_bodies(records.to_vector(), expected)) r.mismatch(group + ": aos");
    if (!same_bodies(split.to_vector(), expected)) r.mismatch(group + ": split");
    r.measure(group, candidates, 36.0 * double(n));
  }
  {
    const std::string group = "layouts: split, random gather of whole 48-byte bodies";
    std::printf("%s\n", group.c_str());
    std::vector<std::uint32_t> permutation(n);
    std::iota(permutation.begin(), permutation.end(), 0u);
    std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(ct::test_seed() + 1));
    std::vector<Body> gathered(n);
    const auto now = soa.to_vector();
    for (std::size_t i = 0; i < n; ++i) gathered[i] = now[permutation[i]];
    const ct::device_buffer<std::uint32_t> indices(permutation);
    const cuda::std::span<const std::uint32_t> order(indices.data(), n);
    coalesce::vector<Body> soa_out(n);
    coalesce::vector<Body, layout::aos> records_out(n);
    coalesce::vector<Body, hot> split_out(n);
    const auto si = soa.const_view();
    const auto ri = records.const_view();
    const auto hi = split.const_view();
    const auto so = soa_out.view();
    const auto ro = records_out.view();
    const auto ho = split_out.view();
    const std::vector<candidate> candidates{{"coalesce::gather(vector<Body>) [soa]", row_role::competitor,
                                             [=](cudaStream_t s) { coalesce::gather(si, order, so, s); }},
                                            {"coalesce::gather(vector<Body, aos>)", row_role::competitor,
                                             [=](cudaStream_t s) { coalesce::gather(ri, order, ro, s); }},
                                            {"coalesce::gather(vector<Body, split<hot fields>>)", row_role::library,
                                             [=](cudaStream_t s) { coalesce::gather(hi, order, ho, s); },
                                             versus("coalesce::gather(vector<Body>) [soa]", 1.0)}};
    for (const auto& c : candidates) c.launch(0);
    ct::check_sync("split gather");
    if (!same_bodies(soa_out.to_vector(), gathered)) r.mismatch(group + ": soa");
    if (!same_bodies(records_out.to_vector(), gathered)) r.mismatch(group + ": aos");
    if (!same_bodies(split_out.to_vector(), gathered)) r.mismatch(group + ": split");
    r.measure(group, candidates, (48.0 + 4.0 + 48.0) * double(n));
  }
  {
    // Into and out of a split: each body's 48 bytes read once and written once, as a copy.
    const std::string group = "layouts: split, convert to and from columns and records (48-byte bodies)";
    std::printf("%s\n", group.c_str());
    coalesce::vector<Body> soa_out(n);
    coalesce::vector<Body, layout::aos> records_out(n);
    coalesce::vector<Body, hot> split_out(n);
    ct::device_buffer<Body> copy_out(n);
    const Body* raw = records.const_view().data();
    Body* copy_to = copy_out.data();
    const auto si = soa.const_view();
    const auto ri = records.const_view();
    const auto hi = split.const_view();
    const auto so = soa_out.view();
    const auto ro = records_out.view();
    const auto ho = split_out.view();
    const auto memcpy_target = versus("cudaMemcpy", 0.95);
    const std::vector<candidate> candidates{{"cudaMemcpy", row_role::competitor,
                                             [=](cudaStream_t s) {
                                               coalesce::throw_on_error(cudaMemcpyAsync(copy_to, raw, n * sizeof(Body),
                                                                                        cudaMemcpyDeviceToDevice, s),
                                                                        "cudaMemcpyAsync");
                                             }},
                                            {"coalesce::convert soa -> split", row_role::library,
                                             [=](cudaStream_t s) { coalesce::convert(si, ho, s); }, memcpy_target},
                                            {"coalesce::convert split -> soa", row_role::library,
                                             [=](cudaStream_t s) { coalesce::convert(hi, so, s); }, memcpy_target},
                                            {"coalesce::convert aos -> split", row_role::library,
                                             [=](cudaStream_t s) { coalesce::convert(ri, ho, s); }, memcpy_target},
                                            {"coalesce::convert split -> aos", row_role::library,
                                             [=](cudaStream_t s) { coalesce::convert(hi, ro, s); }, memcpy_target}};
    const auto want = soa.to_vector();  // every source holds the drifted bodies now
    if (!same_bodies(records.to_vector(), want) || !same_bodies(split.to_vector(), want))
      r.mismatch(group + ": sources differ");
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      candidates[i].launch(0);
      ct::check_sync(candidates[i].name.c_str());
      const std::string to_name = candidates[i].name.substr(candidates[i].name.rfind(' ') + 1);
      const auto got = to_name == "aos"   ? records_out.to_vector()
                       : to_name == "soa" ? soa_out.to_vector()
                                          : split_out.to_vector();
      if (!same_bodies(got, want)) r.mismatch(group + ": " + candidates[i].name);
    }
    r.measure(group, candidates, 96.0 * double(n));
  }
}

}  // namespace

void layouts(runner& r) {
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = coalesce_test::random_particles(n);
  auto expected = initial;
  for (auto& p : expected) drift{}(p);
  coalesce::vector<Particle> soa(initial);
  coalesce::vector<Particle, layout::aosoa<32>> tiles(initial);
  coalesce::vector<Particle, layout::aos> records(initial);
  ct::device_buffer<Particle> structs(initial);
  const auto soa_view = soa.view();
  const auto tiles_view = tiles.view();
  const auto records_view = records.view();
  Particle* raw = structs.data();

  // The update in place, by the columns it needs (36 bytes a particle) where the layout allows
  // moving only those, and by whole records (48 bytes) where it does not.
  {
    const std::string group = "layouts: particle update in place on columns and tiles (6 float fields, 3 written)";
    std::printf("%s\n", group.c_str());
    const std::vector<candidate> candidates{{"coalesce::for_each(vector<Particle>) [soa]", row_role::competitor,
                                             [=](cudaStream_t s) { coalesce::for_each(soa_view, drift{}, s); }},
                                            {"coalesce::for_each(vector<Particle, aosoa<32>>)", row_role::library,
                                             [=](cudaStream_t s) { coalesce::for_each(tiles_view, drift{}, s); },
                                             versus("coalesce::for_each(vector<Particle>) [soa]", 0.98)}};
    soa.assign(coalesce::soa_vector<Particle, coalesce::host_space>(initial));
    candidates[0].launch(0);
    ct::check_sync("soa");
    if (!same_particles(soa.to_vector(), expected)) r.mismatch(group + ": soa");
    candidates[1].launch(0);
    ct::check_sync("aosoa");
    if (!same_particles(tiles.to_vector(), expected)) r.mismatch(group + ": aosoa<32>");
    r.measure(group, candidates, 36.0 * double(n));
  }
  {
    const std::string group = "layouts: particle update in place on records (24-byte records read and written)";
    std::printf("%s\n", group.c_str());
    const std::vector<candidate> candidates{
        {"coalesce::for_each(Particle*, n) [staged]", row_role::competitor,
         [=](cudaStream_t s) { coalesce::for_each(raw, n, [] __device__(Particle & p) { drift{}(p); }, s); }},
        {"coalesce::for_each(vector<Particle, aos>)", row_role::library,
         [=](cudaStream_t s) { coalesce::for_each(records_view, drift{}, s); },
         versus("coalesce::for_each(Particle*, n) [staged]", 0.95)}};
    candidates[0].launch(0);
    ct::check_sync("Particle*");
    if (!same_particles(structs.download(), expected)) r.mismatch(group + ": Particle*");
    candidates[1].launch(0);
    ct::check_sync("aos");
    if (!same_particles(records.to_vector(), expected)) r.mismatch(group + ": aos");
    r.measure(group, candidates, 48.0 * double(n));
  }

  // Conversions: every element's 24 bytes read once and written once, as a copy of them.
  {
    const std::string group = "layouts: convert between layouts (24-byte particles)";
    std::printf("%s\n", group.c_str());
    coalesce::vector<Particle> soa_out(n);
    coalesce::vector<Particle, layout::aosoa<32>> tiles_out(n);
    coalesce::vector<Particle, layout::aos> records_out(n);
    ct::device_buffer<Particle> copy_out(n);
    const auto so = soa_out.view();
    const auto to = tiles_out.view();
    const auto ro = records_out.view();
    const auto si = soa.const_view();
    const auto ti = tiles.const_view();
    const auto ri = records.const_view();
    Particle* copy_to = copy_out.data();
    const auto memcpy_target = versus("cudaMemcpy", 0.95);
    std::vector<candidate> candidates{{"cudaMemcpy", row_role::competitor,
                                       [=](cudaStream_t s) {
                                         coalesce::throw_on_error(cudaMemcpyAsync(copy_to, raw, n * sizeof(Particle),
                                                                                  cudaMemcpyDeviceToDevice, s),
                                                                  "cudaMemcpyAsync");
                                       }},
                                      {"coalesce::convert soa -> aos", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(si, ro, s); }, memcpy_target},
                                      {"coalesce::convert aos -> soa", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(ri, so, s); }, memcpy_target},
                                      {"coalesce::convert soa -> aosoa<32>", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(si, to, s); }, memcpy_target},
                                      {"coalesce::convert aosoa<32> -> soa", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(ti, so, s); }, memcpy_target},
                                      {"coalesce::convert aos -> aosoa<32>", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(ri, to, s); }, memcpy_target},
                                      {"coalesce::convert aosoa<32> -> aos", row_role::library,
                                       [=](cudaStream_t s) { coalesce::convert(ti, ro, s); }, memcpy_target}};
    const auto want = soa.to_vector();  // every source holds the drifted particles now
    if (!same_particles(tiles.to_vector(), want) || !same_particles(records.to_vector(), want))
      r.mismatch(group + ": sources differ");
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      candidates[i].launch(0);
      ct::check_sync(candidates[i].name.c_str());
      const std::string to_name = candidates[i].name.substr(candidates[i].name.rfind(' ') + 1);
      const auto got = to_name == "aos"   ? records_out.to_vector()
                       : to_name == "soa" ? soa_out.to_vector()
                                          : tiles_out.to_vector();
      if (!same_particles(got, want)) r.mismatch(group + ": " + candidates[i].name);
    }
    r.measure(group, candidates, 48.0 * double(n));
  }
  records_reordered(r, initial);
  split_bodies(r);
}

}  // namespace bench
