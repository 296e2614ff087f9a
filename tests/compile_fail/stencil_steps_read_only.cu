// expect: coalesce::stencil: an iterated stencil writes both operands; neither may be read-only
#include <coalesce/stencil.hpp>

void misuse(coalesce::pitched_matrix<float>& u, const coalesce::pitched_matrix<float>& v) {
  coalesce::stencil<1>(100, u.view(), v.view(), [] __device__(auto n) { return n(0, 1) - n(0, -1); });
}
