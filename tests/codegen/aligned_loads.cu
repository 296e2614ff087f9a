// Compiled to PTX by the codegen.aligned_loads test: an aligned_ptr's load<4> must be one 16-byte
// access, its load_read_only<4> one 16-byte access through the non-coherent path, and a store<4>
// one 16-byte store. No GPU needed: the instructions are in the PTX.
#include <coalesce/aligned.hpp>

__global__ void scale(coalesce::aligned_ptr<const float, 16> in, coalesce::aligned_ptr<float, 16> out, unsigned n) {
  const unsigned i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i + 4 <= n) {
    auto v = in.load<4>(i);
    for (unsigned k = 0; k < 4; ++k) v[k] *= 2.0f;
    out.store<4>(i, v);
  }
}

__global__ void scale_read_only(coalesce::aligned_ptr<const float, 16> in, coalesce::aligned_ptr<float, 16> out,
                                unsigned n) {
  const unsigned i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i + 4 <= n) {
    auto v = in.load_read_only<4>(i);
    for (unsigned k = 0; k < 4; ++k) v[k] *= 2.0f;
    out.store<4>(i, v);
  }
}
