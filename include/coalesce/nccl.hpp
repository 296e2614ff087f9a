// coalesce: halo exchange between GPUs over NCCL, for a matrix split into blocks of rows.
//
// Each GPU (each NCCL rank) holds one block of rows of a global matrix, as a pitched matrix with
// `halo` extra rows above and below: rows [0, halo) hold the rows of the rank above, rows
// [rows - halo, rows) those of the rank below, and the rows between are the block's own. An
// exchange sends the block's first `halo` own rows up and its last `halo` own rows down, and
// receives its halos. Rows are contiguous in pitched memory, so each message is one run of bytes
// straight from the matrix: no packing.
//
// A split into columns is the same with halo columns left and right; a column strip is not
// contiguous, so column_halo_exchange packs the strips it sends into a buffer and unpacks the
// ones it receives (cudaMemcpy2DAsync: rows of `halo` elements, one per matrix row). For a split
// into both, exchange the rows first and then the columns over every row, halo rows included:
// the corners then come along. Particles move between ranks through migration.hpp.
//
// coalesce never creates processes or communicators: the user passes an ncclComm_t, so the same
// calls serve one process driving several GPUs (ncclCommInitAll; call the exchanges of all its
// ranks between one ncclGroupStart and ncclGroupEnd) and one process per GPU (ncclCommInitRank).
// Host-capable (no kernels); needs NCCL's header and library (CMake target coalesce::nccl).
#pragma once

#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
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

// One side of a halo exchange along an axis: the neighbour's rank (-1: none), the bytes sent to
// it and the buffer that receives its bytes, `bytes` long each.
struct halo_side {
  int peer;
  const void* send;
  void* receive;
};

// Posts one rank's halo messages as one NCCL group (joining the caller's, if one is open).
// NCCL pairs the messages between two ranks in the order they are posted, so every rank posts
// its message towards `next` (below, right) first and towards `previous` second: where one rank is
// both neighbours (two ranks, periodic, or one rank alone) each message still lands in the right
// halo.
inline void post_halo_messages(const halo_side& previous, const halo_side& next, std::size_t bytes, ncclComm_t comm,
                               cudaStream_t stream, const char* what) {
  throw_on_nccl_error(::ncclGroupStart(), what);
  try {
    if (next.peer >= 0) throw_on_nccl_error(::ncclSend(next.send, bytes, ncclUint8, next.peer, comm, stream), what);
    if (previous.peer >= 0) throw_on_nccl_error(::ncclRecv(previous.receive, bytes, ncclUint8, previous.peer, comm, stream), what);
    if (previous.peer >= 0) throw_on_nccl_error(::ncclSend(previous.send, bytes, ncclUint8, previous.peer, comm, stream), what);
    if (next.peer >= 0) throw_on_nccl_error(::ncclRecv(next.receive, bytes, ncclUint8, next.peer, comm, stream), what);
  } catch (...) {
    (void)::ncclGroupEnd();
    throw;
  }
  throw_on_nccl_error(::ncclGroupEnd(), what);
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
  const auto rows_at = [&](std::size_t first_row) { return detail::row_bytes(block, first_row, halo).first; };
  detail::post_halo_messages(detail::halo_side{neighbours.above, rows_at(own_first), rows_at(0)},
                             detail::halo_side{neighbours.below, rows_at(own_last), rows_at(block.rows() - halo)},
                             detail::row_bytes(block, 0, halo).second, comm, stream, what);
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

// The ranks that own the columns left and right of a block; -1 at the domain's edge.
struct column_neighbours {
  int left = -1;
  int right = -1;
};

// A block of columns with `halo` columns on either side: columns [0, halo) receive the last own
// columns of the rank on the left, [cols - halo, cols) the first of the rank on the right. The
// exchange runs in three steps on one stream, given when it is made:
//   pack()   copies the block's first and last `halo` own columns into send buffers;
//   post()   sends them and receives the neighbours' into receive buffers (one NCCL group; inside a
//            group the caller opened - one process driving several GPUs posts every rank's
//            exchange in one group - it joins that one);
//   unpack() copies what was received into the halo columns; call it after the group has ended.
// exchange() does the three for one rank per process. The four strips, rows x halo elements each,
// are one allocation from coalesce's pool on the stream, freed in stream order when the exchange
// is destroyed. Throws std::invalid_argument if the block is too narrow for its halos,
// coalesce::nccl_error or coalesce::cuda_error if NCCL or CUDA fails.
template <class T>
class column_halo_exchange {
  static_assert(!std::is_const_v<T>, "coalesce::column_halo_exchange: the block receives its halos: pass a writable view");

 public:
  column_halo_exchange(pitched_view<T> block, std::size_t halo, column_neighbours neighbours, ncclComm_t comm,
                       cudaStream_t stream)
      : block_(block), halo_(halo), neighbours_(neighbours), comm_(comm), stream_(stream) {
    if (halo == 0 || (neighbours.left < 0 && neighbours.right < 0) || block.rows() == 0) {
      halo_ = 0;  // nothing to exchange
      return;
    }
    if (block.cols() < 3 * halo)
      throw std::invalid_argument("coalesce::column_halo_exchange: a block of " + std::to_string(block.cols()) +
                                  " columns cannot hold two halos of " + std::to_string(halo) +
                                  " columns and the columns it sends");
    buffers_ = detail::owned_bytes<pool_resource>(pool_resource(stream), 4 * strip_bytes(), allocation_alignment);
  }

  void pack() {
    if (halo_ == 0) return;
    if (neighbours_.left >= 0) copy_strip(strip(send_left), strip_pitch(), column(halo_), block_.pitch_bytes(), "pack");
    if (neighbours_.right >= 0)
      copy_strip(strip(send_right), strip_pitch(), column(block_.cols() - 2 * halo_), block_.pitch_bytes(), "pack");
  }

  void post() {
    if (halo_ == 0) return;
    detail::post_halo_messages(detail::halo_side{neighbours_.left, strip(send_left), strip(receive_left)},
                               detail::halo_side{neighbours_.right, strip(send_right), strip(receive_right)}, strip_bytes(),
                               comm_, stream_, "coalesce::column_halo_exchange::post");
  }

  void unpack() {
    if (halo_ == 0) return;
    if (neighbours_.left >= 0) copy_strip(column(0), block_.pitch_bytes(), strip(receive_left), strip_pitch(), "unpack");
    if (neighbours_.right >= 0)
      copy_strip(column(block_.cols() - halo_), block_.pitch_bytes(), strip(receive_right), strip_pitch(), "unpack");
  }

  // pack, post and unpack: for one rank per process, not inside a group the caller opened (the
  // unpack would be queued before the receives it reads).
  void exchange() {
    pack();
    post();
    unpack();
  }

 private:
  enum strip_index { send_left, send_right, receive_left, receive_right };

  std::size_t strip_pitch() const noexcept { return halo_ * sizeof(T); }
  std::size_t strip_bytes() const noexcept { return block_.rows() * strip_pitch(); }
  unsigned char* strip(strip_index i) const noexcept { return static_cast<unsigned char*>(buffers_.get()) + i * strip_bytes(); }
  unsigned char* column(std::size_t c) const noexcept { return reinterpret_cast<unsigned char*>(block_.row(0) + c); }
  void copy_strip(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, const char* step) const {
    throw_on_error(::cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, strip_pitch(), block_.rows(), cudaMemcpyDeviceToDevice, stream_),
                   (std::string("coalesce::column_halo_exchange::") + step + ": cudaMemcpy2DAsync").c_str());
  }

  pitched_view<T> block_;
  std::size_t halo_;
  column_neighbours neighbours_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  detail::owned_bytes<pool_resource> buffers_;
};

}  // namespace coalesce
