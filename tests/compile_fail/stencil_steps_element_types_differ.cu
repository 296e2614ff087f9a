// expect: coalesce::stencil: an iterated stencil's two operands must hold one element type
#include <coalesce/stencil.hpp>

void misuse(coalesce::pitched_matrix<float>& u, coalesce::pitched_matrix<double>& v) {
  coalesce::stencil<1>(100, coalesce::clamp, u, v, [] __device__(auto n) { return n(0, 1) - n(0, -1); });
}
