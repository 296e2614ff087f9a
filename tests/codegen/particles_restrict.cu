// The particle update hand-written on six __restrict__ SoA columns. codegen.particles prints its
// memory instructions next to the soa_view kernel's without comparing them: __restrict__ lets
// the compiler read vx, vy, vz through the read-only path (LDG.E.CONSTANT) and move loads above
// stores, which a soa_view cannot earn (it cannot promise that its columns do not alias). It is
// also the raw-pointer baseline of the coalesce_compile_cost benchmark (bench/).
#include <cstddef>

__global__ void advance(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                        const float* __restrict__ vx, const float* __restrict__ vy, const float* __restrict__ vz,
                        std::size_t n, float dt) {
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
