// coalesce: particles meet grids. One include for the particle helpers: wrap and uniform_grid
// (<coalesce/uniform_grid.hpp>, host-capable), deposit (<coalesce/deposit.hpp>), for_each_pair
// (<coalesce/for_each_pair.hpp>), sort_by_key (<coalesce/reorder.hpp>); here, bin, the offset of
// every bin's first particle in a vector sorted by bin, in one pass over the keys (detail/
// bin_kernels.hpp), and sort_and_bin, the two in one call; and, last, cell_list, make_cell_list and
// for_each_neighbor (<coalesce/for_each_neighbor.hpp>). Asynchronous on the container's stream,
// scratch from coalesce's pool. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/particles.hpp launches kernels: include it from a .cu file, compiled by nvcc (<coalesce/uniform_grid.hpp> has wrap and uniform_grid for host code)"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/deposit.hpp>
#  include <coalesce/detail/bin_kernels.hpp>
#  include <coalesce/detail/device_memory.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/reorder_plan.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/for_each_pair.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/reorder.hpp>
#  include <coalesce/scan.hpp>
#  include <coalesce/soa.hpp>
#  include <coalesce/uniform_grid.hpp>

#  include <cuda/std/span>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <cstdint>
#  include <limits>
#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {
namespace detail {

// What key(element) returns, seen from the host (the histogram's counters are sized by it): an unsigned 32-
// or 64-bit integer, as sort_by_key's keys, so that one key function sorts and bins.
template <class T, class Key>
constexpr bool bin_key_ok() {
  constexpr bool visible = COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(Key);
  static_assert(visible,
                "coalesce::bin: the host cannot see what a __device__ lambda returns, and needs the key type for "
                "the histogram: give the lambda a trailing return type ([] __device__(auto p) -> std::uint32_t "
                "{...}), make it __host__ __device__, wrap it in cuda::proclaim_return_type<K>, or pass a function "
                "object");
  if constexpr (visible) {
    using key_type = std::decay_t<decltype(std::declval<Key&>()(std::declval<soa_reference_t<const T>>()))>;
    static_assert(is_sort_key_v<key_type>,
                  "coalesce::bin: key(element) must return an unsigned 32- or 64-bit integer (std::uint32_t, "
                  "std::uint64_t), the key sort_by_key sorts by");
    return is_sort_key_v<key_type>;
  }
  return false;
}

template <class Offset>
constexpr bool bin_offset_ok() {
  constexpr bool ok = std::is_same_v<Offset, std::uint32_t> || std::is_same_v<Offset, std::uint64_t>;
  static_assert(ok, "coalesce::bin: the offsets must be a cuda::std::span of std::uint32_t or std::uint64_t");
  return ok;
}

// offsets[0, bins] of the elements of `view` binned by key (detail/bin_kernels.hpp): one pass over
// the keys that writes the offsets where they are sorted, then a launch that returns at once
// unless that pass found keys out of order, and then computes the counts' exclusive sum instead.
// Scratch from the pool: a flag per block of the first pass, a sum per block of the second.
template <class K, class T, class Key, class Offset>
void bin_into(const soa_view<const T>& view, const Key& key, std::size_t bins, Offset* offsets, cudaStream_t stream,
              const char* what) {
  throw_if_earlier_error(what);
  const std::size_t n = view.size();
  if (n > std::size_t(std::numeric_limits<Offset>::max()))
    throw std::length_error(std::string(what) + ": " + std::to_string(n) + " particles do not fit " +
                            std::to_string(sizeof(Offset) * 8) + "-bit offsets; bin into a span of std::uint64_t");
  if (n == 0 || bins == 0) {  // every offset is 0 (no particle, or none in a bin)
    throw_on_error(::cudaMemsetAsync(offsets, 0, (bins + 1) * sizeof(Offset), stream), what);
    return;
  }
  const bin_grids grids = bin_grids_for<K, T, Key, Offset>(n);
  const std::size_t flag_bytes = (std::size_t(grids.sorted) * sizeof(std::uint32_t) + 255) / 256 * 256;
  const pool_resource pool(stream);
  const owned_bytes<pool_resource> scratch(pool, flag_bytes + std::size_t(grids.unsorted) * sizeof(Offset),
                                           allocation_alignment);
  unsigned char* const bytes = static_cast<unsigned char*>(scratch.get());
  launch_bins<K>(view, key, bins, offsets, grids, reinterpret_cast<std::uint32_t*>(bytes),
                 reinterpret_cast<Offset*>(bytes + flag_bytes), stream);
}

// The checks and the key type, shared by both forms.
template <class T, class Key, class Offset>
void bin_view(const soa_view<const T>& view, const Key& key, std::size_t bins, Offset* offsets, std::size_t count,
              cudaStream_t stream) {
  constexpr const char* what = "coalesce::bin";
  if (bins > std::size_t(std::numeric_limits<int>::max() - 1))
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(bins) + " bins; at most 2^31 - 2");
  if (count != bins + 1)
    throw std::invalid_argument(std::string(what) + ": the offsets have " + std::to_string(count) +
                                " elements; bins + 1 = " + std::to_string(bins + 1) + " are needed");
  require_device_columns(walk_of<soa_view<const T>>::columns(view), 1, view.size(), what);
  require_device_memory(offsets, what);
  using key_type = std::decay_t<decltype(std::declval<Key&>()(std::declval<soa_reference_t<const T>>()))>;
  bin_into<key_type>(view, key, bins, offsets, stream, what);
}

}  // namespace detail

/// The offsets of `bins` bins over the elements of `view` (a soa_view of device memory) sorted by
/// key(element), into `offsets` (a cuda::std::span of bins + 1 std::uint32_t or std::uint64_t in
/// device memory): offsets[b] is the index of the first element whose key is b (or, for an empty
/// bin, of the first whose key is larger), offsets[bins] the number of elements whose key is below
/// bins, so bin b is the elements [offsets[b], offsets[b + 1]). key is what sort_by_key takes: it
/// receives the const named-field proxy of an element and returns an unsigned 32- or 64-bit
/// integer whose type the host sees (uniform_grid::index_of of the particle's position, say).
///
/// Precondition: the elements are sorted by key (sort_by_key(v, key) does that). Checked on the
/// device, in the same pass: on unsorted elements the result is the exclusive sum of the bins'
/// counts (offsets[b] = the number of elements with a key below b), which is no index range of
/// theirs, computed by a slower second pass. A key >= bins is counted in no bin: sorted, such
/// elements sit at the end, in [offsets[bins], size()).
///
/// How: one pass reads each element's key once (only the columns key reads are loaded), a tile
/// of 2048 consecutive elements at a time in shared memory, and writes the offsets of the bins
/// that start in the tile, consecutive bins by consecutive threads (coalesced), each found by a
/// binary search of the tile: one read of the keys and one write of the offsets, no atomics and no
/// scan. A second kernel, launched cooperatively after it, returns at once unless the first found
/// keys out of order; then it zeroes the offsets, counts the keys into them (one atomicAdd per run
/// of equal keys in a warp) and scans them in place. It touches nothing but the offsets and a few
/// KiB of scratch from coalesce's pool. Its speed against a cudaMemcpy of the keys: docs/particles.md.
/// Asynchronous on `stream`: nothing waits, and a CUDA graph capture records it. Throws
/// std::invalid_argument if offsets.size() != bins + 1 or bins > 2^31 - 2, std::length_error if
/// the elements' count does not fit the offset type, coalesce::cuda_error if a launch fails.
template <class T, class Key, class Offset, std::size_t Extent>
void bin(soa_view<T> view, Key key, std::size_t bins, cuda::std::span<Offset, Extent> offsets,
         cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::bin");
  using element = std::remove_const_t<T>;
  if constexpr (detail::bin_key_ok<element, Key>() && detail::bin_offset_ok<Offset>())
    detail::bin_view(soa_view<const element>(view), key, bins, offsets.data(), offsets.size(), stream);
}

/// The offsets of `bins` bins over the elements of `particles` (a device soa_vector sorted by
/// key), as bin(view, key, bins, offsets) computes them, in a new 1 x (bins + 1) pitched_matrix of
/// std::uint32_t from coalesce's pool on the particles' stream: offsets.data()[b] is bin b's first
/// particle, offsets.to_vector() copies them to the host, and the matrix is released on that
/// stream like any container. 32-bit offsets: half the bytes of 64-bit ones for the scan and for
/// every reader of the bins, and enough for 2^32 - 1 particles (std::length_error beyond; pass a
/// span of std::uint64_t to the view form instead). Sort first with sort_by_key(particles, key),
/// or the offsets are the counts' sums only. Asynchronous on particles.stream(); the one
/// allocation is stream-ordered, so nothing waits.
template <class T, class Resource, class Key>
pitched_matrix<std::uint32_t> bin(const soa_vector<T, device_space, Resource>& particles, Key key, std::size_t bins) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::bin");
  if (bins > std::size_t(std::numeric_limits<int>::max() - 1))  // before an allocation of that size
    throw std::invalid_argument("coalesce::bin: " + std::to_string(bins) + " bins; at most 2^31 - 2");
  pitched_matrix<std::uint32_t> offsets(1, bins + 1, pool_resource(particles.stream()));
  bin(particles.const_view(), key, bins, cuda::std::span<std::uint32_t>(offsets.data(), bins + 1), particles.stream());
  return offsets;
}

/// Sorts `particles` by key (sort_by_key(particles, key)) and returns the offsets of their `bins`
/// bins (bin(particles, key, bins)): the step a particle code takes every few steps to put each
/// cell's particles together, in one call. Both on particles.stream(), with no wait; what each
/// moves and throws is theirs. `key` is evaluated twice per particle (once by each).
template <class T, class Resource, class Key>
pitched_matrix<std::uint32_t> sort_and_bin(soa_vector<T, device_space, Resource>& particles, Key key,
                                           std::size_t bins) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::sort_and_bin");
  sort_by_key(particles, key);
  return bin(particles, key, bins);
}

}  // namespace coalesce

// Last: cell_list.hpp includes this header for bin.
#  include <coalesce/for_each_neighbor.hpp>

#endif  // __CUDACC__
