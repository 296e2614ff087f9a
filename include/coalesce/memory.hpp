// coalesce: where a container's elements live and who provides the bytes.
// A memory space (host_space, device_space) says which side of the bus the elements are on; a
// memory resource of that space hands out the allocation. coalesce containers take both as
// template parameters, so a user can plug in a pool, pinned host memory or a counting wrapper.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/byte_copies.hpp>
#include <coalesce/detail/device_pool.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory_space.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce {

/// Every coalesce allocation starts on a 256-byte boundary: two 128-byte lines, what cudaMalloc
/// guarantees, and what a 16-byte vector access or a TMA descriptor needs with room to spare.
inline constexpr std::size_t allocation_alignment = 256;

// A memory resource is any copyable type with
//   using memory_space = host_space or device_space;
//   void* allocate(std::size_t bytes);                  // 256-byte aligned; throws on failure
//   void deallocate(void* p, std::size_t bytes) noexcept;
//   cudaStream_t stream() const noexcept;               // where the container orders its copies
// and, for host memory that the copy engines can reach directly (page-locked),
//   static constexpr bool pinned = true;                // see is_pinned_resource
// The defaults are host_resource and pool_resource (default_resource_t<Space>).
//
// A container orders its copies, its algorithms and, on a stream-ordered resource, the release of
// its memory on the resource's stream. Work on any other stream that uses the memory must be
// ordered by the user, before and after (cudaEventRecord / cudaStreamWaitEvent): in particular a
// container destroyed while another stream still reads it is freed under that work.

namespace detail {

// `p`, which an allocation call that returned `status` wrote, or a cuda_error saying "`what` of
// `bytes` bytes". The runtime also records a failure as the thread's last error: throw_on_error
// collects it, so that the user's next cudaGetLastError() after a launch does not report this
// allocation. (The resources' allocate checks for an earlier error first, so what is collected is
// the allocation's own.)
inline void* allocated_or_throw(cudaError_t status, void* p, const std::string& what, std::size_t bytes) {
  throw_on_error(status, what + " of " + std::to_string(bytes) + " bytes");
  return p;
}

}  // namespace detail

/// Aligned host memory from the global `operator new` (its std::align_val_t form); throws
/// std::bad_alloc on failure.
class host_resource {
 public:
  using memory_space = host_space;  ///< where its memory is

  /// `bytes` bytes, 256-byte aligned (allocation_alignment).
  void* allocate(std::size_t bytes) { return ::operator new(bytes, std::align_val_t{allocation_alignment}); }
  /// Releases what allocate returned.
  void deallocate(void* p, std::size_t /*bytes*/) noexcept {
    ::operator delete(p, std::align_val_t{allocation_alignment});
  }
  /// The null stream. Host memory is taken and given back on the calling thread, and a copy between
  /// a host container and a device one is ordered on the device side's stream.
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

/// Stream-ordered device memory (cudaMallocAsync / cudaFreeAsync from the device's default pool)
/// on `stream`: allocation and release cost no device synchronization. Work on other streams must
/// be ordered after the allocation by the user, as with any stream-ordered allocation. The
/// default pool returns its memory to the driver at every synchronization unless the program
/// raises its release threshold; pool_resource (the default) keeps it.
class device_resource {
 public:
  using memory_space = device_space;  ///< where its memory is

  device_resource() = default;
  /// Allocates and releases on `stream`.
  explicit device_resource(cudaStream_t stream) noexcept : stream_(stream) {}

  /// `bytes` bytes from cudaMallocAsync on stream(); throws coalesce::cuda_error on failure.
  void* allocate(std::size_t bytes) {
    detail::throw_if_earlier_error("coalesce::device_resource::allocate");
    void* p = nullptr;
    const cudaError_t status = ::cudaMallocAsync(&p, bytes, stream_);
    return detail::allocated_or_throw(status, p, "cudaMallocAsync", bytes);
  }
  void deallocate(void* p, std::size_t /*bytes*/) noexcept {
    (void)::cudaFreeAsync(p, stream_);
  }  ///< cudaFreeAsync on stream()
  cudaStream_t stream() const noexcept { return stream_; }  ///< the stream allocation and release are ordered on

 private:
  cudaStream_t stream_{};
};

/// Stream-ordered device memory from coalesce's own pool on the device that was current when the
/// resource was made (see detail::device_pool): freeing and allocating again, as temporaries do,
/// costs no trip to the driver and no synchronization. The default for device containers.
class pool_resource {
 public:
  using memory_space = device_space;  ///< where its memory is

  /// On the null stream, from the pool of the device current now (or, when the runtime cannot say,
  /// of the one current at the first allocation).
  pool_resource() noexcept : device_(detail::current_device_or_none()) {}
  /// On `stream`, from the pool of the device current now (normally the stream's): allocation and
  /// release are ordered on it.
  explicit pool_resource(cudaStream_t stream) noexcept : device_(detail::current_device_or_none()), stream_(stream) {}

  /// `bytes` bytes from the pool, ordered on stream(); throws coalesce::cuda_error on failure.
  /// The null stream is the legacy stream of the device current at the call: allocation and
  /// release on it make the resource's device current for the call, so that they are ordered on
  /// that device's stream whichever device the caller has current (one process driving several
  /// GPUs destroys containers of every one of them).
  void* allocate(std::size_t bytes) {
    detail::throw_if_earlier_error("coalesce::pool_resource::allocate");
    if (device_ < 0) throw_on_error(::cudaGetDevice(&device_), "coalesce::pool_resource: cudaGetDevice");
    const detail::current_device_guard on_device(stream_ == nullptr ? device_ : -1);
    void* p = nullptr;
    const cudaError_t status = ::cudaMallocFromPoolAsync(&p, bytes, detail::device_pool(device_), stream_);
    return detail::allocated_or_throw(
        status, p, "cudaMallocFromPoolAsync (coalesce's pool on device " + std::to_string(device_) + ")", bytes);
  }
  /// Gives `p` back to the pool when stream() reaches this point (cudaFreeAsync): work already
  /// ordered on stream() may still use it, work on other streams must have finished.
  void deallocate(void* p, std::size_t /*bytes*/) noexcept {
    const detail::current_device_guard on_device(stream_ == nullptr ? device_ : -1);
    (void)::cudaFreeAsync(p, stream_);
  }
  /// The stream allocation and release are ordered on, and with them a container's copies and
  /// algorithms.
  cudaStream_t stream() const noexcept { return stream_; }
  /// The device the memory is on (-1 until the first allocation where none was current).
  int device() const noexcept { return device_; }

 private:
  int device_ = -1;
  cudaStream_t stream_{};
};

/// Gives what coalesce's pool on `device` holds beyond `keep_bytes`, and is not in use, back to the
/// driver (cudaMemPoolTrimTo). Memory still allocated, or freed on a stream that has not reached
/// the free, stays.
inline void trim_pool(int device, std::size_t keep_bytes = 0) {
  detail::throw_if_earlier_error("coalesce::trim_pool");
  throw_on_error(::cudaMemPoolTrimTo(detail::device_pool(device), keep_bytes), "cudaMemPoolTrimTo");
}
/// The same on the current device.
inline void trim_pool(std::size_t keep_bytes = 0) {
  detail::throw_if_earlier_error("coalesce::trim_pool");
  int device = 0;
  throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");
  trim_pool(device, keep_bytes);
}
/// The bytes coalesce's pool on `device` holds from the driver, in use or not.
inline std::size_t pool_reserved_bytes(int device) {
  detail::throw_if_earlier_error("coalesce::pool_reserved_bytes");
  std::uint64_t bytes = 0;
  throw_on_error(::cudaMemPoolGetAttribute(detail::device_pool(device), cudaMemPoolAttrReservedMemCurrent, &bytes),
                 "cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)");
  return std::size_t(bytes);
}

/// Page-locked host memory (cudaMallocHost): host containers whose copies to and from the device
/// run at full PCIe / NVLink speed without waiting (assign_async, copy_from_async), can be
/// captured into a CUDA graph, and that a kernel can read where the system maps it. Release
/// (cudaFreeHost) is not stream-ordered: destroy such a container only after the copies that use
/// it have completed.
class pinned_resource {
 public:
  using memory_space = host_space;     ///< where its memory is
  static constexpr bool pinned = true;  ///< page-locked: see is_pinned_resource

  /// `bytes` bytes of page-locked host memory from cudaMallocHost; throws coalesce::cuda_error on
  /// failure.
  void* allocate(std::size_t bytes) {
    detail::throw_if_earlier_error("coalesce::pinned_resource::allocate");
    void* p = nullptr;
    const cudaError_t status = ::cudaMallocHost(&p, bytes);
    return detail::allocated_or_throw(status, p, "cudaMallocHost", bytes);
  }
  /// cudaFreeHost, at once: not ordered after the copies that still use the memory.
  void deallocate(void* p, std::size_t /*bytes*/) noexcept { (void)::cudaFreeHost(p); }
  /// The null stream: a copy between a host container and a device one is ordered on the device
  /// side's stream.
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

/// Managed memory (cudaMallocManaged), migrated on demand: device containers whose bytes host code
/// may also touch (through the raw pointers; the views stay device views).
class managed_resource {
 public:
  using memory_space = device_space;  ///< where its views say it is: device views

  /// `bytes` bytes from cudaMallocManaged, attached globally (any stream may touch them); throws
  /// coalesce::cuda_error on failure.
  void* allocate(std::size_t bytes) {
    detail::throw_if_earlier_error("coalesce::managed_resource::allocate");
    void* p = nullptr;
    const cudaError_t status = ::cudaMallocManaged(&p, bytes);
    return detail::allocated_or_throw(status, p, "cudaMallocManaged", bytes);
  }
  /// cudaFree, which is not stream-ordered: it waits for the device's work before it frees.
  void deallocate(void* p, std::size_t /*bytes*/) noexcept { (void)::cudaFree(p); }
  /// The null stream (the legacy stream): a container's copies and algorithms are ordered there.
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

/// Device memory from cudaMalloc / cudaFree, for code that mixes coalesce containers with
/// libraries that do not respect stream ordering.
class device_synchronous_resource {
 public:
  using memory_space = device_space;  ///< where its memory is

  /// `bytes` bytes from cudaMalloc, usable on any stream once it returns; throws
  /// coalesce::cuda_error on failure.
  void* allocate(std::size_t bytes) {
    detail::throw_if_earlier_error("coalesce::device_synchronous_resource::allocate");
    void* p = nullptr;
    const cudaError_t status = ::cudaMalloc(&p, bytes);
    return detail::allocated_or_throw(status, p, "cudaMalloc", bytes);
  }
  /// cudaFree, which is not stream-ordered: it waits for the device's work before it frees.
  void deallocate(void* p, std::size_t /*bytes*/) noexcept { (void)::cudaFree(p); }
  /// The null stream (the legacy stream): a container's copies and algorithms are ordered there.
  cudaStream_t stream() const noexcept { return cudaStream_t{}; }
};

/// The memory resource of a container in `Space` that names none: its member `type`.
template <class Space>
struct default_resource;
/// Host containers take host_resource: pageable, aligned memory.
template <>
struct default_resource<host_space> {
  using type = host_resource;  ///< host_resource
};
/// Device containers take pool_resource: stream-ordered memory from coalesce's pool.
template <>
struct default_resource<device_space> {
  using type = pool_resource;  ///< pool_resource
};
/// The memory resource a container in `Space` uses when it names none.
template <class Space>
using default_resource_t = typename default_resource<Space>::type;

/// Whether `Resource` hands out page-locked host memory (it says `static constexpr bool pinned =
/// true`, as pinned_resource does). The copy engines read and write such memory directly, so a
/// copy to or from it returns at once and a CUDA graph can capture it; pageable memory is copied
/// through a staging buffer, with the calling thread waiting, and cannot be captured.
template <class Resource, class = void>
struct is_pinned_resource : std::false_type {};
/// A resource that says `pinned`: its value.
template <class Resource>
struct is_pinned_resource<Resource, std::void_t<decltype(Resource::pinned)>> : std::bool_constant<Resource::pinned> {};
/// is_pinned_resource<Resource>::value.
template <class Resource>
inline constexpr bool is_pinned_resource_v = is_pinned_resource<Resource>::value;

namespace detail {

// Whether copies between memory of `Resource` in `Space` and the device can be asynchronous and
// captured into a CUDA graph: device memory, and pinned host memory.
template <class Space, class Resource>
inline constexpr bool copies_asynchronously = std::is_same_v<Space, device_space> || is_pinned_resource_v<Resource>;

// What an asynchronous copy between a container in ToSpace (memory from ToResource) and one in
// FromSpace needs: the device on one side at least (host to host is a memcpy on the calling
// thread), and no pageable host memory on either (CUDA copies it synchronously, through a
// staging buffer that a CUDA graph cannot capture).
template <class ToSpace, class ToResource, class FromSpace, class FromResource>
struct async_copy_between {
  static constexpr bool device_involved =
      std::is_same_v<ToSpace, device_space> || std::is_same_v<FromSpace, device_space>;
  static constexpr bool host_side_pinned =
      copies_asynchronously<ToSpace, ToResource> && copies_asynchronously<FromSpace, FromResource>;
  static constexpr bool possible = device_involved && host_side_pinned;
};

// One allocation from a resource (kept by value, so moving the owner moves both), released on
// destruction: what lets a container build its new state completely before touching its old one
// (the strong guarantee), and leak nothing when a later step throws.
template <class Resource>
class owned_bytes {
 public:
  owned_bytes() = default;
  // No bytes yet, from `resource`: what a moved-from container keeps, so that it still allocates
  // on its own stream.
  explicit owned_bytes(const Resource& resource) noexcept(std::is_nothrow_copy_constructible_v<Resource>)
      : resource_(resource) {}
  // Takes `bytes` bytes (none when 0) whose start is aligned to `alignment` (a power of two);
  // alignments above 256 are reached by over-allocating.
  owned_bytes(const Resource& resource, std::size_t bytes, std::size_t alignment) : resource_(resource) {
    if (bytes == 0) return;
    const std::size_t slack = alignment > allocation_alignment ? alignment - allocation_alignment : 0;
    if (bytes > static_cast<std::size_t>(-1) - slack)
      throw std::length_error("coalesce: an allocation of " + std::to_string(bytes) + " bytes overflows std::size_t");
    allocated_bytes_ = bytes + slack;
    raw_ = resource_.allocate(allocated_bytes_);
    const auto address = reinterpret_cast<std::uintptr_t>(raw_);
    if (address % allocation_alignment != 0) {
      resource_.deallocate(raw_, allocated_bytes_);
      raw_ = nullptr;
      throw std::runtime_error("coalesce: the memory resource returned an address that is not 256-byte aligned");
    }
    aligned_ = reinterpret_cast<void*>((address + alignment - 1) & ~std::uintptr_t(alignment - 1));
  }
  owned_bytes(owned_bytes&& other) noexcept { swap(other); }
  owned_bytes& operator=(owned_bytes&& other) noexcept {
    owned_bytes(std::move(other)).swap(*this);
    return *this;
  }
  owned_bytes(const owned_bytes&) = delete;
  owned_bytes& operator=(const owned_bytes&) = delete;
  ~owned_bytes() {
    if (raw_ != nullptr) resource_.deallocate(raw_, allocated_bytes_);
  }

  void* get() const noexcept { return aligned_; }
  std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }
  const Resource& resource() const noexcept { return resource_; }
  void swap(owned_bytes& other) noexcept {
    using std::swap;
    swap(resource_, other.resource_);
    std::swap(raw_, other.raw_);
    std::swap(aligned_, other.aligned_);
    std::swap(allocated_bytes_, other.allocated_bytes_);
  }

 private:
  Resource resource_{};
  void* raw_ = nullptr;
  void* aligned_ = nullptr;
  std::size_t allocated_bytes_ = 0;
};

}  // namespace detail
}  // namespace coalesce
