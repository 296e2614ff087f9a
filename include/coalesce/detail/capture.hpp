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
// capture): the stream is being captured (it began the capture, or joined one by waiting on an
// event recorded in it), or its capture has already been invalidated, or it is the legacy null
// stream while a blocking stream of the device is being captured (the runtime then answers
// cudaErrorStreamCaptureImplicit, which is collected here: it reports no failure of the
// program's, and work on the legacy stream would invalidate that capture). Call it after
// throw_if_earlier_error, so that an error it collects is its own.
inline bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t asked = ::cudaStreamIsCapturing(stream, &status);
  if (asked == cudaErrorStreamCaptureImplicit) {
    (void)::cudaGetLastError();
    return true;
  }
  // Where CUDA cannot run at all (no driver, no device) no stream can be capturing: the caller
  // goes on, to succeed (a pinned host container's memcpy) or to fail with its own error.
  if (cuda_unusable_here(asked)) return false;
  throw_on_error(asked, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

// Throws std::logic_error "<what>: its stream is being captured into a CUDA graph, and <why>;
// <instead>" when `stream` is being captured (stream_is_capturing). Called first by a call that a
// graph cannot record, before it allocates, enqueues or changes anything, so that the capture
// stays valid and the caller can end it (or go on without the call). An error an earlier CUDA
// call left pending is thrown first, as that call's (throw_if_earlier_error).
inline void refuse_capture(cudaStream_t stream, const char* what, const char* why, const char* instead) {
  throw_if_earlier_error(what);  // cudaStreamIsCapturing fails too once an error is sticky: not its own failure
  if (stream_is_capturing(stream))
    throw std::logic_error(std::string(what) + ": its stream is being captured into a CUDA graph, and " + why + "; " +
                           instead);
}

}  // namespace coalesce::detail
