// The reductions group of the benchmark: the total kinetic energy of 32 M particles, coalesce's
// transform_reduce on a soa_view against CUB's TransformReduce and Thrust's transform_reduce on
// the same three velocity columns, each in its fastest form (CUB with its temporary storage
// allocated once outside the timing, Thrust with par_nosync, every result left in device memory).
// Checked against a host sum.
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform_reduce.h>

#include "bench.hpp"
#include "particles.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace bench {
namespace {

using coalesce_test::kinetic_energy;
using coalesce_test::plus;

struct kinetic_energy_of_zip {
  template <class Tuple>
  __host__ __device__ double operator()(const Tuple& v) const {
    const float vx = cuda::std::get<0>(v), vy = cuda::std::get<1>(v), vz = cuda::std::get<2>(v);
    return 0.5 * (double(vx) * vx + double(vy) * vy + double(vz) * vz);
  }
};
// The energy of particle i, read from three raw columns.
struct kinetic_energy_at {
  const float* vx;
  const float* vy;
  const float* vz;
  __host__ __device__ double operator()(std::size_t i) const {
    return 0.5 * (double(vx[i]) * vx[i] + double(vy[i]) * vy[i] + double(vz[i]) * vz[i]);
  }
};

}  // namespace

void reductions(runner& r) {
  const std::size_t n = std::size_t(1) << 25;
  const auto initial = coalesce_test::random_particles(n);
  const coalesce::soa_vector<Particle> particles(initial);
  const auto v = particles.view();
  const float* vx = v.column<&Particle::vx>();
  const float* vy = v.column<&Particle::vy>();
  const float* vz = v.column<&Particle::vz>();
  ct::device_buffer<double> result(1);
  double* out = result.data();

  const thrust::counting_iterator<std::size_t> first(0);
  std::size_t temp_bytes = 0;
  coalesce::throw_on_error(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, out, n, plus{},
                                                               kinetic_energy_at{vx, vy, vz}, 0.0),
                           "cub::DeviceReduce::TransformReduce (sizing)");
  ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
  unsigned char* temp_storage = temp.data();
  const auto zip = thrust::make_zip_iterator(vx, vy, vz);

  double expected = 0.0;
  for (const auto& p : initial) expected += kinetic_energy{}(p);

  double thrust_sum = -1.0;  // where Thrust's row leaves its sum (on the host)
  const std::string group = "kinetic energy of 32 M particles (3 float columns read, one double out)";
  std::printf("%s\n", group.c_str());
  const std::vector<candidate> candidates{
      {"cub::DeviceReduce::TransformReduce over the 3 columns", row_role::competitor,
       [=](cudaStream_t s) {
         std::size_t bytes = temp_bytes;
         coalesce::throw_on_error(cub::DeviceReduce::TransformReduce(temp_storage, bytes, first, out, n, plus{},
                                                                      kinetic_energy_at{vx, vy, vz}, 0.0, s),
                                  "cub::DeviceReduce::TransformReduce");
       }},
      {"thrust::transform_reduce, zip of 3, par_nosync", row_role::competitor,
       [=, &thrust_sum](cudaStream_t s) {
         // Thrust returns the sum to the host: its copy-out waits for the stream, par_nosync or not.
         thrust_sum = thrust::transform_reduce(thrust::cuda::par_nosync.on(s), zip, zip + n, kinetic_energy_of_zip{}, 0.0,
                                               plus{});
       }},
      {"coalesce::transform_reduce(soa_view), result in device memory", row_role::library,
       [=](cudaStream_t s) { coalesce::transform_reduce(v, kinetic_energy{}, 0.0, plus{}, out, s); },
       row_target{targets::versus_best_competitor, targets::reduction_of_peak}},
  };
  for (const auto& c : candidates) {
    result.poison();
    thrust_sum = -1.0;
    c.launch(0);
    ct::check_sync(c.name.c_str());
    const double got = thrust_sum >= 0.0 ? thrust_sum : result.download()[0];
    if (!(std::abs(got - expected) <= 1e-9 * std::abs(expected))) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 12.0 * double(n));
}

}  // namespace bench
