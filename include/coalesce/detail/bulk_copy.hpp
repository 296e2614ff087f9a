// coalesce::detail: a block's copies between global and shared memory by Hopper's copy engine
// (cp.async.bulk, through libcu++'s cuda::ptx wrappers): one thread asks for a whole run of bytes,
// and the block waits on a shared-memory barrier that counts them in. The threads issue no load
// and no store of their own, so nothing they hold in registers limits the bytes in flight. Users
// never include this header. Needs a CUDA compiler.
//
// Only device code compiled for sm_90 or later may call these (COALESCE_DETAIL_BULK_COPIES is 1
// there); callers keep their threads' copy for other targets, for runs whose address or size is
// not a multiple of 16 bytes (the instruction's rule), and under COALESCE_NO_BULK_COPIES.
#pragma once

#include <coalesce/config.hpp>

#include <cuda/ptx>

#include <cstddef>
#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(COALESCE_NO_BULK_COPIES)
#  define COALESCE_DETAIL_BULK_COPIES 1
#else
#  define COALESCE_DETAIL_BULK_COPIES 0
#endif

namespace coalesce::detail {

// Whether a run at `global` of `bytes` bytes may move as one bulk copy.
COALESCE_HOST_DEVICE inline bool bulk_copyable(const void* global, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(global) % 16 == 0 && bytes % 16 == 0 && bytes > 0 && bytes < (1u << 20);
}

#if COALESCE_DETAIL_BULK_COPIES

// A block's barrier for its bulk loads, in static shared memory, and the phase the block waits
// for next. Every thread of the block calls each member, in the same order.
class bulk_load_barrier {
 public:
  // The block's barrier, initialised; ends with a block-wide barrier.
  COALESCE_DEVICE COALESCE_FORCEINLINE explicit bulk_load_barrier(std::uint64_t& word) : word_(&word) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      cuda::ptx::mbarrier_init(word_, 1);  // one arrival a phase: the thread that asks for the bytes
      // The initialisation, visible to the copy engine before any copy may complete on it.
      cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
  }

  // Copies `bytes` bytes (bulk_copyable) from `from` to the shared `to`, and returns when they
  // have arrived. The caller has made sure no thread still reads `to`.
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(void* to, const void* from, std::uint32_t bytes) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           word_, bytes);
      cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, to, from, bytes, word_);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(word_, phase_)) {
    }
    phase_ ^= 1u;
  }

 private:
  std::uint64_t* word_;
  std::uint32_t phase_ = 0;
};

// Copies `bytes` bytes (bulk_copyable) from the shared `from` to `to`. Every thread that wrote
// `from` calls bulk_store_fence() after its writes and before the block-wide barrier that precedes
// this call; bulk_store returns once the engine has read `from` (it may then be written again).
COALESCE_DEVICE COALESCE_FORCEINLINE void bulk_store_fence() { cuda::ptx::fence_proxy_async(cuda::ptx::space_shared); }

COALESCE_DEVICE COALESCE_FORCEINLINE void bulk_store(void* to, const void* from, std::uint32_t bytes) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, to, from, bytes);
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }
}

// Waits until the block's bulk stores have been written, not only read: a kernel calls it before
// it ends, so that its writes are done when the kernel is.
COALESCE_DEVICE COALESCE_FORCEINLINE void bulk_stores_done() {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
}

#endif  // COALESCE_DETAIL_BULK_COPIES

}  // namespace coalesce::detail
