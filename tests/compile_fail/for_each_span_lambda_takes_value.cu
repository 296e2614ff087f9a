// expect: coalesce::for_each: f takes the element by value \(a copy of T\) and returns nothing, so what it changes is lost
#include <coalesce/algorithm.hpp>

#include <cuda/std/span>

void misuse(cuda::std::span<float> values) {
  coalesce::for_each(values, [] __device__(float x) { x *= 2; });
}
