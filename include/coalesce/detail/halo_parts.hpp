// coalesce::detail: the parts of <coalesce/nccl.hpp>'s halo exchanges that are not NCCL calls:
// where each side's layers are sent from and received into, how they travel (one run of bytes, or
// one message per row), the CUDA event that orders the halos' readers after a split-phase
// exchange, and the check that a block is thick enough for its halos. Users never include this
// header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace coalesce::detail {

// One side of a halo exchange along an axis: the neighbour's rank (-1: none), where the layers
// sent to it start and where its layers are received.
struct halo_side {
  int peer;
  const void* send;
  void* receive;
};

// How one side's layers travel: `count` messages of `bytes` bytes, `stride` bytes apart (the same
// on both ends, whose layers have one shape).
struct halo_messages {
  std::size_t bytes;
  std::size_t count = 1;
  std::size_t stride = 0;
};

// A CUDA event without timing, of the device current when it is made, destroyed with its owner:
// how a split-phase exchange makes the stream of the work that reads the halos wait for them.
class halos_done_event {
 public:
  explicit halos_done_event(const char* what) {
    throw_if_earlier_error(what);
    throw_on_error(::cudaEventCreateWithFlags(&event_, cudaEventDisableTiming),
                   (std::string(what) + ": cudaEventCreate").c_str());
  }
  halos_done_event(halos_done_event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  halos_done_event& operator=(halos_done_event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  halos_done_event(const halos_done_event&) = delete;
  halos_done_event& operator=(const halos_done_event&) = delete;
  ~halos_done_event() {
    if (event_) (void)::cudaEventDestroy(event_);
  }

  // Work queued on `waiting` from now on comes after what `exchange` has queued so far.
  void order(cudaStream_t exchange, cudaStream_t waiting, const char* what) const {
    throw_if_earlier_error(what);
    throw_on_error(::cudaEventRecord(event_, exchange), (std::string(what) + ": cudaEventRecord").c_str());
    throw_on_error(::cudaStreamWaitEvent(waiting, event_, 0), (std::string(what) + ": cudaStreamWaitEvent").c_str());
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// Throws std::invalid_argument naming `what` unless a block `extent` layers thick holds its two
// halos of `halo` layers and the layers it sends; `layers` names them ("rows", "planes").
inline void require_room_for_halos(std::size_t extent, std::size_t halo, const char* what, const char* layers) {
  if (extent < 3 * halo)
    throw std::invalid_argument(std::string(what) + ": a block of " + std::to_string(extent) + " " + layers +
                                " cannot hold two halos of " + std::to_string(halo) + " " + layers + " and the " +
                                layers + " it sends");
}

}  // namespace coalesce::detail
