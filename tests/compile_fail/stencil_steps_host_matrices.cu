// expect: coalesce::stencil: an iterated stencil's operands must be in device memory
#include <coalesce/stencil.hpp>

void misuse(coalesce::pitched_matrix<float, coalesce::host_space>& u,
            coalesce::pitched_matrix<float, coalesce::host_space>& v) {
  coalesce::stencil<1>(100, coalesce::clamp, u, v, [] __device__(auto n) { return n(0, 1) - n(0, -1); });
}
