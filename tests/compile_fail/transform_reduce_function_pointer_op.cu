// expect: coalesce::transform_reduce: op is a pointer to a function, which device code cannot call
#include <coalesce/reduce.hpp>

#include <cuda/std/span>

long larger(long a, long b) { return a > b ? a : b; }

long misuse(cuda::std::span<const int> values) {
  return coalesce::transform_reduce(values, [] __device__(int x) { return long(x); }, 0L, &larger);
}
