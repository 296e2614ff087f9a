// coalesce::detail: under COALESCE_DEBUG, the algorithms ask the driver what each pointer they
// are handed points to. A view's type already says device memory for a soa_vector's or
// pitched_matrix's view, but a view built from a raw pointer, a cuda::std::span or a pointer and
// a size cannot prove it, and pageable host memory handed to a kernel fails late and far from
// the mistake (an illegal address, or, where the system lets the GPU read pageable memory, a
// kernel at a fraction of its speed). Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace coalesce::detail {

// Throws std::invalid_argument when `p` is host memory the GPU cannot address as device memory:
// pageable memory, or pinned memory that is not mapped into the device's address space. Device,
// managed and mapped pinned memory pass. A no-op unless COALESCE_DEBUG is on.
inline void require_device_memory(const void* p, const char* what) {
  if constexpr (COALESCE_DEBUG) {
    throw_if_earlier_error(what);
    cudaPointerAttributes attributes{};
    throw_on_error(::cudaPointerGetAttributes(&attributes, p), std::string(what) + ": cudaPointerGetAttributes");
    const bool host_only = attributes.type == cudaMemoryTypeUnregistered ||
                           (attributes.type == cudaMemoryTypeHost && attributes.devicePointer == nullptr);
    if (host_only) {
      char address[32];
      std::snprintf(address, sizeof address, "%p", p);
      throw std::invalid_argument(std::string(what) + ": " + address +
                                  " is host memory (pageable, or pinned and not mapped); pass device memory: a "
                                  "device soa_vector or pitched_matrix, or memory from cudaMalloc, cudaMallocAsync "
                                  "or cudaMallocManaged");
    }
  } else {
    (void)p, (void)what;
  }
}

}  // namespace coalesce::detail
