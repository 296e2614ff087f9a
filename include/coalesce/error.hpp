// coalesce: the exception thrown when a CUDA runtime call fails.
// Every runtime failure in coalesce surfaces as a cuda_error carrying the CUDA error's name and
// text, thrown only after whatever the failing operation had taken has been released.
#pragma once

#include <coalesce/config.hpp>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace coalesce {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what_failed)
      : std::runtime_error(describe(code, what_failed)), code_(code) {}

  // The CUDA error code that caused the failure.
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

// Throws cuda_error if `code` is not cudaSuccess; `what_failed` names the operation.
inline void throw_on_error(cudaError_t code, const char* what_failed) {
  if (code != cudaSuccess) throw cuda_error(code, what_failed);
}

}  // namespace coalesce

// Checks a CUDA runtime call and throws coalesce::cuda_error naming the call on failure.
#define COALESCE_CUDA_CHECK(call) ::coalesce::throw_on_error((call), #call)
