// A downstream user's translation unit: include coalesce, use it in host code, in a
// static_assert and in a kernel. It runs the kernel when a GPU is present.
#include <coalesce/coalesce.hpp>

#include <cstdio>

static_assert(coalesce::model::strided_access(4, 4).sectors == 4, "a coalesced float warp reads 4 sectors");

__global__ void sectors_of_stride(unsigned* out) {
  out[threadIdx.x] = coalesce::model::strided_access(4u * (threadIdx.x + 1), 4).sectors;
}

int main() {
  std::printf("coalesce %d.%d.%d\n", COALESCE_VERSION_MAJOR, COALESCE_VERSION_MINOR, COALESCE_VERSION_PATCH);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: the kernel compiled, not launched\n");
    return 0;
  }
  unsigned* out = nullptr;
  COALESCE_CUDA_CHECK(cudaMalloc(&out, 8 * sizeof(unsigned)));
  sectors_of_stride<<<1, 8>>>(out);
  COALESCE_CUDA_CHECK(cudaGetLastError());
  unsigned host[8] = {};
  COALESCE_CUDA_CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  COALESCE_CUDA_CHECK(cudaFree(out));
  for (unsigned i = 0; i < 8; ++i) {
    if (host[i] != coalesce::model::strided_access(4u * (i + 1), 4).sectors) {
      std::printf("mismatch at stride %u floats\n", i + 1);
      return 1;
    }
  }
  std::printf("device and host models agree\n");
  return 0;
}
