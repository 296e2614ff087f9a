// expect: coalesce::deposit: the grid's elements must be float, double, int, unsigned or unsigned long long \(what atomicAdd adds\); deposit each component of a vector type into a grid of its own
#include <coalesce/deposit.hpp>

struct Charge {
  float x, y, q;
};
COALESCE_FIELDS(Charge, x, y, q);

void misuse(const coalesce::soa_vector<Charge>& particles, coalesce::pitched_matrix<float2>& field) {
  coalesce::deposit(particles, field, [] __device__(auto p, auto acc) { acc.add(0, 0, make_float2(p.q, p.q)); });
}
