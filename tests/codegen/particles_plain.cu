// The particle update hand-written on six plain SoA columns: particles_restrict.cu without
// __restrict__. This is what codegen.particles holds the soa_view kernel (particles_soa.cu) to:
// the same global loads and stores, in the same order, with the same qualifiers.
#include <cstddef>

__global__ void advance(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz, std::size_t n,
                        float dt) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

void launch_advance(float* x, float* y, float* z, const float* vx, const float* vy, const float* vz, std::size_t n,
                    float dt) {
  advance<<<unsigned((n + 255) / 256), 256>>>(x, y, z, vx, vy, vz, n, dt);
}
