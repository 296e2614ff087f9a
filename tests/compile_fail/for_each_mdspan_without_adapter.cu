// expect: coalesce: to pass a cuda::std::mdspan to for_each, transform or for_each_index, include <coalesce/view_adapter.hpp> \(or <coalesce/pitched_matrix.hpp>\), which adapts it
#include <coalesce/algorithm.hpp>

#include <cuda/std/mdspan>

void misuse(float* data) {
  cuda::std::mdspan<float, cuda::std::dextents<int, 2>> grid(data, 64, 64);
  coalesce::for_each(grid, [] __device__(float& x) { x *= 2; });
}
