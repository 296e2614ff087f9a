// coalesce::detail: coalesce's own memory pool on each device, and the current-device guard that
// orders a null stream's work on the right device. Users reach them through pool_resource and
// trim_pool (<coalesce/memory.hpp>); they never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#if !defined(__GNUC__) && !defined(__clang__)
#  include <atomic>  // GCC and Clang: the pool's slots use the compiler's atomic builtins instead
#endif
#include <stdexcept>
#include <string>

namespace coalesce::detail {

// The current device, or -1 where there is none to ask (no driver, no GPU): resources record
// their device when made, and a host-only program may make a device container it never fills.
inline int current_device_or_none() noexcept {
  const cudaError_t pending = ::cudaPeekAtLastError();
  int device = -1;
  if (collect_own(::cudaGetDevice(&device), pending) != cudaSuccess) return -1;
  return device;
}

// Makes `device` current for its lifetime, and the device that was current current again after
// (a negative device, or the one already current, changes nothing). Where a null stream stands
// for a device's legacy stream, that device must be current for the call to be ordered there.
class current_device_guard {
 public:
  explicit current_device_guard(int device) noexcept {
    if (device < 0) return;
    int current = -1;
    // Errors of these calls are collected here, so that they are not reported as a later call's;
    // an error the caller left pending stays.
    const cudaError_t pending = ::cudaPeekAtLastError();
    if (collect_own(::cudaGetDevice(&current), pending) != cudaSuccess) return;
    if (current == device) return;
    if (collect_own(::cudaSetDevice(device), pending) == cudaSuccess) previous_ = current;
  }
  ~current_device_guard() {
    if (previous_ >= 0) (void)::cudaSetDevice(previous_);
  }
  current_device_guard(const current_device_guard&) = delete;
  current_device_guard& operator=(const current_device_guard&) = delete;

 private:
  int previous_ = -1;
};

inline constexpr int pooled_devices = 64;

// Makes coalesce's pool on `device` (see device_pool).
inline cudaMemPool_t make_device_pool(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  throw_on_error(::cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (coalesce's pool)");
  // Keep everything freed. And no opportunistic reuse: with it, every allocation asks whether the
  // frees on other streams have completed, which measured 2 us a call against 0.6 us without
  // (768 MiB blocks on an NVIDIA H200, CUDA 13.0). Memory freed on one stream is still reused on
  // another, after a dependency on the free that the pool inserts (internal dependencies).
  std::uint64_t keep_everything = ~std::uint64_t(0);
  int no = 0;
  cudaError_t status = ::cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything);
  if (status == cudaSuccess) status = ::cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &no);
  if (status != cudaSuccess) {
    (void)::cudaMemPoolDestroy(pool);
    throw_on_error(status, "cudaMemPoolSetAttribute (coalesce's pool)");
  }
  return pool;
}

// The slot of coalesce's pool on `device`, read and set atomically. GCC's and Clang's atomic
// builtins rather than std::atomic: <atomic> alone costs an nvcc compile more than soa.hpp's own
// code, and every unit that includes a container includes this.
#if defined(__GNUC__) || defined(__clang__)
inline cudaMemPool_t* pool_slots() {
  static cudaMemPool_t slots[pooled_devices] = {};
  return slots;
}
inline cudaMemPool_t pool_in_slot(int device) { return __atomic_load_n(&pool_slots()[device], __ATOMIC_ACQUIRE); }
// Puts `pool` in the empty slot of `device` and returns it, or returns what another thread put
// there first.
inline cudaMemPool_t claim_pool_slot(int device, cudaMemPool_t pool) {
  cudaMemPool_t expected = nullptr;
  if (__atomic_compare_exchange_n(&pool_slots()[device], &expected, pool, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return pool;
  return expected;
}
#else
inline std::atomic<cudaMemPool_t>* pool_slots() {
  static std::atomic<cudaMemPool_t> slots[pooled_devices];
  return slots;
}
inline cudaMemPool_t pool_in_slot(int device) { return pool_slots()[device].load(std::memory_order_acquire); }
inline cudaMemPool_t claim_pool_slot(int device, cudaMemPool_t pool) {
  cudaMemPool_t expected = nullptr;
  return pool_slots()[device].compare_exchange_strong(expected, pool, std::memory_order_acq_rel) ? pool : expected;
}
#endif

// coalesce's own memory pool on `device`, made on first use and kept for the life of the process.
// Its release threshold is everything, so memory a container frees stays in the pool for the
// next one, where the device's default pool hands it back to the driver at every synchronization.
// Measured on an NVIDIA H200, CUDA 13.0 (tests/device/memory.cu), what a construct + destroy cycle
// of a 768 MiB soa_vector adds to a step that ends with a synchronization: 1.5 us from this pool
// (0.49% of one for_each pass over it), 1547 us from the default pool, 353 us with cudaMalloc /
// cudaFree; to_soa of 32 M particles with its allocation: 0.962 of cudaMemcpy from this pool,
// 0.362 from the default pool. The process's default pool is left as
// the program set it; trim_pool gives the memory back.
inline cudaMemPool_t device_pool(int device) {
  if (device < 0 || device >= pooled_devices)
    throw std::out_of_range("coalesce: device " + std::to_string(device) + " has no memory pool (devices 0 to " +
                            std::to_string(pooled_devices - 1) + " do)");
  if (const cudaMemPool_t pool = pool_in_slot(device)) return pool;
  const cudaMemPool_t made = make_device_pool(device);
  const cudaMemPool_t kept = claim_pool_slot(device, made);
  if (kept != made) (void)::cudaMemPoolDestroy(made);  // another thread made one first
  return kept;
}

}  // namespace coalesce::detail
