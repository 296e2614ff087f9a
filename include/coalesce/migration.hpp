// coalesce: particle migration between GPUs over NCCL. Each rank holds the particles of its part
// of the domain in a device soa_vector; after they move, a particle's new owner is
// destination(element), and migrate sends every particle whose owner changed to that rank and
// receives the ones that came to this one:
//
//   const auto moved = coalesce::migrate(particles, [=] __device__(auto p) { return rank_of(p.x); }, comm);
//
// What moves is only the particles that leave and arrive, never the ones that stay:
// - one pass over the vector calls destination once per particle and counts the departures for
//   each rank;
// - the departures' indices, grouped by destination (a radix sort of a few bits over the leaving
//   ones only), gather every column into one buffer, so each rank's particles are one run of
//   each column: one ncclSend per column and destination, never one per particle;
// - the holes they leave below the new size are filled from the particles that stay above it:
//   the kept ones are compacted in as many moves as there are holes, and their order is not kept;
// - the counts go to every rank, then the columns, each as grouped ncclSend / ncclRecv, and the
//   arrivals land after the kept particles, in the order of their sources' ranks.
//
// coalesce never creates processes or communicators (see nccl.hpp). With one process per GPU,
// migrate does everything. A process that drives several GPUs (ncclCommInitAll) must post every
// rank's messages inside one NCCL group, so it runs particle_migration's four steps itself:
//
//   std::vector<coalesce::particle_migration<Particle>> m;             // one per GPU, that GPU current
//   for (int r = 0; r < n; ++r) m.emplace_back(particles[r], destination, comms[r]);
//   ncclGroupStart(); for (auto& x : m) x.post_counts();      ncclGroupEnd();
//   for (auto& x : m) x.receive_counts();                    // waits for each rank's counts
//   ncclGroupStart(); for (auto& x : m) x.post_particles();   ncclGroupEnd();
//
// Each step runs on the vector's stream, with the vector's device current. Needs a CUDA compiler
// and NCCL (CMake target coalesce::nccl).
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

// Per particle: its destination, whether it leaves, and (for those that leave) one count per
// destination rank, added once per warp and rank. A destination outside [0, ranks) is recorded
// in `bad` and the particle stays, so that nothing moves before the caller throws.
template <class T, class Destination, class Index>
__global__ void __launch_bounds__(migration_threads)
    classify_kernel(soa_view<const T> in, Destination destination, int self, int ranks, unsigned* destinations,
                    unsigned char* leaving, unsigned long long* counts, bad_destination* bad) {
  const std::size_t i = std::size_t(blockIdx.x) * migration_threads + threadIdx.x;
  if (i >= in.size()) return;
  T v;
  load_element(in, i, v);
  using result = decltype(destination(element_proxy(v)));
  static_assert(std::is_convertible_v<result, int>,
                "coalesce::migrate: destination(element) must return the rank (an int) that owns the element now");
  int d = static_cast<int>(destination(element_proxy(v)));
  if (d < 0 || d >= ranks) {
    if (atomicAdd(&bad->count, 1ull) == 0) bad->example = d;
    d = self;
  }
  destinations[i] = unsigned(d);
  leaving[i] = d != self;
  // Lanes bound for the same rank add their count in one atomic, from the lowest of them.
  const unsigned same = __match_any_sync(__activemask(), d);
  if (d != self && (threadIdx.x % 32) == unsigned(__ffs(same) - 1)) atomicAdd(&counts[d], (unsigned long long)__popc(same));
}

// Whether the particle at i (an index of the part above the new size) stays.
struct stays {
  const unsigned char* leaving;
  __host__ __device__ bool operator()(std::size_t i) const { return leaving[i] == 0; }
};

// Column L at holes[k] = column L at fillers[k], for k < *count: the kept particles above the new
// size move down into the holes the departures left below it (the two sets are disjoint).
template <std::size_t L, class T, class Index>
__global__ void __launch_bounds__(migration_threads)
    fill_holes_kernel(soa_view<T> v, const Index* holes, const Index* fillers, const Index* count) {
  const std::size_t k = std::size_t(blockIdx.x) * migration_threads + threadIdx.x;
  if (k >= *count) return;
  v.template leaf_column<L>()[holes[k]] = v.template leaf_column<L>()[fillers[k]];
}

template <class T, class Index, std::size_t... L>
void launch_fill_holes(const soa_view<T>& v, const Index* holes, const Index* fillers, const Index* count, std::size_t most,
                       cudaStream_t stream, std::index_sequence<L...>) {
  const unsigned blocks = blocks_for(most, migration_threads, "coalesce::migrate");
  (fill_holes_kernel<L, T, Index><<<blocks, migration_threads, 0, stream>>>(v, holes, fillers, count), ...);
  throw_if_launch_failed("coalesce::migrate: the kernel that fills the departures' holes");
}

// The bits a destination rank needs: ranks - 1 in binary (at least 1).
inline int rank_bits(int ranks) {
  int bits = 1;
  while ((1ll << bits) < ranks) ++bits;
  return bits;
}

template <class T, class Resource>
using departures_of = soa_vector<T, device_space, Resource>;

// The local half of a migration: classifies `v`'s particles, gathers the departures grouped by
// destination into `departures`, compacts the particles that stay into v's first
// v.size() - departures elements, and shrinks v to them. `sent[r]` is the number bound for rank
// r, `send_counts` (device, `ranks` of them) the same, for NCCL. Waits once, for the counts.
// Throws std::out_of_range, having moved nothing, if destination returned a rank outside
// [0, ranks).
template <class Index, class T, class Resource, class Destination>
void pack_departures(soa_vector<T, device_space, Resource>& v, const Destination& destination, int self, int ranks,
                     departures_of<T, Resource>& departures, std::vector<std::size_t>& sent,
                     unsigned long long* send_counts) {
  constexpr const char* what = "coalesce::migrate";
  const std::size_t n = v.size();
  const cudaStream_t stream = v.stream();
  const pool_resource pool(stream);
  throw_if_earlier_error(what);

  const owned_bytes<pool_resource> scratch_counts(pool, sizeof(bad_destination) + 2 * sizeof(Index), allocation_alignment);
  auto* const bad = static_cast<bad_destination*>(scratch_counts.get());
  auto* const selected = reinterpret_cast<Index*>(bad + 1);  // [0]: the departures, [1]: the fillers
  throw_on_error(::cudaMemsetAsync(send_counts, 0, std::size_t(ranks) * sizeof(unsigned long long), stream), what);
  throw_on_error(::cudaMemsetAsync(bad, 0, sizeof(bad_destination), stream), what);

  const owned_bytes<pool_resource> per_particle(pool, n * (sizeof(unsigned) + 1), allocation_alignment);
  auto* const destinations = static_cast<unsigned*>(per_particle.get());
  auto* const leaving = reinterpret_cast<unsigned char*>(destinations + n);
  if (n > 0) {
    classify_kernel<T, Destination, Index><<<blocks_for(n, migration_threads, what), migration_threads, 0, stream>>>(
        v.const_view(), destination, self, ranks, destinations, leaving, send_counts, bad);
    throw_if_launch_failed(what);
  }

  // The departures' indices, ascending, and their destinations beside them.
  const owned_bytes<pool_resource> picked(pool, n * (2 * sizeof(Index) + sizeof(unsigned)), allocation_alignment);
  auto* const departing = static_cast<Index*>(picked.get());
  auto* const fillers = departing + n;
  auto* const departing_to = reinterpret_cast<unsigned*>(fillers + n);
  const thrust::counting_iterator<Index> all(0);
  std::size_t select_bytes = 0, select_bytes_2 = 0;
  throw_on_error(cub::DeviceSelect::Flagged(nullptr, select_bytes, all, leaving, departing, selected, n, stream), what);
  throw_on_error(cub::DeviceSelect::Flagged(nullptr, select_bytes_2, destinations, leaving, departing_to, selected, n, stream),
                 what);
  const owned_bytes<pool_resource> select_temp(pool, std::max(select_bytes, select_bytes_2), allocation_alignment);
  throw_on_error(cub::DeviceSelect::Flagged(select_temp.get(), select_bytes, all, leaving, departing, selected, n, stream),
                 "coalesce::migrate: cub::DeviceSelect::Flagged");
  throw_on_error(cub::DeviceSelect::Flagged(select_temp.get(), select_bytes_2, destinations, leaving, departing_to, selected,
                                            n, stream),
                 "coalesce::migrate: cub::DeviceSelect::Flagged");

  // The one wait: how many leave, for where, and whether every destination was a rank.
  std::vector<unsigned long long> counts(static_cast<std::size_t>(ranks));
  bad_destination bad_host{};
  Index leaving_count = 0;
  throw_on_error(::cudaMemcpyAsync(counts.data(), send_counts, counts.size() * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, stream),
                 what);
  throw_on_error(::cudaMemcpyAsync(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost, stream), what);
  throw_on_error(::cudaMemcpyAsync(&leaving_count, selected, sizeof leaving_count, cudaMemcpyDeviceToHost, stream), what);
  throw_on_error(::cudaStreamSynchronize(stream), "coalesce::migrate: waiting for the departure counts");
  if (bad_host.count != 0)
    throw std::out_of_range(std::string(what) + ": destination returned rank " + std::to_string(bad_host.example) + " for " +
                            std::to_string(bad_host.count) + " element(s); the communicator's ranks are 0 to " +
                            std::to_string(ranks - 1) + " (nothing was moved)");
  sent.assign(counts.begin(), counts.end());
  const std::size_t m = leaving_count;
  departures.resize_for_overwrite(m);
  if (m == 0) return;

  // Grouped by destination, in index order within a group (the radix sort is stable).
  const owned_bytes<pool_resource> sorted(pool, m * (sizeof(unsigned) + sizeof(Index)), allocation_alignment);
  auto* const sorted_to = static_cast<unsigned*>(sorted.get());
  auto* const sorted_from = reinterpret_cast<Index*>(sorted_to + m);
  std::size_t sort_bytes = 0;
  const int bits = rank_bits(ranks);
  throw_on_error(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, departing_to, sorted_to, departing, sorted_from, m, 0,
                                                 bits, stream),
                 what);
  const owned_bytes<pool_resource> sort_temp(pool, sort_bytes, allocation_alignment);
  throw_on_error(cub::DeviceRadixSort::SortPairs(sort_temp.get(), sort_bytes, departing_to, sorted_to, departing, sorted_from,
                                                 m, 0, bits, stream),
                 "coalesce::migrate: cub::DeviceRadixSort::SortPairs");
  launch_gather(v.const_view(), static_cast<const Index*>(sorted_from), m, departures.view(), stream, what);

  // The holes below the new size are the first departures in index order; the fillers, the
  // particles above it that stay, as many.
  const std::size_t kept = n - m;
  std::size_t filler_bytes = 0;
  const thrust::counting_iterator<Index> above(static_cast<Index>(kept));
  throw_on_error(cub::DeviceSelect::If(nullptr, filler_bytes, above, fillers, selected + 1, m, stays{leaving}, stream), what);
  const owned_bytes<pool_resource> filler_temp(pool, filler_bytes, allocation_alignment);
  throw_on_error(cub::DeviceSelect::If(filler_temp.get(), filler_bytes, above, fillers, selected + 1, m, stays{leaving}, stream),
                 "coalesce::migrate: cub::DeviceSelect::If");
  launch_fill_holes(v.view(), static_cast<const Index*>(departing), static_cast<const Index*>(fillers),
                    static_cast<const Index*>(selected + 1), m, stream, std::make_index_sequence<leaf_count_v<T>>{});
  v.resize_for_overwrite(kept);  // smaller: nothing is reallocated
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
        departures_(particles.resource()),
        pool_(particles.stream()) {
    throw_on_nccl_error(::ncclCommUserRank(comm, &rank_), "coalesce::particle_migration: ncclCommUserRank");
    throw_on_nccl_error(::ncclCommCount(comm, &ranks_), "coalesce::particle_migration: ncclCommCount");
    counts_ = detail::owned_bytes<pool_resource>(pool_, 2 * std::size_t(ranks_) * sizeof(unsigned long long), allocation_alignment);
    if (detail::indices_fit_32_bits(particles.size()))
      detail::pack_departures<std::uint32_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    else
      detail::pack_departures<std::uint64_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    kept_ = particles.size();
  }

  // Sends this rank's count for every other rank and receives theirs (one message each way per
  // pair of ranks), inside the caller's NCCL group if one is open.
  void post_counts() {
    throw_on_nccl_error(::ncclGroupStart(), "coalesce::particle_migration: ncclGroupStart");
    for (int r = 0; r < ranks_; ++r) {
      if (r == rank_) continue;
      throw_on_nccl_error(::ncclSend(send_counts() + r, 1, ncclUint64, r, comm_, stream()), "coalesce::particle_migration: ncclSend");
      throw_on_nccl_error(::ncclRecv(received_counts() + r, 1, ncclUint64, r, comm_, stream()),
                          "coalesce::particle_migration: ncclRecv");
    }
    throw_on_nccl_error(::ncclGroupEnd(), "coalesce::particle_migration: ncclGroupEnd");
  }

  // Waits for the counts post_counts receives and makes room after the kept particles for the
  // arrivals (the vector's first kept elements stay where they are, or move with a reallocation).
  void receive_counts() {
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
    throw_on_nccl_error(::ncclGroupStart(), "coalesce::particle_migration: ncclGroupStart");
    std::size_t send_from = 0, receive_at = kept_;
    for (int r = 0; r < ranks_; ++r) {
      const std::size_t out = sent_[std::size_t(r)], in = received_[std::size_t(r)];
      post_columns(r, out, send_from, in, receive_at, std::make_index_sequence<detail::leaf_count_v<T>>{});
      send_from += out;
      receive_at += in;
    }
    throw_on_nccl_error(::ncclGroupEnd(), "coalesce::particle_migration: ncclGroupEnd");
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
// communicator; coalesce::nccl_error or coalesce::cuda_error if a call fails.
template <class T, class Resource, class Destination>
migration_counts migrate(soa_vector<T, device_space, Resource>& particles, Destination destination, ncclComm_t comm) {
  particle_migration<T, Resource> migration(particles, destination, comm);
  migration.post_counts();
  migration.receive_counts();
  migration.post_particles();
  return {migration.departed(), migration.arrived()};
}

}  // namespace coalesce

#endif  // __CUDACC__
