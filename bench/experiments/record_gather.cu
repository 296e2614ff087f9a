// An experiment, built on demand (target coalesce_experiment_record_gather, outside ALL): the random
// gather of whole elements from each layout.
//   - Records (24-byte particles, layout::aos to layout::aos): the library's element kernel
//     (detail::gather_elements_kernel) with 1, 2, 4 and 8 elements a thread in flight, beside
//     coalesce::gather, one record a thread by hand, and the floor of the benchmark (32-byte
//     records staged beforehand, one read a particle).
//   - Tiles (aosoa<32>) and a split (48-byte bodies, six hot floats): coalesce::gather, which stages
//     the input as records first, against the direct element kernel (a sector a leaf at each
//     index), and against the same gather on columns and on records.
// Every output is checked against the host's gather first.
#include <coalesce/layout_vector.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include "median_time.hpp"

#include <cuda/std/span>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace layout = coalesce::layout;

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);

struct Body {
  float x, y, z, vx, vy, vz;
  double charge;
  std::uint32_t id, species;
  float mass, radius;
};
COALESCE_FIELDS(Body, x, y, z, vx, vy, vz, charge, id, species, mass, radius);
using hot = layout::split<layout::fields<&Body::x, &Body::y, &Body::z, &Body::vx, &Body::vy, &Body::vz>>;

using experiments::median_ms;

namespace {

struct row {
  std::string name;
  std::function<void()> run;
  std::function<bool()> right;
  double best = 1e30;
};

void report(const char* title, std::vector<row>& rows, double bytes) {
  for (auto& r : rows) {
    r.run();
    if (!r.right()) std::printf("MISMATCH: %s\n", r.name.c_str());
  }
  for (int round = 0; round < 3; ++round)
    for (auto& r : rows) r.best = std::min(r.best, median_ms(r.run));
  std::printf("== %s (%s)\n", title, cudaGetErrorString(cudaGetLastError()));
  for (const auto& r : rows)
    std::printf("%-58s %.4f ms  %7.1f GB/s  %.3fx the first row\n", r.name.c_str(), r.best, bytes / r.best / 1e6,
                rows[0].best / r.best);
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

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
                              std::size_t n, Particle* __restrict__ out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const padded_record r = records[indices[i]];
  out[i] = Particle{r.v[0], r.v[1], r.v[2], r.v[3], r.v[4], r.v[5]};
}
__global__ void gather_by_hand(const Particle* __restrict__ in, const std::uint32_t* __restrict__ indices,
                               std::size_t n, Particle* __restrict__ out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint2* from = reinterpret_cast<const uint2*>(in + indices[i]);
  uint2* to = reinterpret_cast<uint2*>(out + i);
  const uint2 a = __ldg(from), b = __ldg(from + 1), c = __ldg(from + 2);
  to[0] = a, to[1] = b, to[2] = c;
}

// The library's element kernel with Batch elements a thread in flight.
template <bool InRecords, bool OutRecords, unsigned Batch, class In, class Out>
void element_kernel(const In& in, const std::uint32_t* indices, std::size_t n, const Out& out) {
  using namespace coalesce::detail;
  const unsigned blocks =
      unsigned((n + std::size_t(Batch) * permute_threads - 1) / (std::size_t(Batch) * permute_threads));
  gather_elements_kernel<InRecords, OutRecords, Batch><<<blocks, permute_threads>>>(in, indices, n, out);
}

std::vector<std::uint32_t> shuffled(std::size_t n) {
  std::vector<std::uint32_t> p(n);
  std::iota(p.begin(), p.end(), 0u);
  std::shuffle(p.begin(), p.end(), std::mt19937_64(7));
  return p;
}

void records(std::size_t n) {
  std::mt19937_64 random(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Particle> host(n);
  for (auto& p : host)
    p = Particle{uniform(random), uniform(random), uniform(random), uniform(random), uniform(random), uniform(random)};
  const auto permutation = shuffled(n);
  std::vector<Particle> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = host[permutation[i]];
  std::uint32_t* indices = nullptr;
  cudaMalloc(&indices, n * sizeof(std::uint32_t));
  cudaMemcpy(indices, permutation.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
  const cuda::std::span<const std::uint32_t> order(indices, n);
  const coalesce::vector<Particle, layout::aos> in(host);
  coalesce::vector<Particle, layout::aos> out(n);
  padded_record* staged = nullptr;
  cudaMalloc(&staged, n * sizeof(padded_record));
  stage_padded<<<unsigned((n + 255) / 256), 256>>>(in.view().data(), n, staged);
  const auto iv = in.const_view();
  const auto ov = out.view();
  const auto right = [&] { return same(out.to_vector(), expected); };
  std::vector<row> rows{
      {"floor: 32-byte records staged beforehand",
       [&] { gather_padded<<<unsigned((n + 255) / 256), 256>>>(staged, indices, n, ov.data()); }, right},
      {"by hand: one 24-byte record a thread",
       [&] { gather_by_hand<<<unsigned((n + 255) / 256), 256>>>(iv.data(), indices, n, ov.data()); }, right},
      {"coalesce::gather(aos -> aos)", [&] { coalesce::gather(iv, order, ov); }, right},
      {"element kernel, 1 a thread", [&] { element_kernel<true, true, 1>(iv, indices, n, ov); }, right},
      {"element kernel, 2 a thread", [&] { element_kernel<true, true, 2>(iv, indices, n, ov); }, right},
      {"element kernel, 4 a thread", [&] { element_kernel<true, true, 4>(iv, indices, n, ov); }, right},
      {"element kernel, 8 a thread", [&] { element_kernel<true, true, 8>(iv, indices, n, ov); }, right}};
  report("random gather of 24-byte particles, records to records", rows, (24.0 + 4.0 + 24.0) * double(n));
  cudaFree(staged);
  cudaFree(indices);
}

// coalesce::gather from Layout into the same layout, staged and direct, beside soa and aos.
template <class T, class Layout>
void staged_against_direct(const char* title, const std::vector<T>& host) {
  const std::size_t n = host.size();
  const auto permutation = shuffled(n);
  std::vector<T> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = host[permutation[i]];
  std::uint32_t* indices = nullptr;
  cudaMalloc(&indices, n * sizeof(std::uint32_t));
  cudaMemcpy(indices, permutation.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
  const cuda::std::span<const std::uint32_t> order(indices, n);
  const coalesce::vector<T, Layout> in(host);
  coalesce::vector<T, Layout> out(n);
  const coalesce::vector<T> soa_in(host);
  coalesce::vector<T> soa_out(n);
  const coalesce::vector<T, layout::aos> aos_in(host);
  coalesce::vector<T, layout::aos> aos_out(n);
  const auto iv = in.const_view();
  const auto ov = out.view();
  std::vector<row> rows{
      {"coalesce::gather, columns (soa)", [&] { coalesce::gather(soa_in.const_view(), order, soa_out.view()); },
       [&] { return same(soa_out.to_vector(), expected); }},
      {"coalesce::gather, records (aos)", [&] { coalesce::gather(aos_in.const_view(), order, aos_out.view()); },
       [&] { return same(aos_out.to_vector(), expected); }},
      {"coalesce::gather (staged through records)", [&] { coalesce::gather(iv, order, ov); },
       [&] { return same(out.to_vector(), expected); }},
      {"element kernel, direct, 4 a thread", [&] { element_kernel<false, false, 4>(iv, indices, n, ov); },
       [&] { return same(out.to_vector(), expected); }}};
  report(title, rows, (2.0 * sizeof(T) + 4.0) * double(n));
  cudaFree(indices);
}

}  // namespace

int main() {
  records(std::size_t(1) << 25);

  std::mt19937_64 random(2);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Particle> particles(std::size_t(1) << 25);
  for (auto& p : particles)
    p = Particle{uniform(random), uniform(random), uniform(random), uniform(random), uniform(random), uniform(random)};
  staged_against_direct<Particle, layout::aosoa<32>>("random gather of 24-byte particles, aosoa<32>", particles);

  std::vector<Body> bodies(std::size_t(1) << 24);
  for (std::size_t i = 0; i < bodies.size(); ++i)
    bodies[i] = Body{uniform(random),
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
  staged_against_direct<Body, hot>("random gather of 48-byte bodies, split<6 hot floats>", bodies);
}
