// coalesce: particle migration between GPUs over NCCL. Each rank holds the particles of its part
// of the domain in a device soa_vector; after they move, a particle's new owner is
// destination(element), and migrate sends every particle whose owner changed to that rank and
// receives the ones that came to this one:
//
//   const auto moved = coalesce::migrate(particles, [=] __device__(auto p) { return rank_of(p.x); }, comm);
//
// What moves is only the particles that leave and arrive, never the ones that stay:
// - one pass over the vector calls destination once per particle, appends each that leaves to a
//   list (its destination and index as one key) and counts the departures for each rank;
// - the list, sorted (a radix sort of the leaving ones only: by destination, then index), gathers
//   every column into one buffer, so each rank's particles are one run of each column: one
//   ncclSend per column and destination, never one per particle;
// - the holes they leave below the new size are filled from the particles that stay above it
//   (destination is called again for those): as many moves as holes. The result is the same on
//   every run, but the particles that stay do not keep their order;
// - the counts go to every rank, then the columns, each as grouped ncclSend / ncclRecv, and the
//   arrivals land after the kept particles, in the order of their sources' ranks.
// destination must be a pure function of the element.
//
// coalesce never creates processes or communicators (see nccl.hpp). With one process per GPU,
// migrate does everything. A process that drives several GPUs (ncclCommInitAll) must post every
// rank's messages inside one NCCL group: migrate(vectors, destination, comms, devices) does that,
// or the process runs particle_migration's four steps itself:
//
//   std::vector<coalesce::particle_migration<Particle>> m;             // one per GPU, made with
//   for (int r = 0; r < n; ++r) {                                       // that GPU current
//     cudaSetDevice(devices[r]);
//     m.emplace_back(particles[r], destination, comms[r]);
//   }
//   ncclGroupStart(); for (auto& x : m) x.post_counts();      ncclGroupEnd();
//   for (auto& x : m) x.receive_counts();                    // waits for each rank's counts
//   ncclGroupStart(); for (auto& x : m) x.post_particles();   ncclGroupEnd();
//
// Each step runs on the vector's stream, with the device that was current when its
// particle_migration was made current again for the step. Needs a CUDA compiler and NCCL (CMake
// target coalesce::nccl).
#pragma once

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error "coalesce/migration.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#include <coalesce/config.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/permute_walk.hpp>
#include <coalesce/detail/reorder_plan.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/nccl.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce {

// What one rank's migration moved: the particles it sent away and the ones it received.
struct migration_counts {
  std::size_t departed = 0;
  std::size_t arrived = 0;
};

namespace detail {

inline constexpr unsigned migration_threads = 256;

// A rank outside [0, ranks) from destination: the first one seen, and how many.
struct bad_destination {
  unsigned long long count;
  int example;
};

// The rank destination gives the element at i, as an int.
template <class T, class Destination>
COALESCE_DEVICE COALESCE_FORCEINLINE int destination_of(const soa_view<const T>& in, std::size_t i, const Destination& destination) {
  T v;
  load_element(in, i, v);  // the loads of fields destination never reads are dead code
  using result = decltype(destination(element_proxy(v)));
  static_assert(std::is_convertible_v<result, int>,
                "coalesce::migrate: destination(element) must return the rank (an int) that owns the element now");
  return static_cast<int>(destination(element_proxy(v)));
}

// The one pass over every particle: each that leaves is appended to `leavers` as the key
// (destination << index_bits) | index, and counted for its destination. A block classifies
// migration_items particles a thread and adds to the list's length and to each rank's count once
// (shared-memory counts first; for more ranks than fit, one atomic per particle). With global
// atomics per warp instead, on one address, the whole local half took 2.28 ms for 32 M particles
// of six floats, a tenth leaving, on an H200; with this kernel 0.91 ms (copying every column once:
// 0.40 ms). This pass alone takes 107 us there (ncu), reading 134 MB: a quarter of the DRAM
// bandwidth. Fewer atomics did not make it faster, as measured: with each warp's atomics
// aggregated (a ballot for the slots, __match_any_sync for the counts) it took 132 us, and with
// fewer blocks (16 or 32 particles a thread) 140 and 223 us. The list's order is the atomics';
// sorting the keys makes it deterministic and groups it by destination. A destination outside
// [0, ranks) is recorded in `bad` and the particle stays, so that nothing moves before the caller
// throws.
inline constexpr unsigned migration_items = 8;
inline constexpr int migration_shared_ranks = 8192;  // 32 KB of counts

template <class T, class Destination>
__global__ void __launch_bounds__(migration_threads)
    classify_kernel(soa_view<const T> in, Destination destination, int self, int ranks, int index_bits,
                    unsigned long long* leavers, unsigned long long* leaving_count, unsigned long long* counts,
                    bad_destination* bad) {
  extern __shared__ unsigned rank_counts[];  // ranks of them, when ranks <= migration_shared_ranks
  __shared__ unsigned block_leaving;
  __shared__ unsigned long long block_base;
  const bool shared_counts = ranks <= migration_shared_ranks;
  if (threadIdx.x == 0) block_leaving = 0;
  if (shared_counts)
    for (int r = int(threadIdx.x); r < ranks; r += int(migration_threads)) rank_counts[r] = 0;
  __syncthreads();

  const std::size_t first = std::size_t(blockIdx.x) * migration_threads * migration_items + threadIdx.x;
  int to[migration_items];
  unsigned slot[migration_items];
#pragma unroll
  for (unsigned k = 0; k < migration_items; ++k) {
    const std::size_t i = first + std::size_t(k) * migration_threads;
    to[k] = self;
    if (i >= in.size()) continue;
    int d = destination_of(in, i, destination);
    if (d < 0 || d >= ranks) {
      if (atomicAdd(&bad->count, 1ull) == 0) bad->example = d;
      d = self;
    }
    to[k] = d;
    if (d == self) continue;
    slot[k] = atomicAdd(&block_leaving, 1u);
    if (shared_counts) atomicAdd(&rank_counts[d], 1u);
    else atomicAdd(&counts[d], 1ull);
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_leaving > 0) block_base = atomicAdd(leaving_count, (unsigned long long)block_leaving);
  if (shared_counts)
    for (int r = int(threadIdx.x); r < ranks; r += int(migration_threads))
      if (rank_counts[r] != 0) atomicAdd(&counts[r], (unsigned long long)rank_counts[r]);
  __syncthreads();
#pragma unroll
  for (unsigned k = 0; k < migration_items; ++k)
    if (to[k] != self)
      leavers[block_base + slot[k]] =
          (static_cast<unsigned long long>(to[k]) << index_bits) | (first + std::size_t(k) * migration_threads);
}

// The index in a leaver's key, and whether it lies below the new size (a hole the kept particles
// above it fill).
template <class Index>
struct index_of_key {
  unsigned long long mask;
  __host__ __device__ Index operator()(unsigned long long key) const { return static_cast<Index>(key & mask); }
};
template <class Index>
struct below {
  Index size;
  __host__ __device__ bool operator()(Index i) const { return i < size; }
};

// Whether the particle at i (of the part above the new size) stays: destination is called again,
// for these particles only.
template <class T, class Destination>
struct stays {
  soa_view<const T> in;
  Destination destination;
  int self;
  __device__ bool operator()(std::size_t i) const { return destination_of(in, i, destination) == self; }
};

// The particle at holes[k] = the one at fillers[k], every column, for k < *count: the kept
// particles above the new size move down into the holes the departures left below it (the two
// sets are disjoint). One thread a particle, its two indices read once; the writes land as
// scattered as the holes, and they are its time: for 32 M particles, a tenth leaving, 312 us on
// an H200, as much as one launch per column (6 x 50 us), against 105 us for the pass that
// classifies all 32 M and 195 us for gathering the departures' six columns.
template <class T, class Index>
__global__ void __launch_bounds__(migration_threads)
    fill_holes_kernel(soa_view<T> v, const Index* holes, const Index* fillers, const Index* count) {
  const std::size_t k = std::size_t(blockIdx.x) * migration_threads + threadIdx.x;
  if (k >= *count) return;
  T moved;
  load_element(soa_view<const T>(v), fillers[k], moved);
  store_element(v, holes[k], moved);
}

// The bits a value below `count` needs (at least 1).
inline int bits_below(std::size_t count) {
  int bits = 1;
  while (bits < 64 && (std::size_t(1) << bits) < count) ++bits;
  return bits;
}

template <class T, class Resource>
using departures_of = soa_vector<T, device_space, Resource>;

// The local half of a migration: finds `v`'s departures in one pass over it, gathers them grouped
// by destination (in index order within a group) into `departures`, fills the holes they leave
// below v's new size with the particles above it that stay (in index order), and shrinks v to the
// particles that stay. Work beyond the one pass is in the departures' count. `sent[r]` is the
// number bound for rank r, `send_counts` (device, `ranks` of them) the same, for NCCL. Waits
// once, for the counts. Throws std::out_of_range, having moved nothing, if destination returned
// a rank outside [0, ranks).
template <class Index, class T, class Resource, class Destination>
void pack_departures(soa_vector<T, device_space, Resource>& v, const Destination& destination, int self, int ranks,
                     departures_of<T, Resource>& departures, std::vector<std::size_t>& sent,
                     unsigned long long* send_counts) {
  constexpr const char* what = "coalesce::migrate";
  const std::size_t n = v.size();
  const cudaStream_t stream = v.stream();
  const pool_resource pool(stream);
  const int index_bits = bits_below(n), key_bits = index_bits + bits_below(std::size_t(ranks));
  if (key_bits > 64)
    throw std::length_error(std::string(what) + ": " + std::to_string(n) + " particles and " + std::to_string(ranks) +
                            " ranks do not fit a 64-bit key");

  const owned_bytes<pool_resource> small(pool, sizeof(bad_destination) + 3 * sizeof(unsigned long long), allocation_alignment);
  auto* const bad = static_cast<bad_destination*>(small.get());
  auto* const leaving_count = reinterpret_cast<unsigned long long*>(bad + 1);
  auto* const selected = reinterpret_cast<Index*>(leaving_count + 1);  // [0]: the holes, [1]: the fillers
  throw_on_error(::cudaMemsetAsync(send_counts, 0, std::size_t(ranks) * sizeof(unsigned long long), stream), what);
  throw_on_error(::cudaMemsetAsync(small.get(), 0, sizeof(bad_destination) + sizeof(unsigned long long), stream), what);
  owned_bytes<pool_resource> leavers(pool, n * sizeof(unsigned long long), allocation_alignment);
  if (n > 0) {
    const std::size_t shared_bytes = ranks <= migration_shared_ranks ? std::size_t(ranks) * sizeof(unsigned) : 0;
    classify_kernel<T, Destination><<<blocks_for(n, migration_threads * migration_items, what), migration_threads, shared_bytes,
                                      stream>>>(
        v.const_view(), destination, self, ranks, index_bits, static_cast<unsigned long long*>(leavers.get()), leaving_count,
        send_counts, bad);
    throw_if_launch_failed(what);
  }

  // The one wait: how many leave, for where, and whether every destination was a rank.
  std::vector<unsigned long long> counts(static_cast<std::size_t>(ranks));
  bad_destination bad_host{};
  unsigned long long m = 0;
  throw_on_error(::cudaMemcpyAsync(counts.data(), send_counts, counts.size() * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, stream),
                 what);
  throw_on_error(::cudaMemcpyAsync(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost, stream), what);
  throw_on_error(::cudaMemcpyAsync(&m, leaving_count, sizeof m, cudaMemcpyDeviceToHost, stream), what);
  throw_on_error(::cudaStreamSynchronize(stream), "coalesce::migrate: waiting for the departure counts");
  if (bad_host.count != 0)
    throw std::out_of_range(std::string(what) + ": destination returned rank " + std::to_string(bad_host.example) + " for " +
                            std::to_string(bad_host.count) + " element(s); the communicator's ranks are 0 to " +
                            std::to_string(ranks - 1) + " (nothing was moved)");
  sent.assign(counts.begin(), counts.end());
  departures.resize_for_overwrite(m);
  if (m == 0) return;

  // The keys sorted: grouped by destination, in index order within a group, whatever order the
  // atomics appended them in.
  const owned_bytes<pool_resource> sorted(pool, m * sizeof(unsigned long long), allocation_alignment);
  auto* const keys = static_cast<unsigned long long*>(leavers.get());
  auto* const sorted_keys = static_cast<unsigned long long*>(sorted.get());
  std::size_t sort_bytes = 0;
  throw_on_error(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys, sorted_keys, m, 0, key_bits, stream), what);
  {
    const owned_bytes<pool_resource> sort_temp(pool, sort_bytes, allocation_alignment);
    throw_on_error(cub::DeviceRadixSort::SortKeys(sort_temp.get(), sort_bytes, keys, sorted_keys, m, 0, key_bits, stream),
                   "coalesce::migrate: cub::DeviceRadixSort::SortKeys");
  }
  // The departures' indices in that order (into the list the keys came from), then every column
  // gathered by them.
  auto* const departing = reinterpret_cast<Index*>(keys);
  throw_on_error(cub::DeviceTransform::Transform(sorted_keys, departing, m, index_of_key<Index>{(1ull << index_bits) - 1}, stream),
                 "coalesce::migrate: cub::DeviceTransform::Transform");
  launch_gather(v.const_view(), static_cast<const Index*>(departing), m, departures.view(), stream, what);
  const owned_bytes<pool_resource> lists(pool, 2 * m * sizeof(Index), allocation_alignment);
  auto* const holes = static_cast<Index*>(lists.get());
  auto* const fillers = holes + m;

  // The holes below the new size, and as many particles above it that stay, both in a fixed order.
  const Index kept = static_cast<Index>(n - m);
  const thrust::counting_iterator<Index> above(kept);
  const stays<T, Destination> staying{v.const_view(), destination, self};
  std::size_t hole_bytes = 0, filler_bytes = 0;
  throw_on_error(cub::DeviceSelect::If(nullptr, hole_bytes, departing, holes, selected, m, below<Index>{kept}, stream), what);
  throw_on_error(cub::DeviceSelect::If(nullptr, filler_bytes, above, fillers, selected + 1, m, staying, stream), what);
  {
    const owned_bytes<pool_resource> select_temp(pool, std::max(hole_bytes, filler_bytes), allocation_alignment);
    throw_on_error(cub::DeviceSelect::If(select_temp.get(), hole_bytes, departing, holes, selected, m, below<Index>{kept}, stream),
                   "coalesce::migrate: cub::DeviceSelect::If");
    throw_on_error(cub::DeviceSelect::If(select_temp.get(), filler_bytes, above, fillers, selected + 1, m, staying, stream),
                   "coalesce::migrate: cub::DeviceSelect::If");
  }
  fill_holes_kernel<T, Index><<<blocks_for(m, migration_threads, what), migration_threads, 0, stream>>>(
      v.view(), static_cast<const Index*>(holes), static_cast<const Index*>(fillers), static_cast<const Index*>(selected + 1));
  throw_if_launch_failed("coalesce::migrate: the kernel that fills the departures' holes");
  v.resize_for_overwrite(n - m);  // smaller: nothing is reallocated
}

}  // namespace detail

// One rank's migration in the four steps a process that drives several GPUs must interleave
// (see the top of this header); migrate runs them in order for a process with one GPU.
template <class T, class Resource = default_resource_t<device_space>>
class particle_migration {
 public:
  // Classifies the particles, gathers the departures grouped by destination and compacts the ones
  // that stay (local; waits once on the vector's stream for the counts). `particles` must outlive
  // this object, and is not to be touched until post_particles' messages have completed on its
  // stream. Throws std::out_of_range, having moved nothing, if destination returns a rank outside
  // the communicator; coalesce::nccl_error or coalesce::cuda_error if a call fails.
  template <class Destination>
  particle_migration(soa_vector<T, device_space, Resource>& particles, Destination destination, ncclComm_t comm)
      : particles_(&particles),
        comm_(comm),
        device_((detail::throw_if_earlier_error("coalesce::migrate"), detail::current_device())),
        departures_(particles.resource()),
        pool_(particles.stream()) {
    throw_on_nccl_error(::ncclCommUserRank(comm, &rank_), "coalesce::particle_migration: ncclCommUserRank");
    throw_on_nccl_error(::ncclCommCount(comm, &ranks_), "coalesce::particle_migration: ncclCommCount");
    counts_ = detail::owned_bytes<pool_resource>(pool_, 2 * std::size_t(ranks_) * sizeof(unsigned long long), allocation_alignment);
    // Zero, so that the entry for this rank, which nothing receives, is copied back initialized.
    throw_on_error(::cudaMemsetAsync(received_counts(), 0, std::size_t(ranks_) * sizeof(unsigned long long), stream()),
                   "coalesce::particle_migration: cudaMemsetAsync");
    if (detail::permutation_fits_32_bits(particles.size()))
      detail::pack_departures<std::uint32_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    else
      detail::pack_departures<std::uint64_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    kept_ = particles.size();
  }

  // Sends this rank's count for every other rank and receives theirs (one message each way per
  // pair of ranks), inside the caller's NCCL group if one is open.
  void post_counts() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::post_counts");
    detail::in_nccl_group("coalesce::particle_migration::post_counts", [&] {
      for (int r = 0; r < ranks_; ++r) {
        if (r == rank_) continue;
        throw_on_nccl_error(::ncclSend(send_counts() + r, 1, ncclUint64, r, comm_, stream()),
                            "coalesce::particle_migration: ncclSend");
        throw_on_nccl_error(::ncclRecv(received_counts() + r, 1, ncclUint64, r, comm_, stream()),
                            "coalesce::particle_migration: ncclRecv");
      }
    });
  }

  // Waits for the counts post_counts receives and makes room after the kept particles for the
  // arrivals (the vector's first kept elements stay where they are, or move with a reallocation).
  void receive_counts() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::receive_counts");
    std::vector<unsigned long long> counts(std::size_t(ranks_), 0);
    throw_on_error(::cudaMemcpyAsync(counts.data(), received_counts(), counts.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, stream()),
                   "coalesce::particle_migration: copying the counts");
    throw_on_error(::cudaStreamSynchronize(stream()), "coalesce::particle_migration: waiting for the counts");
    counts[std::size_t(rank_)] = 0;  // never received: nothing is sent to oneself
    received_.assign(counts.begin(), counts.end());
    arrived_ = 0;
    for (const std::size_t c : received_) arrived_ += c;
    particles_->resize_for_overwrite(kept_ + arrived_);
  }

  // Sends each rank's departures and receives each rank's arrivals, one message per column and
  // peer with particles to move, inside the caller's NCCL group if one is open. The messages
  // complete on the vector's stream.
  void post_particles() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::post_particles");
    detail::in_nccl_group("coalesce::particle_migration::post_particles", [&] {
      std::size_t send_from = 0, receive_at = kept_;
      for (int r = 0; r < ranks_; ++r) {
        const std::size_t out = sent_[std::size_t(r)], in = received_[std::size_t(r)];
        post_columns(r, out, send_from, in, receive_at, std::make_index_sequence<detail::leaf_count_v<T>>{});
        send_from += out;
        receive_at += in;
      }
    });
  }

  // Puts the departures back after the kept particles, before any count was posted: for a
  // migration that cannot go on (another rank of this process found a bad destination), so that
  // no particle is lost. The particles that stayed keep their new order.
  void cancel() {
    const detail::current_device_guard on_device(device_);
    const std::size_t n = departures_.size();
    if (n == 0) return;
    particles_->resize_for_overwrite(kept_ + n);
    copy_back(n, std::make_index_sequence<detail::leaf_count_v<T>>{});
    departures_.clear();
    sent_.assign(sent_.size(), 0);
    kept_ += n;
  }

  std::size_t departed() const noexcept { return departures_.size(); }
  std::size_t arrived() const noexcept { return arrived_; }
  std::size_t kept() const noexcept { return kept_; }
  // The particles bound for each rank (the departures, grouped in rank order).
  const std::vector<std::size_t>& sent() const noexcept { return sent_; }
  const soa_vector<T, device_space, Resource>& departures() const noexcept { return departures_; }

 private:
  unsigned long long* send_counts() const { return static_cast<unsigned long long*>(counts_.get()); }
  unsigned long long* received_counts() const { return send_counts() + ranks_; }
  cudaStream_t stream() const { return particles_->stream(); }

  template <std::size_t... L>
  void copy_back(std::size_t n, std::index_sequence<L...>) {
    const auto from = departures_.const_view();
    const auto to = particles_->view();
    (throw_on_error(::cudaMemcpyAsync(to.template leaf_column<L>() + kept_, from.template leaf_column<L>(),
                                      n * sizeof(*from.template leaf_column<L>()), cudaMemcpyDeviceToDevice, stream()),
                    "coalesce::particle_migration::cancel: cudaMemcpyAsync"),
     ...);
  }

  template <std::size_t... L>
  void post_columns(int peer, std::size_t out, std::size_t send_from, std::size_t in, std::size_t receive_at,
                    std::index_sequence<L...>) {
    const auto from = departures_.const_view();
    const auto to = particles_->view();
    // Both sides post the columns in leaf order: NCCL pairs a peer's messages in posting order.
    if (out > 0)
      (throw_on_nccl_error(::ncclSend(from.template leaf_column<L>() + send_from, out * sizeof(*from.template leaf_column<L>()),
                                      ncclUint8, peer, comm_, stream()),
                           "coalesce::particle_migration: ncclSend"),
       ...);
    if (in > 0)
      (throw_on_nccl_error(::ncclRecv(to.template leaf_column<L>() + receive_at, in * sizeof(*to.template leaf_column<L>()),
                                      ncclUint8, peer, comm_, stream()),
                           "coalesce::particle_migration: ncclRecv"),
       ...);
  }

  soa_vector<T, device_space, Resource>* particles_;
  ncclComm_t comm_;
  int device_;  // current when made: every step makes it current again
  int rank_ = 0;
  int ranks_ = 1;
  soa_vector<T, device_space, Resource> departures_;
  pool_resource pool_;
  detail::owned_bytes<pool_resource> counts_;
  std::vector<std::size_t> sent_;
  std::vector<std::size_t> received_;
  std::size_t kept_ = 0;
  std::size_t arrived_ = 0;
};

// Moves every particle of `particles` (a device soa_vector on this rank) whose owner changed to
// rank destination(element) of `comm`, and appends the particles other ranks send here; the
// particles that stay are compacted, their order not kept. destination receives what for_each's
// f receives for a read-only element and returns an int rank. Call it on every rank of the
// communicator, each process with its own GPU current (for several GPUs in one process, see
// particle_migration). Waits twice on the vector's stream (for the counts leaving and arriving);
// the particles themselves are in place when the stream reaches the end of the messages. Throws
// std::out_of_range, having moved nothing, if destination returns a rank outside the
// communicator; coalesce::nccl_error or coalesce::cuda_error if a call fails. The other ranks
// then wait for this rank's counts: a program that goes on after the exception aborts the
// communicator (ncclCommAbort), which ends their wait with an error.
template <class T, class Resource, class Destination>
migration_counts migrate(soa_vector<T, device_space, Resource>& particles, Destination destination, ncclComm_t comm) {
  particle_migration<T, Resource> migration(particles, destination, comm);
  migration.post_counts();
  migration.receive_counts();
  migration.post_particles();
  return {migration.departed(), migration.arrived()};
}

// The same for a process that drives several GPUs, one rank each: particles[r] lives on GPU
// devices[r], and comms[r] is its rank (from ncclCommInitAll). Runs the four steps of every rank,
// each with its GPU current, posting the messages of all of them in one NCCL group per step, and
// makes the GPU that was current current again. Returns each rank's counts. Throws
// std::invalid_argument if the three lists differ in length, and as migrate does; where one
// rank's destination is bad, the ranks made before it put their departures back, so that no
// vector loses a particle (those that stayed are compacted, and the departures follow them).
template <class T, class Resource, class Destination>
std::vector<migration_counts> migrate(std::vector<soa_vector<T, device_space, Resource>>& particles, Destination destination,
                                      const std::vector<ncclComm_t>& comms, const std::vector<int>& devices) {
  if (comms.size() != particles.size() || devices.size() != particles.size())
    throw std::invalid_argument("coalesce::migrate: " + std::to_string(particles.size()) + " vectors, " +
                                std::to_string(comms.size()) + " communicators and " + std::to_string(devices.size()) +
                                " devices; give one of each per rank");
  detail::throw_if_earlier_error("coalesce::migrate");
  int current = 0;
  throw_on_error(::cudaGetDevice(&current), "coalesce::migrate: cudaGetDevice");
  struct restore_device {
    int device;
    ~restore_device() { (void)::cudaSetDevice(device); }
  } restore{current};
  const auto on = [&](std::size_t r) { throw_on_error(::cudaSetDevice(devices[r]), "coalesce::migrate: cudaSetDevice"); };
  const auto each_in_one_group = [&](auto&& step) {
    detail::in_nccl_group("coalesce::migrate", [&] {
      for (std::size_t r = 0; r < particles.size(); ++r) on(r), step(r);
    });
  };
  std::vector<particle_migration<T, Resource>> migrations;
  migrations.reserve(particles.size());
  try {
    for (std::size_t r = 0; r < particles.size(); ++r) on(r), migrations.emplace_back(particles[r], destination, comms[r]);
  } catch (...) {
    // A bad destination on a later rank: the ranks already packed put their departures back, so
    // that nothing is lost (the rank that threw moved nothing). A failure to put them back must
    // not hide the first error.
    for (auto& m : migrations) {
      try {
        m.cancel();
      } catch (...) {
      }
    }
    throw;
  }
  each_in_one_group([&](std::size_t r) { migrations[r].post_counts(); });
  for (std::size_t r = 0; r < particles.size(); ++r) on(r), migrations[r].receive_counts();
  each_in_one_group([&](std::size_t r) { migrations[r].post_particles(); });
  std::vector<migration_counts> counts;
  for (const auto& m : migrations) counts.push_back({m.departed(), m.arrived()});
  return counts;
}

}  // namespace coalesce

#endif  // __CUDACC__
