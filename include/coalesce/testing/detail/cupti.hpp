// coalesce::testing::detail: the CUPTI plumbing of <coalesce/testing/counters.hpp>: CUPTI's
// results as exceptions, its versioned parameter blocks, and the current CUDA context without
// linking libcuda. Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace coalesce::testing::detail {

inline std::string cupti_error_text(CUptiResult result) {
  const char* text = nullptr;
  if (::cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  std::string message = text;
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    message += " (profiling needs root, or the driver option NVreg_RestrictProfilingToAdminUsers=0)";
  return message;
}

// A CUPTI parameter block, zeroed, with its structSize set (CUPTI checks it for versioning).
template <class Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

inline void cupti_check(CUptiResult result, const char* what) {
  if (result != CUPTI_SUCCESS)
    throw std::runtime_error(std::string("coalesce::testing: ") + what + " failed: " + cupti_error_text(result));
}

// The current CUDA context, through the runtime's driver entry point so that the harness does
// not link libcuda (test executables must start, and skip, on machines with no driver).
inline CUcontext current_context() {
  throw_on_error(::cudaFree(nullptr), "creating the CUDA context");
  using get_current_fn = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  throw_on_error(::cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found),
                 "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw std::runtime_error("coalesce::testing: the driver has no cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<get_current_fn>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    throw std::runtime_error("coalesce::testing: no current CUDA context");
  return ctx;
}

}  // namespace coalesce::testing::detail
