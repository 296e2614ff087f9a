// The temporaries group of the benchmark: what a container made and freed inside a simulation
// step costs, from each memory resource, against the same step without it; and to_soa, which
// allocates its result, against the conversion into a container that already exists. A temporary
// from coalesce's pool is held to targets::step_with_temporary_versus_step (at most 1% of the
// step); tests/device/memory.cu measures the same on the host clock.
#include <coalesce/algorithm.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa_convert.hpp>

#include "bench.hpp"
#include "particles.hpp"

#include <string>
#include <type_traits>
#include <vector>

namespace bench {
namespace {

// dt is a power of two, so v * dt is exact and the device rounds as the host does.
constexpr float step_dt = 0.5f;

struct advance {
  __device__ void operator()(coalesce::soa_reference_t<Particle> p) const {
    p.x += p.vx * step_dt;
    p.y += p.vy * step_dt;
    p.z += p.vz * step_dt;
  }
};

bool advanced_once(const std::vector<Particle>& got, const std::vector<Particle>& initial) {
  for (std::size_t i = 0; i < initial.size(); ++i) {
    Particle expected = initial[i];
    expected.x += expected.vx * step_dt;
    expected.y += expected.vy * step_dt;
    expected.z += expected.vz * step_dt;
    if (!coalesce_test::same(got[i], expected)) return false;
  }
  return true;
}

// One step: the update of `particles`, with a same-size soa_vector from Resource made and freed
// on the step's stream around it (as a step's scratch: sorted copies, neighbour lists). A
// resource without a stream (device_synchronous_resource) is made without one.
template <class Resource>
void step_with_temporary(coalesce::soa_view<Particle> particles, cudaStream_t s) {
  const auto resource = [s] {
    if constexpr (std::is_constructible_v<Resource, cudaStream_t>) return Resource(s);
    else return Resource();
  }();
  coalesce::soa_vector<Particle, coalesce::device_space, Resource> scratch{resource};
  scratch.resize_for_overwrite(particles.size());
  coalesce::for_each(particles, advance{}, s);
}

}  // namespace

void temporaries(runner& r) {
  const std::size_t n = std::size_t(1) << 25;  // 768 MiB of particles
  const auto initial = coalesce_test::random_particles(n);
  coalesce::soa_vector<Particle> particles(initial);
  const auto v = particles.view();
  // Two groups: coalesce's pool against the step alone, then the other resources. Measured in one
  // group, rounds interleaved, the cudaMalloc and default-pool rows slowed the pool row's steps
  // that followed them (0.904 of the step alone, against 0.992 measured apart and 1.5 us a cycle
  // on the host clock in tests/device/memory.cu).
  const auto step_alone = candidate{"the step alone: coalesce::for_each(soa_view)", row_role::competitor,
                                    [=](cudaStream_t s) { coalesce::for_each(v, advance{}, s); }};
  const auto check_each = [&](const std::string& group, const std::vector<candidate>& candidates) {
    std::printf("%s\n", group.c_str());
    for (const auto& c : candidates) {
      particles.assign(coalesce::soa_vector<Particle, coalesce::host_space>(initial));
      c.launch(0);
      ct::check_sync(c.name.c_str());
      if (!advanced_once(particles.to_vector(), initial)) r.mismatch(group + ": " + c.name);
    }
    r.measure(group, candidates, 36.0 * double(n));
  };
  check_each("a step with a 768 MiB temporary from coalesce's pool (32 M particles updated in place)",
             {step_alone,
              {"with a temporary from coalesce's pool (pool_resource, the default)", row_role::library,
               [=](cudaStream_t s) { step_with_temporary<coalesce::pool_resource>(v, s); },
               row_target{targets::step_with_temporary_versus_step, targets::particle_update_of_peak}}});
  check_each("the same step with a temporary from the other resources, for contrast",
             {step_alone,
              {"with a temporary from the device's default pool (device_resource)", row_role::competitor,
               [=](cudaStream_t s) { step_with_temporary<coalesce::device_resource>(v, s); }},
              {"with a temporary from cudaMalloc (device_synchronous_resource)", row_role::competitor,
               [=](cudaStream_t s) { step_with_temporary<coalesce::device_synchronous_resource>(v, s); }}});
  {
    const std::string group = "to_soa with its allocation (32 M particles, Particle* to a new soa_vector)";
    std::printf("%s\n", group.c_str());
    const ct::device_buffer<Particle> aos(initial);
    const Particle* structs = aos.data();
    const std::vector<candidate> candidates{
        {"coalesce::copy_aos_to_soa into an existing soa_vector", row_role::competitor,
         [=](cudaStream_t s) { coalesce::copy_aos_to_soa(structs, v, s); }},
        {"coalesce::to_soa, the device's default pool (device_resource)", row_role::competitor,
         [=](cudaStream_t s) { auto made = coalesce::to_soa(structs, n, coalesce::device_resource(s)); }},
        {"coalesce::to_soa, coalesce's pool (the default)", row_role::library,
         [=](cudaStream_t s) { auto made = coalesce::to_soa(structs, n, coalesce::pool_resource(s)); },
         row_target{targets::allocating_versus_existing, targets::conversion_of_peak}},
    };
    for (const auto& c : candidates) {
      c.launch(0);
      ct::check_sync(c.name.c_str());
    }
    const auto got = coalesce::to_soa(structs, n).to_vector();
    bool exact = got.size() == n;
    for (std::size_t i = 0; exact && i < n; ++i) exact = coalesce_test::same(got[i], initial[i]);
    if (!exact) r.mismatch(group + ": coalesce::to_soa");
    r.measure(group, candidates, 48.0 * double(n));
  }
}

}  // namespace bench
