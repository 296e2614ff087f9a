// coalesce: which side of the bus a view's or a container's elements are on. Views carry the
// space in their type, so that host memory cannot reach a kernel; the containers and memory
// resources that allocate in each space are in <coalesce/memory.hpp>. Host-capable, and light:
// a unit that only takes views includes this, not the allocation machinery.
#pragma once
/// @file

#include <type_traits>

namespace coalesce {

/// Elements live in ordinary host memory: usable from plain C++, no GPU and no nvcc needed.
struct host_space {};
/// Elements live in device global memory: usable in kernels through the containers' views.
struct device_space {};

/// Whether Space is host_space or device_space.
template <class Space>
inline constexpr bool is_memory_space_v = std::is_same_v<Space, host_space> || std::is_same_v<Space, device_space>;

}  // namespace coalesce
