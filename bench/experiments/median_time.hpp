// The experiments' one way to time a launch: the median of coalesce::testing's event-timed
// launches (three warm-up, twenty timed), as coalesce_bench times its rows.
#pragma once

#include <coalesce/testing/bandwidth.hpp>

#include <cuda_runtime_api.h>

namespace experiments {

// The median time, in milliseconds, of run(), which enqueues its work on the null stream.
template <class Run>
double median_ms(const Run& run) {
  namespace ct = coalesce::testing;
  return ct::median(ct::time_launches_ms([&](cudaStream_t) { run(); }));
}

}  // namespace experiments
