// coalesce::read_only: a field read through read_only(view) inside for_each gives the same values
// as the plain view (the non-coherent path sees what earlier kernels wrote), for a matrix and a
// volume; codegen.read_only_loads checks that the loads are ld.global.nc.
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/read_only.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <cstddef>
#include <random>
#include <vector>

namespace ct = coalesce::testing;

struct Probe {
  float x, y, z, value;
};
COALESCE_FIELDS(Probe, x, y, z, value);

TEST_CASE("read_only: for_each samples a matrix and a volume written by an earlier kernel, as the plain views do") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 37, cols = 130, depth = 5, n = 10007;
  std::mt19937 random(std::uint32_t(ct::test_seed()));
  std::vector<Probe> host(n);
  for (auto& p : host) p = Probe{float(random() % cols), float(random() % rows), float(random() % depth), 0.0f};
  coalesce::soa_vector<Probe> probes(host);
  coalesce::pitched_matrix<float> field(rows, cols, 0.0f);
  coalesce::pitched_volume<double> volume(depth, rows, cols, 0.0);
  // Written on the device, by a kernel before the reads: what the read-only path must see.
  const auto f = field.view();
  const auto v = volume.view();
  coalesce::for_each_index(f, [=] __device__(std::size_t r, std::size_t c) {
    const std::size_t i = r * cols + c;
    f(r, c) = float(i % 1000) * 0.5f;
    for (std::size_t z = 0; z < depth; ++z) v(z, r, c) = double(i) + 0.25 * double(z);
  });
  const auto sampled = coalesce::read_only(field.view());
  const auto sampled_volume = coalesce::read_only(volume.view());
  coalesce::for_each(probes, [=] __device__(auto p) {
    const auto r = std::size_t(p.y), c = std::size_t(p.x), z = std::size_t(p.z);
    p.value = sampled(r, c) + float(sampled_volume(z, r, c));
  });
  const auto got = probes.to_vector();
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto r = std::size_t(host[k].y), c = std::size_t(host[k].x), z = std::size_t(host[k].z);
    const std::size_t i = r * cols + c;
    const float expected = float(i % 1000) * 0.5f + float(double(i) + 0.25 * double(z));
    if (got[k].value != expected) ++wrong;
  }
  CHECK(wrong == 0);
}
