// expect: coalesce::transform: a soa_view output is not supported yet
#include <coalesce/algorithm.hpp>
#include <cuda/std/span>

struct Point {
  float x, y;
};

struct spread {
  __device__ Point operator()(float v) const { return {v, -v}; }
};

void misuse(cuda::std::span<const float> in, coalesce::soa_view<Point> out) { coalesce::transform(in, out, spread{}); }
