// The AoS-to-SoA swap: one particle kernel, written once for an array of structs, run on
// Particle* and on coalesce::soa_view<Particle>; then the same update as per-element code handed
// to coalesce::for_each. The table shows what each step buys: bandwidth as a share of
// cudaMemcpy, sectors per request and DRAM bytes.
// Exits 77 (skipped) when there is no GPU, 1 when the two layouts disagree.
#include <coalesce/algorithm.hpp>
#include <coalesce/compact.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

namespace ct = coalesce::testing;

struct Particle {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz);  // the one line that names the fields

// Unchanged user code: Particles is Particle* or coalesce::soa_view<Particle>.
template <class Particles>
__global__ void advance(Particles p, std::size_t n, float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
  }
}

// The same update as per-element code: coalesce::for_each chooses the access (16-byte vectors of
// every column, and only x, y and z stored back).
struct advance_one {
  float dt;
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

// Outside the box [-1, 1)^3: for erase_if on the device and the check on the host.
struct left_the_box {
  __host__ __device__ static bool out(float v) { return v < -1.0f || v >= 1.0f; }
  template <class P>
  __host__ __device__ bool operator()(const P& p) const {
    return out(p.x) || out(p.y) || out(p.z);
  }
};

// The kinetic energy of a particle of unit mass, summed in double.
struct kinetic_energy {
  template <class P>
  __host__ __device__ double operator()(const P& p) const {
    return 0.5 * (double(p.vx) * p.vx + double(p.vy) * p.vy + double(p.vz) * p.vz);
  }
};
struct plus {
  __host__ __device__ double operator()(double a, double b) const { return a + b; }
};

int main() {
  const std::size_t n = std::size_t(1) << 25;
  std::printf("particle update, %zu particles of %zu bytes\n", n, sizeof(Particle));
  if (auto reason = ct::gpu_unavailable_reason()) {
    std::printf("SKIPPED: the measurements need a GPU (%s)\n", reason->c_str());
    return 77;
  }
  std::vector<Particle> particles(n);
  const auto r = ct::random_values<float>(6 * n);
  for (std::size_t i = 0; i < n; ++i)
    particles[i] = {r[6 * i], r[6 * i + 1], r[6 * i + 2], r[6 * i + 3], r[6 * i + 4], r[6 * i + 5]};

  ct::device_buffer<Particle> aos(particles);         // before: an array of structs
  coalesce::soa_vector<Particle> soa(particles);      // after: six 256-byte-aligned columns
  coalesce::soa_vector<Particle> columns(particles);  // and the same, updated by for_each

  ct::bandwidth_meter meter;
  ct::counter_profiler profiler;
  const double bytes = double(n) * 9 * sizeof(float);  // six fields read, three written
  std::printf("cudaMemcpy device-to-device: %.0f GB/s (= 100%%); DRAM peak: %.0f GB/s\n\n",
              meter.memcpy_gigabytes_per_s(), meter.dram_peak_gigabytes_per_s());
  std::printf("%-28s %9s %9s %7s %15s %16s %14s\n", "layout", "GB/s", "% memcpy", "% peak", "load sect/req",
              "store sect/req", "DRAM MB");
  auto report = [&](const char* name, auto launch) {
    const auto bw = meter.measure(launch, bytes);
    if (profiler.available()) {
      const auto m = profiler.measure([&] { launch(0); });
      std::printf("%-28s %9.1f %8.1f%% %6.1f%% %15.2f %16.2f %14.1f\n", name, bw.gigabytes_per_s,
                  100 * bw.ratio_to_memcpy, 100 * bw.fraction_of_dram_peak, m.load_sectors_per_request(),
                  m.store_sectors_per_request(), (m.dram_bytes_read() + m.dram_bytes_write()) / 1e6);
    } else {
      std::printf("%-28s %9.1f %8.1f%% %6.1f%% %15s %16s %14s\n", name, bw.gigabytes_per_s, 100 * bw.ratio_to_memcpy,
                  100 * bw.fraction_of_dram_peak, "n/a", "n/a", "n/a");
    }
  };
  const unsigned blocks = unsigned((n + 255) / 256);
  report("Particle* (AoS)", [&](cudaStream_t s) { advance<<<blocks, 256, 0, s>>>(aos.data(), n, 0.001f); });
  report("soa_view<Particle> (SoA)", [&](cudaStream_t s) { advance<<<blocks, 256, 0, s>>>(soa.view(), n, 0.001f); });
  report("coalesce::for_each (SoA)",
         [&](cudaStream_t s) { coalesce::for_each(columns.view(), advance_one{0.001f}, s); });
  if (!profiler.available()) std::printf("(counters unavailable: %s)\n", profiler.unavailable_reason()->c_str());

  // All three ran the same number of updates; they must agree exactly.
  const auto from_aos = aos.download();
  const auto from_soa = soa.to_vector();
  const auto from_for_each = columns.to_vector();
  for (std::size_t i = 0; i < n; ++i)
    for (const auto* other : {&from_soa[i], &from_for_each[i]})
      if (from_aos[i].x != other->x || from_aos[i].y != other->y || from_aos[i].z != other->z) {
        std::printf("MISMATCH at particle %zu\n", i);
        return 1;
      }
  std::printf("\nall three computed identical particles\n");

  // A step ends by removing the particles that left the box [-1, 1)^3: stably, from all six
  // columns, with the count back on the host to size the vector.
  const left_the_box outside{};
  std::vector<Particle> inside;
  for (const auto& p : from_for_each)
    if (!outside(p)) inside.push_back(p);
  const std::size_t removed = coalesce::erase_if(columns, outside);
  const auto left = columns.to_vector();
  bool same = removed == n - inside.size() && left.size() == inside.size();
  for (std::size_t i = 0; same && i < left.size(); ++i)
    same =
        left[i].x == inside[i].x && left[i].y == inside[i].y && left[i].z == inside[i].z && left[i].vx == inside[i].vx;
  if (!same) {
    std::printf("MISMATCH in the removal of the particles that left the box\n");
    return 1;
  }
  std::printf("removed the %zu particles that left the box; %zu remain, as on the host\n", removed, left.size());

  // And the total kinetic energy of those that remain: one pass over the three velocity columns.
  double on_host = 0.0;
  for (const auto& p : inside) on_host += kinetic_energy{}(p);
  const double energy = coalesce::transform_reduce(columns, kinetic_energy{}, 0.0, plus{});
  if (!(std::abs(energy - on_host) <= 1e-9 * std::abs(on_host))) {
    std::printf("MISMATCH in the kinetic energy: %.17g on the device, %.17g on the host\n", energy, on_host);
    return 1;
  }
  std::printf("their kinetic energy: %.6g, as on the host\n", energy);
  return 0;
}
