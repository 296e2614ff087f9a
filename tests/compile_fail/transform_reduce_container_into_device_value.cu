// expect: coalesce::transform_reduce\(view, f, init, op, device_value&\): pass the container.s view \(v.view\(\)\)
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>

#include <cuda/std/functional>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

void misuse(const coalesce::soa_vector<Particle>& particles, coalesce::device_value<double>& energy) {
  coalesce::transform_reduce(
      particles, [] __device__(auto p) { return double(p.vx) * p.vx; }, 0.0, cuda::std::plus<>{}, energy);
}
