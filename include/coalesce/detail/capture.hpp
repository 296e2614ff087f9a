// coalesce::detail: what a call that a CUDA graph cannot record does when its stream is being
// captured: it refuses, with a std::logic_error naming the call and what to do, before it has
// enqueued, allocated or changed anything. Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace coalesce::detail {

// Whether work enqueued on `stream` now would be captured into a CUDA graph (or would break a
// capture): the stream is being captured, or its capture has already been invalidated, or it is
// the legacy null stream while another stream captures in global mode (the runtime then answers
// cudaErrorStreamCaptureImplicit, which is collected here: it reports no failure of the program's).
inline bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t asked = ::cudaStreamIsCapturing(stream, &status);
  if (asked == cudaErrorStreamCaptureImplicit) {
    (void)::cudaGetLastError();
    return true;
  }
  throw_on_error(asked, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

// Throws std::logic_error "<what>: <stream> is being captured into a CUDA graph, and <why>;
// <instead>" when `stream` is being captured. Called before the call enqueues anything; an
// error an earlier CUDA call left pending is reported first, as that call's.
inline void refuse_capture(cudaStream_t stream, const char* what, const char* why, const char* instead) {
  throw_if_earlier_error(what);  // cudaStreamIsCapturing fails too once an error is sticky: not its own failure
  if (stream_is_capturing(stream))
    throw std::logic_error(std::string(what) + ": its stream is being captured into a CUDA graph, and " + why + "; " +
                           instead);
}

}  // namespace coalesce::detail
