// coalesce::testing: the small things every device test needs - is there a usable GPU, checked
// CUDA calls, an owning device buffer, poisoned outputs and fresh random inputs.
// Part of the optional test harness (CMake target coalesce::testing); host code, any compiler.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce::testing {

/// Why device work cannot run in this process, or nothing when a CUDA device is usable: no NVIDIA
/// driver, a driver too old for this program's CUDA runtime, no device, or a context that cannot
/// be created. The check goes as far as creating the primary context, so "driver present but
/// broken" is caught here rather than at the first allocation.
inline std::optional<std::string> gpu_unavailable_reason() {
  const auto cuda_version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  int count = 0;
  cudaError_t status = ::cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)::cudaGetLastError();
    if (status == cudaErrorNoDevice) return std::string("no CUDA device is present");
    if (status == cudaErrorInsufficientDriver) {
      int driver = 0, runtime = 0;
      (void)::cudaDriverGetVersion(&driver);  // 0 when no driver is installed
      (void)::cudaRuntimeGetVersion(&runtime);
      if (driver == 0) return std::string("no NVIDIA driver is installed (its library, libcuda, could not be loaded)");
      return "the NVIDIA driver supports CUDA " + cuda_version(driver) + ", older than this program's CUDA " +
             cuda_version(runtime) + ": update the driver";
    }
    return std::string("cudaGetDeviceCount: ") + ::cudaGetErrorName(status) + ": " + ::cudaGetErrorString(status);
  }
  if (count == 0) return std::string("no CUDA device is present");
  status = ::cudaFree(nullptr);
  if (status != cudaSuccess) {
    std::string reason =
        std::string("creating a CUDA context: ") + ::cudaGetErrorName(status) + ": " + ::cudaGetErrorString(status);
    (void)::cudaGetLastError();
    return reason;
  }
  return std::nullopt;
}

/// Why `gpus` GPUs cannot be used in this process (none at all, or fewer than that many), or
/// nothing when they can: what a multi-GPU test or example prints when it skips.
inline std::optional<std::string> gpus_unavailable_reason(int gpus) {
  if (auto reason = gpu_unavailable_reason()) return reason;
  int count = 0;
  throw_on_error(::cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count < gpus) return "needs " + std::to_string(gpus) + " GPUs in this process, found " + std::to_string(count);
  return std::nullopt;
}

/// True when the environment variable `name` is set to something other than "" or "0".
inline bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

/// True when the device suite runs under compute-sanitizer (the device-check script sets
/// COALESCE_SANITIZER): timings and hardware counters are meaningless there, so tests shrink
/// their problems and skip those assertions.
inline bool under_sanitizer() { return env_flag("COALESCE_SANITIZER"); }

/// True when the device tests take their measurements: COALESCE_TEST_FULL is set (the full preset
/// and scripts/device-check.sh set it) and no sanitizer runs. Otherwise (the quick test preset, a
/// test executable run by hand) each test launches its kernels on small problems, checks their
/// results, and stops before timings and counters.
inline bool measuring() { return env_flag("COALESCE_TEST_FULL") && !under_sanitizer(); }
/// Whether the tests shrink their problems: whenever they do not measure.
inline bool small_problems() { return !measuring(); }

/// Throws cuda_error if the last kernel launch failed; call right after <<<...>>>.
inline void check_launch(const char* what = "kernel launch") { throw_on_error(::cudaGetLastError(), what); }

/// Synchronizes the device and throws cuda_error naming `what` if any earlier work failed.
inline void check_sync(const char* what = "device synchronization") { throw_on_error(::cudaDeviceSynchronize(), what); }

/// A device allocation of `size()` objects of T, owned; moves but never copies.
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "coalesce::testing::device_buffer<T>: T must be trivially copyable");

 public:
  device_buffer() = default;
  /// `count` uninitialized elements (cudaMalloc); throws coalesce::cuda_error on failure.
  explicit device_buffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    void* raw = nullptr;
    throw_on_error(::cudaMalloc(&raw, count * sizeof(T)), "cudaMalloc in coalesce::testing::device_buffer");
    data_ = static_cast<T*>(raw);
  }
  /// A copy of `host` (cudaMemcpy, synchronous).
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) { upload(host); }

  /// Takes other's memory; other is left empty.
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  /// Takes other's memory; this buffer's is freed.
  device_buffer& operator=(device_buffer&& other) noexcept {
    device_buffer(std::move(other)).swap(*this);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (data_ != nullptr) (void)::cudaFree(data_);
  }

  /// Exchanges the memory of two buffers.
  void swap(device_buffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  T* data() noexcept { return data_; }                                     ///< the device memory
  const T* data() const noexcept { return data_; }                         ///< the same, read-only
  std::size_t size() const noexcept { return size_; }                      ///< the number of elements
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }  ///< size() * sizeof(T)

  /// Copies `host` in (cudaMemcpy); throws std::length_error if its size differs from size().
  void upload(const std::vector<T>& host) {
    if (host.size() != size_) throw std::length_error("coalesce::testing::device_buffer::upload: size mismatch");
    throw_on_error(::cudaMemcpy(data_, host.data(), size_bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  /// The elements copied to the host (cudaMemcpy, synchronous).
  std::vector<T> download() const {
    std::vector<T> host(size_);
    throw_on_error(::cudaMemcpy(host.data(), data_, size_bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return host;
  }

  /// Fills every byte with 0xFF before a kernel writes the buffer, so an element the kernel
  /// forgot reads back as a NaN (floats) or -1 (integers) and fails the comparison.
  void poison() { throw_on_error(::cudaMemset(data_, 0xFF, size_bytes()), "cudaMemset (poison)"); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A seed that differs between runs unless COALESCE_TEST_SEED pins it (printed by tests that
/// fail, so a failure can be replayed).
inline std::uint64_t test_seed() {
  if (const char* pinned = std::getenv("COALESCE_TEST_SEED")) return std::strtoull(pinned, nullptr, 10);
  static const std::uint64_t seed = std::random_device{}();
  return seed;
}

/// `count` fresh random values: uniform in [-1, 1) for floating point, all bit patterns of the
/// low 16 bits for integers (never all zero: zeros hide unwritten outputs).
template <class T>
std::vector<T> random_values(std::size_t count, std::uint64_t seed = test_seed()) {
  static_assert(std::is_arithmetic_v<T>, "coalesce::testing::random_values<T>: T must be arithmetic");
  std::mt19937_64 engine(seed);
  std::vector<T> values(count);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& v : values) v = static_cast<T>(dist(engine));
  } else {
    for (auto& v : values) v = static_cast<T>(engine() & 0xFFFF);
  }
  return values;
}

/// The properties of the current device, read once.
inline const cudaDeviceProp& current_device_properties() {
  static const cudaDeviceProp props = [] {
    int device = 0;
    throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp p{};
    throw_on_error(::cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    return p;
  }();
  return props;
}

}  // namespace coalesce::testing
