// coalesce::detail: which calls of the containers (soa_vector, pitched_matrix, pitched_volume)
// refuse while their stream is being captured into a CUDA graph, and why. Users never include
// this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/capture.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

namespace coalesce::detail {

// What a container call would do that a capture cannot record.
enum class uncapturable {
  // A stream-ordered allocation on a captured stream is a graph's memory node: the container
  // would keep an address that is valid only while the graph runs.
  allocates,
  // Pageable host memory is copied synchronously through a staging buffer, which a capture
  // cannot record.
  copies_pageable_memory,
  // A host destination waits for the device's copy; a capture cannot wait.
  waits,
  // A release on a captured stream is a graph's free node, which takes only the graph's own
  // allocations.
  frees,
};

inline const char* uncapturable_reason(uncapturable what) noexcept {
  switch (what) {
    case uncapturable::allocates: return "it would allocate memory that the graph, not the container, owns";
    case uncapturable::copies_pageable_memory:
      return "it copies pageable host memory, which CUDA stages synchronously and a graph cannot record";
    case uncapturable::waits: return "it waits for the stream, which a capture cannot do";
    case uncapturable::frees: return "it would release memory that the graph does not own, which a graph cannot record";
  }
  return "";
}

// Throws std::logic_error "<what>: its stream is being captured into a CUDA graph, and <reason>;
// <instead>" (refuse_capture) when `stream` is being captured and the container's memory is of a
// kind a capture can involve at all: device memory or pinned host memory (copies_asynchronously).
// A plain host container asks nothing: its copies are the calling thread's memcpy, so it works,
// with no CUDA call, in a program without a driver. Where CUDA cannot run at all (no driver, no
// device), no stream can be capturing: the call goes on, to succeed or to fail with its own error.
template <class Space, class Resource>
void refuse_capture_of(uncapturable reason, cudaStream_t stream, const char* what, const char* instead) {
  if constexpr (copies_asynchronously<Space, Resource>) {
    refuse_capture(stream, what, uncapturable_reason(reason), instead);
  }
}

}  // namespace coalesce::detail
