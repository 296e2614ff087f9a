// expect: coalesce::stencil: an iterated stencil takes two matrices, coalesce::pitched_view or pitched_matrix, or two volumes
#include <coalesce/stencil.hpp>

#include <cuda/std/span>

void misuse(cuda::std::span<float> u, cuda::std::span<float> v) {
  coalesce::stencil<1>(100, coalesce::clamp, u, v, [] __device__(auto n) { return n(1) - n(-1); });
}
