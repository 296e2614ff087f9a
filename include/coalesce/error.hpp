// coalesce: the exception thrown when a CUDA runtime call fails, and whose failure it was.
// Every runtime failure in coalesce surfaces as a cuda_error carrying the CUDA error's name and
// text, thrown only after whatever the failing operation had taken has been released. An error
// that an earlier CUDA call of the program left pending is reported as that call's, never as
// coalesce's, and stays pending for the program to collect; an error coalesce's own calls raise
// is collected before it is thrown, so that nothing of coalesce's is left for the program's next
// cudaGetLastError() to find.
#pragma once
/// @file

#include <coalesce/config.hpp>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace coalesce {

/// The exception for a failed CUDA runtime call: what() names the operation that failed, then the
/// CUDA error's name and text ("coalesce: ... failed: cudaErrorMemoryAllocation: out of memory");
/// code() is the error.
class cuda_error : public std::runtime_error {
 public:
  /// The failure of `what_failed` (an operation's name) with `code`.
  cuda_error(cudaError_t code, const std::string& what_failed)
      : std::runtime_error(describe(code, what_failed)), code_(code) {}

  /// The CUDA error code that caused the failure.
  cudaError_t code() const noexcept { return code_; }

 private:
  static std::string describe(cudaError_t code, const std::string& what_failed) {
    std::string text = "coalesce: " + what_failed + " failed: ";
    text += ::cudaGetErrorName(code);
    text += ": ";
    text += ::cudaGetErrorString(code);
    return text;
  }

  cudaError_t code_;
};

/// Throws cuda_error if `code` is not cudaSuccess; `what_failed` names the operation. The runtime
/// also recorded the failure as the calling thread's last error: it is collected first
/// (cudaGetLastError), since the exception reports it. A sticky error (an illegal address) stays
/// all the same: the runtime returns it from every later call until the process ends.
inline void throw_on_error(cudaError_t code, const char* what_failed) {
  if (code != cudaSuccess) {
    (void)::cudaGetLastError();
    throw cuda_error(code, what_failed);
  }
}
/// The same with the operation's name as a std::string.
inline void throw_on_error(cudaError_t code, const std::string& what_failed) {
  throw_on_error(code, what_failed.c_str());
}

namespace detail {

// Errors that say CUDA cannot run here at all (no driver, no device), which every call returns
// from the start: no earlier call of the program caused them, so they are reported as the
// failure of the coalesce call that meets them.
constexpr bool cuda_unusable_here(cudaError_t code) noexcept {
  return code == cudaErrorInsufficientDriver || code == cudaErrorNoDevice || code == cudaErrorInitializationError ||
         code == cudaErrorSystemDriverMismatch || code == cudaErrorCompatNotSupportedOnDevice;
}

// Called first by every coalesce operation that makes CUDA calls, before it allocates, queries,
// copies or launches anything: an error that an earlier CUDA call left behind, and nobody
// collected, is thrown as that earlier call's, not as `what`'s, and stays recorded (peeked, not
// got) for the program's own check. Without it, coalesce's first failing call would report the
// program's error as its own, and collect it.
inline void throw_if_earlier_error(const char* what) {
  const cudaError_t earlier = ::cudaPeekAtLastError();
  if (earlier != cudaSuccess && !cuda_unusable_here(earlier))
    throw cuda_error(earlier, std::string("an earlier CUDA call (found pending, uncollected, when ") + what +
                                  " began, which did nothing)");
}

// For calls whose failure coalesce handles itself (a query with a fallback): `status`, with its
// error collected when it is coalesce's own. `pending_before` is what cudaPeekAtLastError said
// before the call: an error the program left pending is not collected.
inline cudaError_t collect_own(cudaError_t status, cudaError_t pending_before) noexcept {
  if (status != cudaSuccess && pending_before == cudaSuccess) (void)::cudaGetLastError();
  return status;
}

}  // namespace detail
}  // namespace coalesce

/// Checks a CUDA runtime call and throws coalesce::cuda_error naming the call on failure (the
/// error collected, as throw_on_error does).
#define COALESCE_CUDA_CHECK(call) ::coalesce::throw_on_error((call), #call)
