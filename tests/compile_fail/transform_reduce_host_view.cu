// expect: coalesce::transform_reduce: the view is of host memory; the GPU cannot read it
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>

struct Particle {
  float x, vx;
};
COALESCE_FIELDS(Particle, x, vx);

struct plus {
  __host__ __device__ double operator()(double a, double b) const { return a + b; }
};

double misuse(const coalesce::soa_vector<Particle, coalesce::host_space>& particles) {
  return coalesce::transform_reduce(particles.view(), [] __device__(auto p) { return double(p.vx); }, 0.0, plus{});
}
