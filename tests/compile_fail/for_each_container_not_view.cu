// expect: coalesce::for_each: the first argument must be a soa_view, a pitched_view, a cuda::std::span or mdspan of device memory, or a type with a coalesce::view_adapter \(for a soa_vector or pitched_matrix, pass its view\(\)\)
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>

void misuse(coalesce::pitched_matrix<float>& m) {
  coalesce::for_each(m, [] __device__(float& x) { x *= 2; });
}
