// coalesce: halo exchange between GPUs over NCCL, for a matrix split into blocks of rows.
//
// Each GPU (each NCCL rank) holds one block of rows of a global matrix, as a pitched matrix with
// `halo` extra rows above and below: rows [0, halo) hold the rows of the rank above, rows
// [rows - halo, rows) those of the rank below, and the rows between are the block's own. An
// exchange sends the block's first `halo` own rows up and its last `halo` own rows down, and
// receives its halos. Rows are contiguous in pitched memory, so each message is one run of bytes
// straight from the matrix: no packing. (A split into columns too, whose halos must be packed,
// and particle migration are still to come.)
//
// coalesce never creates processes or communicators: the user passes an ncclComm_t, so the same
// calls serve one process driving several GPUs (ncclCommInitAll; call the exchanges of all its
// ranks between one ncclGroupStart and ncclGroupEnd) and one process per GPU (ncclCommInitRank).
// Host-capable (no kernels); needs NCCL's header and library (CMake target coalesce::nccl).
#pragma once

#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce {

// An NCCL call that failed: its result, and NCCL's text for it.
class nccl_error : public std::runtime_error {
 public:
  nccl_error(ncclResult_t result, const std::string& what)
      : std::runtime_error(what + ": " + ::ncclGetErrorString(result)), result_(result) {}
  ncclResult_t result() const noexcept { return result_; }

 private:
  ncclResult_t result_;
};

inline void throw_on_nccl_error(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw nccl_error(result, what);
}

// The ranks that own the rows above and below a block; -1 where the block is at the domain's
// edge (its halo there is left as it is: the boundary condition's to fill). For a periodic
// domain, the first and last ranks are each other's neighbours.
struct row_neighbours {
  int above = -1;
  int below = -1;
};

namespace detail {

// The bytes of `count` rows of `block` from row `first`: from the first element of the first row
// to the last element of the last (the padding between rows goes along, the padding after the
// last row does not).
template <class T>
std::pair<unsigned char*, std::size_t> row_bytes(const pitched_view<T>& block, std::size_t first, std::size_t count) {
  auto* start = reinterpret_cast<unsigned char*>(const_cast<std::remove_const_t<T>*>(block.row(first)));
  return {start, (count - 1) * block.pitch_bytes() + block.cols() * sizeof(T)};
}

}  // namespace detail

// Sends the block's first and last `halo` own rows to the ranks above and below, and receives
// their rows into its halos, ordered on `stream`: work queued on `stream` afterwards sees the
// halos, and `stream` must be ordered after the writes of the rows it sends. Every rank's block
// must have the same columns and pitch (the matrices of one shape and policy do). One NCCL group;
// inside a group the caller opened, it joins that one. Throws std::invalid_argument if the block
// is too short for its halos, coalesce::nccl_error if NCCL fails.
template <class T>
void exchange_row_halos(pitched_view<T> block, std::size_t halo, row_neighbours neighbours, ncclComm_t comm,
                        cudaStream_t stream) {
  static_assert(!std::is_const_v<T>, "coalesce::exchange_row_halos: the block receives its halos: pass a writable view");
  constexpr const char* what = "coalesce::exchange_row_halos";
  if (halo == 0 || (neighbours.above < 0 && neighbours.below < 0)) return;
  if (block.rows() < 3 * halo)
    throw std::invalid_argument(std::string(what) + ": a block of " + std::to_string(block.rows()) +
                                " rows cannot hold two halos of " + std::to_string(halo) +
                                " rows and the rows it sends");
  const std::size_t own_first = halo, own_last = block.rows() - 2 * halo;  // the rows sent up, and down
  throw_on_nccl_error(::ncclGroupStart(), what);
  const auto send = [&](int peer, std::size_t first_row) {
    if (peer < 0) return;
    const auto bytes = detail::row_bytes(block, first_row, halo);
    throw_on_nccl_error(::ncclSend(bytes.first, bytes.second, ncclUint8, peer, comm, stream), what);
  };
  const auto receive = [&](int peer, std::size_t first_row) {
    if (peer < 0) return;
    const auto bytes = detail::row_bytes(block, first_row, halo);
    throw_on_nccl_error(::ncclRecv(bytes.first, bytes.second, ncclUint8, peer, comm, stream), what);
  };
  // NCCL pairs the messages between two ranks in the order they are posted. Every rank posts the
  // downward message first (its last rows, into the halo above of the rank below) and the upward
  // one second, so that where one rank is both neighbours (two ranks, periodic) each message
  // still lands in the right halo.
  try {
    send(neighbours.below, own_last);
    receive(neighbours.above, 0);
    send(neighbours.above, own_first);
    receive(neighbours.below, block.rows() - halo);
  } catch (...) {
    (void)::ncclGroupEnd();
    throw;
  }
  throw_on_nccl_error(::ncclGroupEnd(), what);
}

// The split-phase form, for overlap: start() queues the exchange on a stream of its own, and
// finish() makes the stream of the work that reads the halos wait for it, so that the block's
// interior can be computed meanwhile. Holds one CUDA event (of the current device when made).
template <class T>
class row_halo_exchange {
 public:
  row_halo_exchange(pitched_view<T> block, std::size_t halo, row_neighbours neighbours, ncclComm_t comm)
      : block_(block), halo_(halo), neighbours_(neighbours), comm_(comm) {
    throw_on_error(::cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "coalesce::row_halo_exchange: cudaEventCreate");
  }
  row_halo_exchange(const row_halo_exchange&) = delete;
  row_halo_exchange& operator=(const row_halo_exchange&) = delete;
  row_halo_exchange(row_halo_exchange&& other) noexcept
      : block_(other.block_), halo_(other.halo_), neighbours_(other.neighbours_), comm_(other.comm_),
        done_(std::exchange(other.done_, nullptr)) {}
  row_halo_exchange& operator=(row_halo_exchange&&) = delete;
  ~row_halo_exchange() {
    if (done_) (void)::cudaEventDestroy(done_);
  }

  // Queues the exchange on `exchange_stream`, which must be ordered after the writes of the rows
  // it sends.
  void start(cudaStream_t exchange_stream) {
    exchange_row_halos(block_, halo_, neighbours_, comm_, exchange_stream);
    throw_on_error(::cudaEventRecord(done_, exchange_stream), "coalesce::row_halo_exchange::start: cudaEventRecord");
  }
  // Work queued on `work_stream` from now on sees the halos.
  void finish(cudaStream_t work_stream) const {
    throw_on_error(::cudaStreamWaitEvent(work_stream, done_, 0), "coalesce::row_halo_exchange::finish: cudaStreamWaitEvent");
  }

 private:
  pitched_view<T> block_;
  std::size_t halo_;
  row_neighbours neighbours_;
  ncclComm_t comm_;
  cudaEvent_t done_ = nullptr;
};

}  // namespace coalesce
