// A small NVTX tool for coalesce's tests: a shared library that NVTX loads through its injection
// interface (NVTX_INJECTION64_PATH names it, as Nsight Systems names its own), and that records
// every range pushed in a named domain. The test executable links it too, to read the record:
// the dynamic loader hands NVTX's dlopen the copy already loaded.
#pragma once

#include <string>
#include <vector>

namespace coalesce_test::nvtx {

// One range pushed: its domain's name ("" for NVTX's default domain) and its message.
struct range {
  std::string domain;
  std::string name;
};

// True once NVTX has called the tool's initialization, i.e. the injection took place.
bool attached();
// The ranges pushed since the last clear(), in order, with how many are open now.
std::vector<range> pushed();
int open_ranges();
void clear();

}  // namespace coalesce_test::nvtx
