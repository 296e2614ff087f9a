// Compiled to PTX by the codegen.read_only_loads test: an element of coalesce::read_only(view), of
// a matrix and of a volume, is loaded through the non-coherent path (ld.global.nc), where the same
// element of the plain view is a coherent load. No GPU needed: the instructions are in the PTX.
#include <coalesce/read_only.hpp>

__global__ void sample_matrix(coalesce::read_only_view<coalesce::pitched_view<const float>> field, const unsigned* r,
                              const unsigned* c, float* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = field(r[i], c[i]);
}

__global__ void sample_volume(coalesce::read_only_view<coalesce::pitched_volume_view<const double>> field,
                              const unsigned* z, double* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = field(z[i], 1, 2);
}
