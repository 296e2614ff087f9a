// What the NVTX tests share: whether a test case can count ranges at all.
#pragma once

#include <coalesce/testing/device.hpp>

#include "coalesce_test.hpp"
#include "nvtx_recorder.hpp"

#include <nvtx3/nvToolsExt.h>

namespace coalesce_test::nvtx {

// Whether the test's tool is attached, so that the case can count ranges. compute-sanitizer
// loads an NVTX tool of its own in place of the test's (NVTX loads one tool per process): under
// it the calls still run, checked by the sanitizer, but nothing can be counted, and the case says
// so (NOT MEASURED at exit). Anywhere else a tool that did not attach fails the case.
inline bool counting() {
  ::nvtxMarkA("coalesce's NVTX test");  // NVTX's first call loads the tool
  if (attached()) return true;
  if (coalesce::testing::under_sanitizer()) {
    record_unmeasured();
    return false;
  }
  FAIL("NVTX did not load the test's tool: NVTX_INJECTION64_PATH must name libcoalesce_nvtx_recorder (ctest sets it)");
  return false;
}

}  // namespace coalesce_test::nvtx
