// coalesce::testing: the GPU test harness in one include - device helpers, bandwidth as a ratio
// to cudaMemcpy, hardware counters read in-process, and the benchmark report. Link the CMake target coalesce::testing.
#pragma once
/// @file

/// \namespace coalesce::testing
/// The GPU test harness: CMake target coalesce::testing (CUDA runtime and CUPTI).

#include <coalesce/config.hpp>
#include <coalesce/testing/bandwidth.hpp>
#include <coalesce/testing/counters.hpp>
#include <coalesce/testing/device.hpp>
#include <coalesce/testing/report.hpp>
