// expect: coalesce::stencil: the inputs and the output must all be matrices
#include <coalesce/stencil.hpp>

void misuse(const coalesce::pitched_volume<float>& in, coalesce::pitched_matrix<float>& out) {
  coalesce::stencil<1>(coalesce::clamp, in, out, [] __device__(auto n) { return n(0, 0, 0); });
}
