// What the three parts of device.fallbacks share (see exact.cu for what the executable checks).
#pragma once

#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_convert.hpp>
#include <coalesce/testing/testing.hpp>

#include <cuda/std/array>
#include <cuda/std/span>

#include "coalesce_device_test.hpp"
#include "fallbacks.hpp"
#include "targets.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

namespace ct = coalesce::testing;
namespace fb = coalesce_test::fallbacks;
namespace targets = coalesce_test::targets;
using coalesce_test::profiler;

namespace coalesce_test::fallbacks_common {

inline std::size_t count_or_small(std::size_t n) {
  return coalesce::testing::small_problems() ? (std::size_t(1) << 14) + 5 : n;
}

// The aligned case as the one competitor of a comparison.
inline std::vector<coalesce_test::candidate> aligned_case(const std::string& name,
                                                          std::function<void(cudaStream_t)> launch) {
  return {{name + " (the aligned case)", coalesce::testing::row_role::competitor, std::move(launch)}};
}

}  // namespace coalesce_test::fallbacks_common

using coalesce_test::fallbacks_common::aligned_case;
using coalesce_test::fallbacks_common::count_or_small;
