// expect: coalesce::volume_neighbourhood::at<dz, dy, dx>: the offset is beyond the stencil's radius R
#include <coalesce/stencil.hpp>

void misuse(const coalesce::pitched_volume<float>& in, coalesce::pitched_volume<float>& out) {
  coalesce::stencil<1>(in, out, [] __device__(auto n) { return n.template at<2, 0, 0>() - n(0, 0, 0); });
}
