// coalesce: device_value<T>, one T in device memory that the device writes and the host reads
// when it asks. It is where a reduction leaves its result without a wait -
// transform_reduce(view, f, init, op, result) - so that a CUDA graph can record the reduction and
// the host reads each replay's result after it. Host-capable (no kernels).
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/container_capture.hpp>
#include <coalesce/detail/nvtx.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce {

/// One T in device memory from `Resource` (coalesce's pool by default), allocated, written and
/// released on the resource's stream (stream()), as the containers' storage is. Device code writes
/// it through data(); get() copies it to the host once the stream has reached it.
///
/// Capture: construction allocates, and get() waits for the stream, so both refuse with
/// std::logic_error naming the call, before they do anything, while the stream is being captured
/// into a CUDA graph; data() and stream() may be handed to work the capture records (a reduction
/// into it), and get() after a replay reads what that replay wrote. Like a container, a
/// device_value whose stream is being captured must not be destroyed or move-assigned to (its
/// release cannot be recorded), and work on another stream that writes or reads it must be ordered
/// against stream() by the caller.
///
/// Move-only: a move takes the storage and the resource, and leaves the source holding no value
/// (data() null, get() throws std::logic_error) with a copy of its resource; swap exchanges both.
template <class T, class Resource = pool_resource>
class device_value {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> && !std::is_const_v<T> &&
                    !std::is_volatile_v<T>,
                "coalesce::device_value<T>: T must be a trivially copyable, default-constructible, non-const object "
                "type (it moves between host and device as bytes); hold a plain struct of the values you need");
  static_assert(std::is_same_v<typename Resource::memory_space, device_space>,
                "coalesce::device_value<T, Resource>: Resource must allocate device memory (pool_resource, "
                "device_resource, managed_resource or one of yours in device_space); a host value needs no "
                "device_value");

 public:
  using value_type = T;            ///< the type of the value held
  using resource_type = Resource;  ///< what allocates its device memory

  /// Holds `initial` (T{}, so that a get() before any device write reads defined bytes), copied in
  /// on the resource's stream; the copy has read `initial` when the constructor returns. Throws
  /// std::logic_error while that stream is being captured, coalesce::cuda_error if the allocation
  /// or the copy fails (having released what it took).
  explicit device_value(const T& initial = T{}, const Resource& resource = Resource()) : storage_(resource) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::device_value::device_value");
    constexpr const char* what = "coalesce::device_value(initial, resource)";
    detail::refuse_capture_of<device_space, Resource>(detail::uncapturable::allocates, resource.stream(), what,
                                                      "construct it before the capture begins");
    detail::owned_bytes<Resource> bytes(resource, sizeof(T),
                                        alignof(T) > allocation_alignment ? alignof(T) : allocation_alignment);
    // From a copy on the stack, which is pageable: CUDA stages a pageable source before the call
    // returns, so the copy may go next. (`initial` itself might be pinned, which the copy engine
    // would read later, after it may have changed.)
    const T source = initial;
    throw_on_error(::cudaMemcpyAsync(bytes.get(), &source, sizeof(T), cudaMemcpyHostToDevice, resource.stream()),
                   "coalesce::device_value: cudaMemcpyAsync of the initial value");
    storage_.swap(bytes);
  }
  /// Holds T{}, from `resource`.
  explicit device_value(const Resource& resource) : device_value(T{}, resource) {}

  /// Takes other's memory and a copy of its resource; other holds nothing after.
  device_value(device_value&& other) noexcept(std::is_nothrow_copy_constructible_v<Resource>)
      : storage_(other.resource()) {
    storage_.swap(other.storage_);
  }
  /// Takes other's memory and resource; this value's memory is released on its stream.
  device_value& operator=(device_value&& other) noexcept(std::is_nothrow_copy_constructible_v<Resource>) {
    device_value(std::move(other)).swap(*this);
    return *this;
  }
  /// No copies: one would allocate and copy on a stream, which the caller should see; construct
  /// another from get() instead.
  device_value(const device_value&) = delete;
  device_value& operator=(const device_value&) = delete;
  ~device_value() = default;

  void swap(device_value& other) noexcept { storage_.swap(other.storage_); }  ///< exchanges memory and resources
  friend void swap(device_value& a, device_value& b) noexcept { a.swap(b); }

  /// The value in device memory (null once moved from), for device code and for calls that write
  /// it on stream().
  T* data() noexcept { return static_cast<T*>(storage_.get()); }
  const T* data() const noexcept { return static_cast<const T*>(storage_.get()); }  ///< the same, read-only
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }  ///< the resource's stream
  const Resource& resource() const noexcept { return storage_.resource(); }      ///< what allocated the value

  /// The value as the device left it: copied to the host on stream(), after everything enqueued
  /// there before the call, and waited for. Throws std::logic_error while stream() is being
  /// captured (read it after the replay) or once the value was moved from; coalesce::cuda_error if
  /// the copy or the wait fails (an error of the work before it, such as a kernel's illegal
  /// address, is reported here).
  T get() const {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::device_value::get");
    constexpr const char* what = "coalesce::device_value::get";
    if (data() == nullptr)
      throw std::logic_error(std::string(what) + ": this device_value was moved from and holds no value");
    detail::refuse_capture_of<device_space, Resource>(
        detail::uncapturable::waits, stream(), what,
        "read it once the graph has run (cudaGraphLaunch, then get() outside the capture)");
    T value{};
    throw_on_error(::cudaMemcpyAsync(&value, data(), sizeof(T), cudaMemcpyDeviceToHost, stream()),
                   "coalesce::device_value::get: cudaMemcpyAsync");
    throw_on_error(::cudaStreamSynchronize(stream()), "coalesce::device_value::get: cudaStreamSynchronize");
    return value;
  }

 private:
  detail::owned_bytes<Resource> storage_;
};

}  // namespace coalesce
