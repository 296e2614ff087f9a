// A host memory resource for tests of failure paths: it counts what it has handed out and not
// taken back, and can be told to fail its next allocation.
#pragma once

#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <new>

namespace coalesce_test {

struct flaky_host_resource {
  using memory_space = coalesce::host_space;
  static inline long outstanding = 0;
  static inline bool fail_next = false;

  void* allocate(std::size_t bytes) {
    if (fail_next) {
      fail_next = false;
      throw std::bad_alloc();
    }
    void* p = coalesce::host_resource().allocate(bytes);
    ++outstanding;
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    --outstanding;
    coalesce::host_resource().deallocate(p, bytes);
  }
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

}  // namespace coalesce_test
