// coalesce: halo exchange between GPUs over NCCL, for a matrix or a volume split into blocks.
//
// Each GPU (each NCCL rank) holds one block of a global grid, with `halo` extra layers on either
// side along the axis it is split: an exchange sends the block's first and last `halo` own layers
// to the neighbours on either side, and receives theirs into its halos.
// - A matrix split into blocks of rows (exchange_row_halos, row_halo_exchange): rows are
//   contiguous in pitched memory, so each message is one run of bytes straight from the matrix:
//   no packing.
// - A matrix split into blocks of columns (column_halo_exchange): a column strip is not contiguous,
//   so the strips sent are packed into a buffer and the ones received unpacked, by one coalesced
//   kernel launch for both sides (detail/box_copy.hpp).
// - A volume split along z, y or x (volume_halo_exchange): faces across z planes of a whole
//   volume go as they are, like rows; faces across rows or columns are packed like column strips.
// For a split along several axes, exchange one axis after the other, each over the whole extent
// of the others, halos included: the edges and corners then come along. Particles move between
// ranks through migration.hpp.
//
// coalesce never creates processes or communicators: the user passes an ncclComm_t, so the same
// calls serve one process driving several GPUs (ncclCommInitAll; call the exchanges of all its
// ranks between one ncclGroupStart and ncclGroupEnd) and one process per GPU (ncclCommInitRank).
// Needs a CUDA compiler (the packing kernels) and NCCL's header and library (CMake target
// coalesce::nccl).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/nccl.hpp launches packing kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/detail/box_copy.hpp>
#  include <coalesce/detail/halo_parts.hpp>
#  include <coalesce/detail/nccl_group.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/nccl_error.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/pitched_volume.hpp>

#  include <cuda_runtime_api.h>
#  include <nccl.h>

#  include <cstddef>
#  include <optional>
#  include <stdexcept>
#  include <string>
#  include <type_traits>
#  include <utility>

namespace coalesce {

/// The ranks that own the rows above and below a block; -1 where the block is at the domain's
/// edge (its halo there is left as it is: the boundary condition's to fill). For a periodic
/// domain, the first and last ranks are each other's neighbours.
struct row_neighbours {
  int above = -1;  ///< the rank whose block ends where this one starts
  int below = -1;  ///< the rank whose block starts where this one ends
};

/// Sends the block's first and last `halo` own rows to the ranks above and below, and receives
/// their rows into its halos, ordered on `stream`: work queued on `stream` afterwards sees the
/// halos, and `stream` must be ordered after the writes of the rows it sends. Every rank's block
/// must have the same columns and pitch (the matrices of one shape and policy do), and own the
/// padding between its rows alike. The `halo` rows go as one message each way where the block
/// owns that padding (a whole matrix's view does), and one message per row where it does not (a
/// block narrower than its matrix: the padding is its neighbour's columns); ranks that chose
/// differently would post messages that do not pair. One NCCL group; inside a group the caller
/// opened, it joins that one. Throws std::invalid_argument if the block is too short for its
/// halos, coalesce::nccl_error if NCCL fails.
template <class T>
void exchange_row_halos(pitched_view<T> block, std::size_t halo, row_neighbours neighbours, ncclComm_t comm,
                        cudaStream_t stream) {
  static_assert(!std::is_const_v<T>,
                "coalesce::exchange_row_halos: the block receives its halos: pass a writable view");
  constexpr const char* what = "coalesce::exchange_row_halos";
  COALESCE_DETAIL_NVTX_RANGE("coalesce::exchange_row_halos");
  if (halo == 0 || (neighbours.above < 0 && neighbours.below < 0)) return;
  detail::require_room_for_halos(block.rows(), halo, what, "rows");
  const std::size_t row_bytes = block.cols() * sizeof(T);
  const auto layers = block.owned_row_bytes() == block.pitch_bytes()
                          ? detail::halo_messages{(halo - 1) * block.pitch_bytes() + row_bytes}
                          : detail::halo_messages{row_bytes, halo, block.pitch_bytes()};
  const std::size_t own_first = halo, own_last = block.rows() - 2 * halo;  // the rows sent up, and down
  detail::post_halo_messages(detail::halo_side{neighbours.above, block.row(own_first), block.row(0)},
                             detail::halo_side{neighbours.below, block.row(own_last), block.row(block.rows() - halo)},
                             layers, comm, stream, what);
}

/// The split-phase form, for overlap: start() posts the exchange on a stream of its own, and
/// finish() makes the stream of the work that reads the halos wait for it, so that the block's
/// interior can be computed meanwhile. Inside a group the caller opened (one process driving
/// several GPUs), NCCL queues the messages only at the group's end, so finish() comes after the
/// outermost ncclGroupEnd: it marks the exchange stream there. Holds one CUDA event (of the
/// current device when made).
template <class T>
class row_halo_exchange {
 public:
  /// The exchange of `halo` rows of `block` with `neighbours` over `comm` (as exchange_row_halos);
  /// makes the event. Throws coalesce::cuda_error if the event cannot be made.
  row_halo_exchange(pitched_view<T> block, std::size_t halo, row_neighbours neighbours, ncclComm_t comm)
      : block_(block), halo_(halo), neighbours_(neighbours), comm_(comm), done_("coalesce::row_halo_exchange") {}

  /// Posts the exchange on `exchange_stream`, which must be ordered after the writes of the rows
  /// it sends.
  void start(cudaStream_t exchange_stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::row_halo_exchange::start");
    exchange_row_halos(block_, halo_, neighbours_, comm_, exchange_stream);
    exchange_stream_ = exchange_stream;
  }
  /// Work queued on `work_stream` from now on sees the halos. After the outermost ncclGroupEnd.
  void finish(cudaStream_t work_stream) {
    done_.order(exchange_stream_, work_stream, "coalesce::row_halo_exchange::finish");
  }

 private:
  pitched_view<T> block_;
  std::size_t halo_;
  row_neighbours neighbours_;
  ncclComm_t comm_;
  cudaStream_t exchange_stream_{};
  detail::halos_done_event done_;
};

/// The ranks that own the columns left and right of a block; -1 at the domain's edge.
struct column_neighbours {
  int left = -1;   ///< the rank whose block ends where this one starts
  int right = -1;  ///< the rank whose block starts where this one ends
};

/// The axes of a volume, named by the coordinate that changes along them: a split along z gives
/// each rank a block of whole planes, along y a block of rows of every plane, along x of columns.
enum class volume_axis { z, y, x };

/// The ranks that own the blocks before a block (smaller coordinates along the axis) and after it;
/// -1 at the domain's edge.
struct axis_neighbours {
  int before = -1;  ///< the rank whose block ends where this one starts along the axis
  int after = -1;   ///< the rank whose block starts where this one ends along the axis
};

/// The halo exchange of a volume split along one axis. The block holds `halo` extra layers on
/// either side along `axis`: layers [0, halo) receive the last own layers of the rank before, the
/// last `halo` layers the first own layers of the rank after. It runs in three steps on one stream,
/// given when it is made:
///   pack()   copies the block's first and last `halo` own layers into send buffers;
///   post()   sends them and receives the neighbours' into receive buffers (one NCCL group; inside
///            a group the caller opened - one process driving several GPUs posts every rank's
///            exchange in one group - it joins that one);
///   unpack() copies what was received into the halo layers; call it after the group has ended.
/// exchange() does the three for one rank per process. The split-phase form, for overlap: start()
/// packs and posts (inside the caller's group, if one is open), and finish(work_stream), after the
/// outermost ncclGroupEnd, unpacks and makes `work_stream` wait for the halos, so that work on
/// other streams may compute the block's interior meanwhile.
///
/// A face that is one run of memory goes as it is, with no buffers, and pack() and unpack() do
/// nothing: `halo` planes of a volume whose planes follow each other at the pitch and whose rows
/// own their padding (a whole volume's view), or `halo` rows of a volume of one plane. Other faces
/// - across rows or columns of a deep volume, or of a block narrower than its volume - are packed
/// and unpacked by one coalesced kernel launch for both sides. The four packed faces are one
/// allocation from coalesce's pool on the stream, freed in stream order when the exchange is
/// destroyed; make the exchange with the block's device current. Every rank's block must have the
/// same shape, and own its rows' padding alike. Throws std::invalid_argument if the block
/// is too thin for its halos, coalesce::nccl_error or coalesce::cuda_error if NCCL or CUDA fails.
template <class T>
class volume_halo_exchange {
  static_assert(!std::is_const_v<T>,
                "coalesce::volume_halo_exchange: the block receives its halos: pass a writable view");

 public:
  /// The exchange of `halo` layers along `axis` of `block` with `neighbours` over `comm`, on
  /// `stream`; `what` names it in errors. Takes the buffers where the faces are packed. Nothing is
  /// exchanged when `halo` is 0, the block is empty or it has no neighbour. Throws
  /// std::invalid_argument if the block is too thin for its halos, coalesce::cuda_error if the
  /// buffers cannot be allocated.
  volume_halo_exchange(pitched_volume_view<T> block, volume_axis axis, std::size_t halo, axis_neighbours neighbours,
                       ncclComm_t comm, cudaStream_t stream, const char* what = "coalesce::volume_halo_exchange")
      : block_(block), axis_(axis), halo_(halo), neighbours_(neighbours), comm_(comm), stream_(stream), what_(what) {
    if (halo == 0 || (neighbours.before < 0 && neighbours.after < 0) || block.empty()) {
      halo_ = 0;  // nothing to exchange
      return;
    }
    detail::require_room_for_halos(extent(), halo, what,
                                   axis == volume_axis::z   ? "planes"
                                   : axis == volume_axis::y ? "rows"
                                                            : "columns");
    if (!face_is_one_run())
      buffers_ = detail::owned_bytes<pool_resource>(pool_resource(stream), 4 * face(0).size() * sizeof(T),
                                                    allocation_alignment);
  }

  /// Copies the first and last `halo` own layers into the send buffers, on the stream, for each
  /// side that has a neighbour; nothing where the faces go as they are. Throws coalesce::cuda_error
  /// if the launch fails.
  void pack() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::pack");
    if (halo_ == 0 || !packs()) return;
    detail::copy_boxes<detail::box_direction::to_buffer>(sent(neighbours_.before, halo_, send_before),
                                                         sent(neighbours_.after, extent() - 2 * halo_, send_after),
                                                         stream_, what_);
  }

  /// Sends the faces and receives the neighbours' (into the receive buffers, or straight into the
  /// halo layers where the faces go as they are), on the stream: one NCCL group, joining the
  /// caller's if one is open. Throws coalesce::nccl_error if NCCL fails.
  void post() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::post");
    if (halo_ == 0) return;
    if (packs()) {
      detail::post_halo_messages(detail::halo_side{neighbours_.before, buffer(send_before), buffer(receive_before)},
                                 detail::halo_side{neighbours_.after, buffer(send_after), buffer(receive_after)},
                                 detail::halo_messages{face(0).size() * sizeof(T)}, comm_, stream_, what_);
      return;
    }
    const auto start = [&](std::size_t first) { return face(first).row(0, 0); };
    detail::post_halo_messages(detail::halo_side{neighbours_.before, start(halo_), start(0)},
                               detail::halo_side{neighbours_.after, start(extent() - 2 * halo_),
                                                 start(extent() - halo_)},
                               detail::halo_messages{run_bytes()}, comm_, stream_, what_);
  }

  /// Copies the received faces into the halo layers, on the stream, once the group that posted them
  /// has ended; nothing where the faces go as they are. Throws coalesce::cuda_error if the launch
  /// fails.
  void unpack() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::unpack");
    if (halo_ == 0 || !packs()) return;
    detail::copy_boxes<detail::box_direction::from_buffer>(sent(neighbours_.before, 0, receive_before),
                                                           sent(neighbours_.after, extent() - halo_, receive_after),
                                                           stream_, what_);
  }

  /// pack, post and unpack: for one rank per process, not inside a group the caller opened (the
  /// unpack would be queued before the receives it reads).
  void exchange() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::exchange");
    pack();
    post();
    unpack();
  }

  /// pack and post: the split-phase form's first half, inside the caller's group if one is open.
  void start() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::start");
    pack();
    post();
  }
  /// Work queued on `work_stream` from now on sees the halos. After the outermost ncclGroupEnd.
  void finish(cudaStream_t work_stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::volume_halo_exchange::finish");
    unpack();
    if (!done_) done_.emplace(what_);
    done_->order(stream_, work_stream, what_);
  }

  /// Whether the faces are packed (false: they go from the block's memory as they are).
  bool packs() const noexcept { return buffers_.get() != nullptr; }

 private:
  enum buffer_index { send_before, send_after, receive_before, receive_after };

  std::size_t extent() const noexcept {
    return axis_ == volume_axis::z ? block_.depth() : axis_ == volume_axis::y ? block_.height() : block_.width();
  }
  // The `halo` layers from layer `first` along the axis, whole along the others.
  pitched_volume_view<T> face(std::size_t first) const noexcept {
    switch (axis_) {
      case volume_axis::z: return block_.block(first, 0, 0, halo_, block_.height(), block_.width());
      case volume_axis::y: return block_.block(0, first, 0, block_.depth(), halo_, block_.width());
      default: return block_.block(0, 0, first, block_.depth(), block_.height(), halo_);
    }
  }
  bool rows_own_padding() const noexcept { return block_.owned_row_bytes() == block_.pitch_bytes(); }
  bool face_is_one_run() const noexcept {
    if (axis_ == volume_axis::z) return rows_own_padding() && (halo_ == 1 || block_.rows_are_one_matrix());
    if (axis_ == volume_axis::y) return block_.depth() == 1 && (halo_ == 1 || rows_own_padding());
    return false;
  }
  // A face sent as it is: from its first element to the last element of its last row.
  std::size_t run_bytes() const noexcept {
    const std::size_t rows = face(0).depth() * face(0).height();
    return (rows - 1) * block_.pitch_bytes() + block_.width() * sizeof(T);
  }
  T* buffer(buffer_index i) const noexcept { return static_cast<T*>(buffers_.get()) + i * face(0).size(); }
  // The face from layer `first` and its buffer, or nothing where there is no neighbour that side.
  detail::box_and_buffer<T> sent(int peer, std::size_t first, buffer_index i) const noexcept {
    if (peer < 0) return {};
    return {face(first), buffer(i)};
  }

  pitched_volume_view<T> block_;
  volume_axis axis_;
  std::size_t halo_;
  axis_neighbours neighbours_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  const char* what_;
  detail::owned_bytes<pool_resource> buffers_;
  std::optional<detail::halos_done_event> done_;  // made by the first finish()
};

/// A matrix split into blocks of columns, with `halo` columns on either side: columns [0, halo)
/// receive the last own columns of the rank on the left, [cols - halo, cols) the first of the rank
/// on the right. The steps and their rules are volume_halo_exchange's (the matrix is a volume of
/// one plane split along x): pack() copies the strips sent into buffers, post() sends and
/// receives them, unpack() copies the received strips into the halo columns, exchange() does the
/// three, and start() / finish(work_stream) are the split-phase form; pack and unpack are one
/// coalesced kernel launch each, for both sides.
template <class T>
class column_halo_exchange {
  static_assert(!std::is_const_v<T>,
                "coalesce::column_halo_exchange: the block receives its halos: pass a writable view");

 public:
  /// The exchange of `halo` columns of `block` with `neighbours` over `comm`, on `stream`. Throws
  /// as volume_halo_exchange's constructor does.
  column_halo_exchange(pitched_view<T> block, std::size_t halo, column_neighbours neighbours, ncclComm_t comm,
                       cudaStream_t stream)
      : exchange_(as_volume(block), volume_axis::x, halo, axis_neighbours{neighbours.left, neighbours.right}, comm,
                  stream, "coalesce::column_halo_exchange") {}

  /// Packs the strips sent.
  void pack() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::pack");
    exchange_.pack();
  }
  /// Sends and receives the strips.
  void post() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::post");
    exchange_.post();
  }
  /// Unpacks the strips received.
  void unpack() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::unpack");
    exchange_.unpack();
  }
  /// The three, outside a caller's group.
  void exchange() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::exchange");
    exchange_.exchange();
  }
  /// Pack and post.
  void start() {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::start");
    exchange_.start();
  }
  /// Unpack; work queued on `work_stream` from now on sees the halos.
  void finish(cudaStream_t work_stream) {
    COALESCE_DETAIL_NVTX_RANGE("coalesce::column_halo_exchange::finish");
    exchange_.finish(work_stream);
  }

 private:
  static pitched_volume_view<T> as_volume(const pitched_view<T>& m) {
    return pitched_volume_view<T>(m.data(), 1, m.rows(), m.cols(), m.pitch_bytes(), m.rows() * m.pitch_bytes(),
                                  m.owned_row_bytes());
  }

  volume_halo_exchange<T> exchange_;
};

}  // namespace coalesce

#endif  // __CUDACC__
