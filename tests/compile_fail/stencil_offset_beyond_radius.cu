// expect: coalesce::neighbourhood::at<dr, dc>: the offset is beyond the stencil's radius R; raise R in coalesce::stencil<R>
#include <coalesce/stencil.hpp>

void misuse(const coalesce::pitched_matrix<float>& in, coalesce::pitched_matrix<float>& out) {
  coalesce::stencil<1>(coalesce::clamp, in, out, [] __device__(auto n) { return n.template at<2, 0>(); });
}
