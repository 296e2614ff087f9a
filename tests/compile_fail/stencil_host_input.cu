// expect: coalesce::stencil: every input must be a pitched_view, pitched_matrix, pitched_volume_view or
#include <coalesce/stencil.hpp>

void misuse(const coalesce::pitched_matrix<float, coalesce::host_space>& in, coalesce::pitched_matrix<float>& out) {
  coalesce::stencil<1>(coalesce::clamp, in.view(), out, [] __device__(auto n) { return n(0, 1) - n(0, -1); });
}
