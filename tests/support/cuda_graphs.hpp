// What the device tests that capture CUDA graphs share: CUDA handles released when they go (a
// stream, a graph, an executable graph), and a count of a captured graph's nodes by kind, which
// says whether a capture recorded kernels, copies, or the allocations and frees of graph memory.
#pragma once

#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace coalesce_test {

// A CUDA handle, released with `Destroy` when it goes.
template <class Handle, cudaError_t (*Destroy)(Handle)>
class owned {
 public:
  owned() = default;
  owned(const owned&) = delete;
  owned& operator=(const owned&) = delete;
  ~owned() {
    if (handle_ != nullptr) (void)Destroy(handle_);
  }
  Handle get() const { return handle_; }
  Handle* out() { return &handle_; }

 private:
  Handle handle_ = nullptr;
};
using owned_graph = owned<cudaGraph_t, cudaGraphDestroy>;
using owned_graph_exec = owned<cudaGraphExec_t, cudaGraphExecDestroy>;

// A non-blocking stream: nothing on the legacy stream orders it. Declare it before the containers
// that free on it, so that it goes last.
class owned_stream : public owned<cudaStream_t, cudaStreamDestroy> {
 public:
  owned_stream() { COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(out(), cudaStreamNonBlocking)); }
};

// A graph's nodes by kind.
struct graph_nodes {
  std::size_t kernels = 0, memcpys = 0, memsets = 0, allocations = 0, frees = 0, others = 0;
  std::size_t total() const { return kernels + memcpys + memsets + allocations + frees + others; }
};
inline graph_nodes count_nodes(cudaGraph_t graph) {
  std::size_t count = 0;
  COALESCE_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  COALESCE_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  graph_nodes found;
  for (const cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    COALESCE_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) ++found.kernels;
    else if (type == cudaGraphNodeTypeMemcpy) ++found.memcpys;
    else if (type == cudaGraphNodeTypeMemset) ++found.memsets;
    else if (type == cudaGraphNodeTypeMemAlloc) ++found.allocations;
    else if (type == cudaGraphNodeTypeMemFree) ++found.frees;
    else ++found.others;
  }
  return found;
}
inline std::string describe(const graph_nodes& n) {
  return std::to_string(n.kernels) + " kernels, " + std::to_string(n.memcpys) + " memcpys, " +
         std::to_string(n.memsets) + " memsets, " + std::to_string(n.allocations) + " allocations, " +
         std::to_string(n.frees) + " frees, " + std::to_string(n.others) + " others";
}

}  // namespace coalesce_test
