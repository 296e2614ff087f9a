// coalesce: an NVTX range on every public call that launches or copies, in the manner of CUB and
// Thrust, so that Nsight Systems shows `coalesce::for_each` in the timeline instead of an
// anonymous kernel. One domain, "coalesce"; the range's name is the public call. On by default
// where the toolkit's NVTX 3 headers are found (they are header-only: nothing to link but
// libdl, which CUDA::nvtx3 brings); off with COALESCE_DISABLE_NVTX (or NVTX's own NVTX_DISABLE).
//
// Only the outermost coalesce call on a thread opens a range: soa_vector's copy constructor
// calling its copy, or for_each on a container calling for_each on its view, shows as the one call
// the user made. CUB's own ranges (domain "CCCL") nest inside. Without a tool attached, each call
// costs a few loads: NVTX's entry points stay no-ops until a profiler injects itself. Host-only
// and stream-free, so a call inside a stream capture is captured as before.
#pragma once

#if !defined(COALESCE_DISABLE_NVTX) && !defined(NVTX_DISABLE) && defined(__has_include)
#  if __has_include(<nvtx3/nvToolsExt.h>)
#    define COALESCE_HAS_NVTX 1
#  endif
#endif

#if defined(COALESCE_HAS_NVTX)

#  include <nvtx3/nvToolsExt.h>

namespace coalesce::detail {

// The "coalesce" domain, created on first use (NVTX hands a tool's handle, or a null one without
// a tool; both are valid to pass back).
inline nvtxDomainHandle_t nvtx_domain() noexcept {
  static const nvtxDomainHandle_t domain = ::nvtxDomainCreateA("coalesce");
  return domain;
}

// A range's attributes: its name, registered once per call site so that a tool receives a handle
// instead of a string on every call.
inline nvtxEventAttributes_t nvtx_attributes(const char* name) noexcept {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = ::nvtxDomainRegisterStringA(nvtx_domain(), name);
  return attributes;
}

// Pushes a range for the scope it lives in, unless a coalesce range is already open on this
// thread; pops it on the way out, exceptions included.
class nvtx_range {
 public:
  explicit nvtx_range(const nvtxEventAttributes_t& attributes) noexcept : outermost_(depth()++ == 0) {
    if (outermost_) ::nvtxDomainRangePushEx(nvtx_domain(), &attributes);
  }
  ~nvtx_range() {
    --depth();
    if (outermost_) ::nvtxDomainRangePop(nvtx_domain());
  }
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;

 private:
  static int& depth() noexcept {
    thread_local int open = 0;
    return open;
  }
  bool outermost_;
};

}  // namespace coalesce::detail

// Opens the range `name` (a string literal: the public call, "coalesce::for_each") until the end
// of the enclosing scope. At most one per scope.
#  define COALESCE_DETAIL_NVTX_RANGE(name)                                                                      \
    static const ::nvtxEventAttributes_t coalesce_nvtx_attributes_ = ::coalesce::detail::nvtx_attributes(name); \
    const ::coalesce::detail::nvtx_range coalesce_nvtx_range_ { coalesce_nvtx_attributes_ }

#else

#  define COALESCE_DETAIL_NVTX_RANGE(name) static_cast<void>(0)

#endif
