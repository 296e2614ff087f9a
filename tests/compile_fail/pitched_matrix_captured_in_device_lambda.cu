// expect: coalesce::pitched_matrix<T, device_space> has no operator\(\): capture m.view\(\) in the device lambda
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cstddef>

// The lambda captures the matrix (a copy of the owner), not its view: the rows are not in it.
void misuse(const coalesce::pitched_matrix<float>& in, coalesce::pitched_matrix<float>& out) {
  const auto doubled = out.view();
  coalesce::for_each_index(doubled, [=] __device__(std::size_t r, std::size_t c) { doubled(r, c) = 2 * in(r, c); });
}
