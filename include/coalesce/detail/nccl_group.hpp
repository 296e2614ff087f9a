// coalesce::detail: how <coalesce/nccl.hpp>'s exchanges post their messages: one NCCL group per
// rank's exchange, ended whatever happens, with the messages in the order that pairs them right
// where one rank is both neighbours. Users never include this header.
#pragma once

#include <coalesce/detail/halo_parts.hpp>
#include <coalesce/error.hpp>
#include <coalesce/nccl_error.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

namespace coalesce::detail {

// Runs post() between ncclGroupStart and ncclGroupEnd (joining the caller's group, if one is
// open). If post() throws, the group is ended before the exception goes on: a group left open
// would hold back every later NCCL call of this thread.
template <class Post>
void in_nccl_group(const char* what, const Post& post) {
  throw_on_nccl_error(::ncclGroupStart(), what);
  try {
    post();
  } catch (...) {
    (void)::ncclGroupEnd();
    throw;
  }
  throw_on_nccl_error(::ncclGroupEnd(), what);
}

// Posts one rank's halo messages as one NCCL group (joining the caller's, if one is open).
// NCCL pairs the messages between two ranks in the order they are posted, so every rank posts
// its messages towards `next` (below, right, after) first and towards `previous` second: where one
// rank is both neighbours (two ranks, periodic, or one rank alone) each message still lands in
// the right halo.
inline void post_halo_messages(const halo_side& previous, const halo_side& next, const halo_messages& layers,
                               ncclComm_t comm, cudaStream_t stream, const char* what) {
  const auto at = [&](const void* start, std::size_t k) {
    return static_cast<const unsigned char*>(start) + k * layers.stride;
  };
  const auto to = [&](void* start, std::size_t k) { return static_cast<unsigned char*>(start) + k * layers.stride; };
  throw_if_earlier_error(what);  // NCCL does not look: a pending CUDA error is the caller's
  in_nccl_group(what, [&] {
    for (std::size_t k = 0; next.peer >= 0 && k < layers.count; ++k)
      throw_on_nccl_error(::ncclSend(at(next.send, k), layers.bytes, ncclUint8, next.peer, comm, stream), what);
    for (std::size_t k = 0; previous.peer >= 0 && k < layers.count; ++k)
      throw_on_nccl_error(::ncclRecv(to(previous.receive, k), layers.bytes, ncclUint8, previous.peer, comm, stream),
                          what);
    for (std::size_t k = 0; previous.peer >= 0 && k < layers.count; ++k)
      throw_on_nccl_error(::ncclSend(at(previous.send, k), layers.bytes, ncclUint8, previous.peer, comm, stream), what);
    for (std::size_t k = 0; next.peer >= 0 && k < layers.count; ++k)
      throw_on_nccl_error(::ncclRecv(to(next.receive, k), layers.bytes, ncclUint8, next.peer, comm, stream), what);
  });
}

}  // namespace coalesce::detail
