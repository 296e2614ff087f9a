// expect: coalesce::deposit: the grid's elements must be float, double, int, unsigned, unsigned long long, float2, float4 or double2 \(what atomicAdd adds\); deposit into a grid of each field of a struct
#include <coalesce/deposit.hpp>

struct Charge {
  float x, y, q;
};
COALESCE_FIELDS(Charge, x, y, q);

void misuse(const coalesce::soa_vector<Charge>& particles, coalesce::pitched_matrix<short>& counts) {
  coalesce::deposit(particles, counts, [] __device__(auto p, auto acc) { acc.add(0, 0, short(p.q)); });
}
