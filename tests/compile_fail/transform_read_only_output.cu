// expect: coalesce::transform: the output view must be writable
#include <coalesce/algorithm.hpp>
#include <cuda/std/span>

struct twice {
  __device__ float operator()(float x) const { return 2 * x; }
};

void misuse(cuda::std::span<const float> in, cuda::std::span<const float> out) {
  coalesce::transform(in, out, twice{});
}
