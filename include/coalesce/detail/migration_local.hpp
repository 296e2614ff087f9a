// coalesce::detail: the local half of a particle migration - the one pass that finds who leaves,
// the gather of the departures grouped by destination, and the compaction of the particles that
// stay - which migration.hpp's particle_migration runs before any message is posted. Users never
// include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/capture.hpp>
#include <coalesce/detail/element_moves.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/permute_walk.hpp>
#include <coalesce/detail/reorder_plan.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce::detail {

inline constexpr unsigned migration_threads = 256;

// A rank outside [0, ranks) from destination: the first one seen, and how many.
struct bad_destination {
  unsigned long long count;
  int example;
};

// The rank destination gives the element at i, as an int.
template <class T, class Destination>
COALESCE_DEVICE COALESCE_FORCEINLINE int destination_of(const soa_view<const T>& in, std::size_t i,
                                                        const Destination& destination) {
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

  const owned_bytes<pool_resource> small(pool, sizeof(bad_destination) + 3 * sizeof(unsigned long long),
                                         allocation_alignment);
  auto* const bad = static_cast<bad_destination*>(small.get());
  auto* const leaving_count = reinterpret_cast<unsigned long long*>(bad + 1);
  auto* const selected = reinterpret_cast<Index*>(leaving_count + 1);  // [0]: the holes, [1]: the fillers
  throw_on_error(::cudaMemsetAsync(send_counts, 0, std::size_t(ranks) * sizeof(unsigned long long), stream), what);
  throw_on_error(::cudaMemsetAsync(small.get(), 0, sizeof(bad_destination) + sizeof(unsigned long long), stream), what);
  owned_bytes<pool_resource> leavers(pool, n * sizeof(unsigned long long), allocation_alignment);
  if (n > 0) {
    const std::size_t shared_bytes = ranks <= migration_shared_ranks ? std::size_t(ranks) * sizeof(unsigned) : 0;
    classify_kernel<T, Destination>
        <<<blocks_for(n, migration_threads * migration_items, what), migration_threads, shared_bytes, stream>>>(
            v.const_view(), destination, self, ranks, index_bits, static_cast<unsigned long long*>(leavers.get()),
            leaving_count, send_counts, bad);
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
    throw std::out_of_range(std::string(what) + ": destination returned rank " + std::to_string(bad_host.example) +
                            " for " + std::to_string(bad_host.count) +
                            " element(s); the communicator's ranks are 0 to " + std::to_string(ranks - 1) +
                            " (nothing was moved)");
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
    throw_on_error(cub::DeviceRadixSort::SortKeys(sort_temp.get(), sort_bytes, keys, sorted_keys, m, 0, key_bits,
                                                  stream),
                   "coalesce::migrate: cub::DeviceRadixSort::SortKeys");
  }
  // The departures' indices in that order (into the list the keys came from), then every column
  // gathered by them.
  auto* const departing = reinterpret_cast<Index*>(keys);
  throw_on_error(cub::DeviceTransform::Transform(sorted_keys, departing, m,
                                                 index_of_key<Index>{(1ull << index_bits) - 1}, stream),
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
  throw_on_error(cub::DeviceSelect::If(nullptr, hole_bytes, departing, holes, selected, m, below<Index>{kept}, stream),
                 what);
  throw_on_error(cub::DeviceSelect::If(nullptr, filler_bytes, above, fillers, selected + 1, m, staying, stream), what);
  {
    const owned_bytes<pool_resource> select_temp(pool, std::max(hole_bytes, filler_bytes), allocation_alignment);
    throw_on_error(cub::DeviceSelect::If(select_temp.get(), hole_bytes, departing, holes, selected, m,
                                         below<Index>{kept}, stream),
                   "coalesce::migrate: cub::DeviceSelect::If");
    throw_on_error(cub::DeviceSelect::If(select_temp.get(), filler_bytes, above, fillers, selected + 1, m, staying,
                                         stream),
                   "coalesce::migrate: cub::DeviceSelect::If");
  }
  fill_holes_kernel<T, Index><<<blocks_for(m, migration_threads, what), migration_threads, 0, stream>>>(
      v.view(), static_cast<const Index*>(holes), static_cast<const Index*>(fillers),
      static_cast<const Index*>(selected + 1));
  throw_if_launch_failed("coalesce::migrate: the kernel that fills the departures' holes");
  v.resize_for_overwrite(n - m);  // smaller: nothing is reallocated
}

// A migration cannot be captured into a CUDA graph: each of its steps is sized by counts the host
// waits for, and a replay would repeat the capture's sizes.
inline void refuse_migration_capture(cudaStream_t stream, const char* what) {
  refuse_capture(stream, what,
                 "a migration waits on the host for the counts of particles leaving and arriving, which size its "
                 "messages and the vector (a graph replays fixed sizes and cannot wait)",
                 "migrate outside the capture, between replays; it resizes the vector, so capture the graphs that "
                 "use the vector again after it");
}

}  // namespace coalesce::detail
