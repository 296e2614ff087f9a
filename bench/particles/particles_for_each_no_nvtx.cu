// particles_for_each.cu built with COALESCE_DISABLE_NVTX: beside it in the compile-cost table, what
// coalesce's NVTX ranges (detail/nvtx.hpp) add to a unit's compile time.
#define COALESCE_DISABLE_NVTX
#include "particles_for_each.cu"
