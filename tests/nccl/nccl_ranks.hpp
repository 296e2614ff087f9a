// What the NCCL tests share: the two-GPU requirement (skipped, with the reason, on fewer), one
// communicator per GPU of this process, and a single rank on device 0.
#pragma once

#include <coalesce/error.hpp>
#include <coalesce/nccl.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"

#include <array>
#include <string>

namespace coalesce_test {

inline constexpr int two_ranks = 2;

// Skips the test case unless this process sees two usable GPUs.
#define COALESCE_REQUIRE_TWO_GPUS()                                                                                 \
  do {                                                                                                              \
    if (auto reason = coalesce::testing::gpus_unavailable_reason(coalesce_test::two_ranks)) COALESCE_SKIP(*reason); \
  } while (0)

// One communicator per GPU (devices 0 and 1), destroyed at the end of the test case.
struct communicators {
  std::array<ncclComm_t, two_ranks> comm{};
  communicators() {
    const std::array<int, two_ranks> devices{0, 1};
    coalesce::throw_on_nccl_error(ncclCommInitAll(comm.data(), two_ranks, devices.data()), "ncclCommInitAll");
  }
  ~communicators() {
    for (auto c : comm) (void)ncclCommDestroy(c);
  }
  communicators(const communicators&) = delete;
  communicators& operator=(const communicators&) = delete;
};

// One rank on device 0, a communicator of its own, destroyed at the end of the test case.
struct single_rank {
  ncclComm_t comm{};
  single_rank() {
    const int device = 0;
    COALESCE_CUDA_CHECK(cudaSetDevice(device));
    coalesce::throw_on_nccl_error(ncclCommInitAll(&comm, 1, &device), "ncclCommInitAll");
  }
  ~single_rank() { (void)ncclCommDestroy(comm); }
  single_rank(const single_rank&) = delete;
  single_rank& operator=(const single_rank&) = delete;
};

}  // namespace coalesce_test
