// expect: coalesce::for_each: the container is in host_space, whose memory the GPU cannot read; copy it into a device container \(assign_async or copy_from_async from a pinned one\) and pass that
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_matrix.hpp>

void misuse(coalesce::pitched_matrix<float, coalesce::host_space>& m) {
  coalesce::for_each(m, [] __device__(float& x) { x *= 2; });
}
