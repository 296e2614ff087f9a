// Memory resources for tests of failure paths: they count the allocations they have handed out
// and not taken back, and fail on demand - the next allocation, or the k-th from now - so that a
// test can fail each allocation of an operation in turn and check what the operation left. Each
// one carries an id, and a host one a stream to report, so that a test can tell which resource a
// container holds after a copy, a move or a swap. The counts are static, shared by every copy of
// a resource (containers copy theirs) and so by every container of the process: test cases run
// one at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <cstddef>
#include <new>
#include <stdexcept>

namespace coalesce_test {

// The counts and the failure plan of one kind of flaky resource (Kind: the resource itself, so
// that the host and the device kinds count apart).
template <class Kind>
struct injected_failures {
  static inline long outstanding = 0;     // allocations handed out and not taken back
  static inline long attempts = 0;        // allocations asked for, the failed ones included
  static inline bool fail_next = false;   // the next allocation fails
  static inline long fail_in = 0;         // > 0: the fail_in-th allocation from now fails (1: the next)
  static inline int last_allocator = -1;  // the id of the resource that made the last allocation

  // The allocation that comes `k` (>= 1) after the ones made so far fails.
  static void fail_allocation(long k) { fail_in = k; }
  // Nothing is to fail any more.
  static void disarm() {
    fail_next = false;
    fail_in = 0;
  }

 protected:
  // Counts an allocation asked for; true when the plan says it fails.
  static bool fails_now() {
    ++attempts;
    if (fail_next) {
      fail_next = false;
      return true;
    }
    return fail_in > 0 && --fail_in == 0;
  }
  static void handed_out(int id) {
    ++outstanding;
    last_allocator = id;
  }
};

// Host memory from coalesce::host_resource; a failure is std::bad_alloc, as host_resource's.
// stream() reports the stream it was made with, which host containers never use: a host test can
// follow it through copies and moves without a GPU.
struct flaky_host_resource : injected_failures<flaky_host_resource> {
  using memory_space = coalesce::host_space;

  flaky_host_resource() = default;
  explicit flaky_host_resource(int resource_id, cudaStream_t reported_stream = cudaStream_t{}) noexcept
      : id(resource_id), stream_(reported_stream) {}

  void* allocate(std::size_t bytes) {
    if (fails_now()) throw std::bad_alloc();
    void* p = coalesce::host_resource().allocate(bytes);
    handed_out(id);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    --outstanding;
    coalesce::host_resource().deallocate(p, bytes);
  }
  cudaStream_t stream() const noexcept { return stream_; }

  int id = 0;

 private:
  cudaStream_t stream_{};
};

// Device memory from coalesce::pool_resource on `stream`; a failure is a coalesce::cuda_error
// (cudaErrorMemoryAllocation), as the pool's. With error_after_next set, the next allocation
// succeeds and then leaves a CUDA error pending, as a failed call the program did not check
// would: coalesce's next CUDA call finds it first and throws (throw_if_earlier_error), so the
// step after an allocation - a fill, a copy - fails there. A test that sets it collects the
// error after (cudaGetLastError() is then cudaErrorInvalidDevice).
struct flaky_device_resource : injected_failures<flaky_device_resource> {
  using memory_space = coalesce::device_space;
  static inline bool error_after_next = false;

  flaky_device_resource() = default;
  flaky_device_resource(int resource_id, cudaStream_t stream) noexcept : id(resource_id), pool_(stream) {}

  void* allocate(std::size_t bytes) {
    if (fails_now())
      throw coalesce::cuda_error(cudaErrorMemoryAllocation, "flaky_device_resource: an injected failure");
    void* p = pool_.allocate(bytes);
    if (error_after_next) {
      error_after_next = false;
      int warp = 0;
      (void)::cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, -1);  // there is no device -1
      if (::cudaPeekAtLastError() == cudaSuccess) {
        pool_.deallocate(p, bytes);
        throw std::logic_error("flaky_device_resource: cudaDeviceGetAttribute of device -1 left no error pending");
      }
    }
    handed_out(id);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    --outstanding;
    pool_.deallocate(p, bytes);
  }
  cudaStream_t stream() const noexcept { return pool_.stream(); }

  int id = 0;

 private:
  coalesce::pool_resource pool_{};
};

}  // namespace coalesce_test
