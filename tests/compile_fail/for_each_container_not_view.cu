// expect: coalesce::for_each: the first argument must be a soa_view, a pitched_view or a cuda::std::span of device memory \(for a soa_vector or pitched_matrix, pass its view\(\)\)
#include <coalesce/algorithm.hpp>

void misuse(coalesce::pitched_matrix<float>& m) {
  coalesce::for_each(m, [] __device__(float& x) { x *= 2; });
}
