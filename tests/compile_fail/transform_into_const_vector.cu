// expect: a device soa_vector, coalesce::vector or pitched_matrix is taken as the input, and, not const, as the output
#include <coalesce/algorithm.hpp>

struct Particle {
  float x, vx;
};

struct swap_fields {
  template <class E>
  __device__ Particle operator()(const E& e) const {
    return Particle{e.vx, e.x};
  }
};

// The output is const: transform cannot write it (and never writes into a copy of it).
void run(const coalesce::soa_vector<Particle>& in, const coalesce::soa_vector<Particle>& out) {
  coalesce::transform(in, out, swap_fields{});
}
