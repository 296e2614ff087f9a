// expect: coalesce scans: the operation comes before the stream
#include <coalesce/scan.hpp>

void misuse(cuda::std::span<const int> in, cuda::std::span<int> out, cudaStream_t stream) {
  coalesce::inclusive_scan(in, out, stream);
}
