// coalesce::model: what a warp's memory access costs, computed from its addresses.
// Global memory is served in 32-byte sectors of 128-byte lines (and read from DRAM in 64-byte
// pieces); shared memory in 32 banks of 4 bytes. Every function is constexpr and usable in
// static_assert, in plain host code with no GPU, and in __device__ code.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/detail/split_map.hpp>
#include <coalesce/layout.hpp>

#include <cuda/std/array>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

/// What a warp's memory access costs, computed from its 32 addresses on the host.
namespace coalesce::model {

inline constexpr unsigned warp_size = 32;          ///< threads in a warp
inline constexpr unsigned sector_bytes = 32;       ///< the unit L1 and L2 move
inline constexpr unsigned line_bytes = 128;        ///< 4 sectors: the classic "transaction"
/// DRAM is read in pairs of sectors: measured on an NVIDIA H200 (CUDA 13.0), isolated 4-byte reads
/// at strides of 64 and 128 bytes each pulled 64 bytes from DRAM, at 32 bytes each 32.
inline constexpr unsigned dram_granule_bytes = 64;
inline constexpr unsigned bank_count = 32;  ///< shared memory banks
inline constexpr unsigned bank_bytes = 4;   ///< the width of one bank

/// The cost of one or more warp-wide global memory instructions.
struct global_cost {
  unsigned requests = 0;         ///< warp-level instructions that had an active thread
  unsigned sectors = 0;          ///< distinct 32 B sectors touched, summed over requests
  unsigned lines = 0;            ///< distinct 128 B lines touched, summed over requests
  std::size_t useful_bytes = 0;  ///< distinct bytes the threads asked for
  std::size_t moved_bytes = 0;   ///< 32 * sectors: what L1/L2 move
  std::size_t dram_bytes = 0;    ///< 64 B pieces touched x 64: what DRAM moves on a cold read

  /// useful_bytes / (32 * sectors): 1 when every byte moved was asked for.
  COALESCE_HOST_DEVICE constexpr double efficiency() const {
    return sectors == 0 ? 1.0 : static_cast<double>(useful_bytes) / (double(sector_bytes) * sectors);
  }
  /// useful_bytes / (128 * lines): the seed material's transaction model.
  COALESCE_HOST_DEVICE constexpr double line_efficiency() const {
    return lines == 0 ? 1.0 : static_cast<double>(useful_bytes) / (double(line_bytes) * lines);
  }
  /// What the hardware counter l1tex__t_sectors_..._ld.sum / l1tex__t_requests_..._ld.sum reads.
  COALESCE_HOST_DEVICE constexpr double sectors_per_request() const {
    return requests == 0 ? 0.0 : static_cast<double>(sectors) / requests;
  }
};

/// The cost of one warp-wide shared memory instruction.
struct shared_cost {
  unsigned wavefronts = 0;       ///< passes through the 32 banks the instruction needs
  unsigned conflict_degree = 0;  ///< the worst n-way bank conflict in any pass (1: none)
};

namespace detail {

COALESCE_HOST_DEVICE constexpr bool valid_width(unsigned elem_bytes) {
  return elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8 || elem_bytes == 16;
}

// Counts the distinct values of keys[0..n).
COALESCE_HOST_DEVICE constexpr unsigned count_distinct(const std::uint64_t* keys, unsigned n) {
  unsigned distinct = 0;
  for (unsigned i = 0; i < n; ++i) {
    bool seen = false;
    for (unsigned j = 0; j < i && !seen; ++j) seen = keys[j] == keys[i];
    if (!seen) ++distinct;
  }
  return distinct;
}

// One warp's request: `addr(lane)` gives lane's byte address; inactive lanes are skipped.
COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <class AddressOf>
COALESCE_HOST_DEVICE constexpr global_cost one_global_request(const AddressOf& addr, std::uint32_t active,
                                                              unsigned elem_bytes) {
  global_cost cost{};
  std::uint64_t sectors[warp_size] = {};
  std::uint64_t lines[warp_size] = {};
  std::uint64_t granules[warp_size] = {};
  std::uint64_t starts[warp_size] = {};
  unsigned n = 0;
  for (unsigned lane = 0; lane < warp_size; ++lane) {
    if (((active >> lane) & 1u) == 0) continue;
    // An access is naturally aligned (CUDA requires it), so it lies inside one sector.
    const std::uint64_t a = addr(lane);
    starts[n] = a;
    sectors[n] = a / sector_bytes;
    lines[n] = a / line_bytes;
    granules[n] = a / dram_granule_bytes;
    ++n;
  }
  if (n == 0) return cost;
  cost.requests = 1;
  cost.sectors = count_distinct(sectors, n);
  cost.lines = count_distinct(lines, n);
  // Two lanes asking for the same aligned element ask for the same bytes.
  cost.useful_bytes = std::size_t(count_distinct(starts, n)) * elem_bytes;
  cost.moved_bytes = std::size_t(cost.sectors) * sector_bytes;
  cost.dram_bytes = std::size_t(count_distinct(granules, n)) * dram_granule_bytes;
  return cost;
}

COALESCE_HOST_DEVICE constexpr global_cost& accumulate(global_cost& total, const global_cost& c) {
  total.requests += c.requests;
  total.sectors += c.sectors;
  total.lines += c.lines;
  total.useful_bytes += c.useful_bytes;
  total.moved_bytes += c.moved_bytes;
  total.dram_bytes += c.dram_bytes;
  return total;
}

// Threads a shared-memory instruction serves per pass: a pass moves at most 32 banks x 4 B =
// 128 B, so 8-byte accesses go a half-warp at a time and 16-byte ones a quarter-warp at a time.
COALESCE_HOST_DEVICE constexpr unsigned shared_phase_threads(unsigned elem_bytes) {
  return elem_bytes <= bank_bytes ? warp_size : warp_size * bank_bytes / elem_bytes;
}

COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <class AddressOf>
COALESCE_HOST_DEVICE constexpr shared_cost one_shared_request(const AddressOf& addr, std::uint32_t active,
                                                              unsigned elem_bytes) {
  shared_cost cost{};
  const unsigned phase = shared_phase_threads(elem_bytes);
  const unsigned words_per_access = elem_bytes <= bank_bytes ? 1u : elem_bytes / bank_bytes;
  // Per phase: its passes, and the one address it reads if all its active lanes read the same.
  unsigned passes[4] = {};
  std::uint64_t single[4] = {};
  bool is_single[4] = {};
  for (unsigned first = 0, k = 0; first < warp_size; first += phase, ++k) {
    // The distinct 4-byte words this phase touches: the same word is a broadcast, free.
    std::uint64_t words[warp_size * 4] = {};
    unsigned n = 0, lanes = 0;
    is_single[k] = true;
    for (unsigned lane = first; lane < first + phase; ++lane) {
      if (((active >> lane) & 1u) == 0) continue;
      const std::uint64_t a = addr(lane);
      if (lanes++ == 0) single[k] = a;
      is_single[k] = is_single[k] && a == single[k];
      const std::uint64_t first_word = a / bank_bytes;
      for (unsigned w = 0; w < words_per_access; ++w) {
        bool seen = false;
        for (unsigned j = 0; j < n && !seen; ++j) seen = words[j] == first_word + w;
        if (!seen) words[n++] = first_word + w;
      }
    }
    is_single[k] = is_single[k] && lanes > 0;
    // A pass serves one word per bank; a bank asked for k distinct words needs k passes.
    unsigned worst = 0;
    for (unsigned bank = 0; bank < bank_count; ++bank) {
      unsigned in_bank = 0;
      for (unsigned j = 0; j < n; ++j) in_bank += (words[j] % bank_count == bank) ? 1u : 0u;
      worst = in_bank > worst ? in_bank : worst;
    }
    passes[k] = worst;
    cost.conflict_degree = worst > cost.conflict_degree ? worst : cost.conflict_degree;
  }
  // Measured on an NVIDIA H200: a warp-wide broadcast of 8 bytes takes 1 wavefront (not 2) and
  // of 16 bytes 2 (not 4), while two half-warps reading the same 16 distinct doubles still take 2.
  // The rule that fits: two neighbouring phases that each read one and the same address share a
  // pass.
  const unsigned phases = warp_size / phase;
  for (unsigned k = 0; k < phases; ++k) {
    const bool merges_with_previous = k % 2 == 1 && is_single[k] && is_single[k - 1] && single[k] == single[k - 1];
    cost.wavefronts += merges_with_previous ? 0u : passes[k];
  }
  return cost;
}

// Lane i's address from an array of addresses (cuda::std::array, usable anywhere).
template <class Array>
struct array_lane {
  const Array& addresses;
  std::size_t offset;
  COALESCE_HOST_DEVICE constexpr std::uint64_t operator()(unsigned lane) const { return addresses[offset + lane]; }
};
// std::array's members are host-only constexpr functions, so the std::array entry points copy
// into a cuda::std::array and are host (and constant-expression) only; device code passes a
// cuda::std::array directly.
template <std::size_t N>
constexpr cuda::std::array<std::uint64_t, N> to_cuda_array(const std::array<std::uint64_t, N>& a) {
  cuda::std::array<std::uint64_t, N> copy{};
  for (std::size_t i = 0; i < N; ++i) copy[i] = a[i];
  return copy;
}

COALESCE_HOST_DEVICE constexpr std::uint32_t lanes_mask(std::size_t lanes) {
  return lanes >= warp_size ? 0xFFFFFFFFu : ((std::uint32_t(1) << lanes) - 1u);
}

struct strided_lane {
  std::uint64_t base, stride, first_thread;
  COALESCE_HOST_DEVICE constexpr std::uint64_t operator()(unsigned lane) const {
    return base + (first_thread + lane) * stride;
  }
};

}  // namespace detail

/// The cost of a warp-wide global access whose active lanes are the set bits of `active_mask` and
/// whose lane i reads or writes `elem_bytes` (1, 2, 4, 8 or 16) at byte address `address_of(i)`.
/// Precondition: addresses are multiples of elem_bytes, as CUDA requires.
COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <class AddressOf>
COALESCE_HOST_DEVICE constexpr global_cost warp_global_access(const AddressOf& address_of, unsigned elem_bytes,
                                                              std::uint32_t active_mask = 0xFFFFFFFFu) {
  return detail::valid_width(elem_bytes) ? detail::one_global_request(address_of, active_mask, elem_bytes)
                                         : global_cost{};
}

/// The same for a shared-memory access.
COALESCE_DETAIL_EXEC_CHECK_DISABLE
template <class AddressOf>
COALESCE_HOST_DEVICE constexpr shared_cost warp_shared_access(const AddressOf& address_of, unsigned elem_bytes,
                                                              std::uint32_t active_mask = 0xFFFFFFFFu) {
  return detail::valid_width(elem_bytes) ? detail::one_shared_request(address_of, active_mask, elem_bytes)
                                         : shared_cost{};
}

namespace detail {

template <class Lane, class Array>
COALESCE_HOST_DEVICE constexpr global_cost global_access_of(const Array& addresses, std::size_t n,
                                                            unsigned elem_bytes) {
  global_cost total{};
  for (std::size_t first = 0; first < n; first += warp_size) {
    const Lane lane{addresses, first};
    accumulate(total, warp_global_access(lane, elem_bytes, lanes_mask(n - first)));
  }
  return total;
}

}  // namespace detail

/// The cost of N threads' global accesses: thread t accesses `elem_bytes` at byte_addresses[t].
/// Threads 32k..32k+31 form warp k, one request each (the last warp may be partial).
template <std::size_t N>
COALESCE_HOST_DEVICE constexpr global_cost global_access(const cuda::std::array<std::uint64_t, N>& byte_addresses,
                                                         unsigned elem_bytes) {
  return detail::global_access_of<detail::array_lane<cuda::std::array<std::uint64_t, N>>>(byte_addresses, N,
                                                                                          elem_bytes);
}

/// The same from a std::array of addresses (host code).
template <std::size_t N>
constexpr global_cost global_access(const std::array<std::uint64_t, N>& byte_addresses, unsigned elem_bytes) {
  return global_access(detail::to_cuda_array(byte_addresses), elem_bytes);
}

/// The cost of one warp's shared access (N <= 32 threads; fewer means a partial warp).
/// wavefronts: passes through the banks; conflict_degree: the worst n-way conflict.
template <std::size_t N>
COALESCE_HOST_DEVICE constexpr shared_cost shared_access(const cuda::std::array<std::uint64_t, N>& byte_addresses,
                                                         unsigned elem_bytes) {
  static_assert(N <= warp_size, "coalesce::model::shared_access: one warp has at most 32 threads");
  const detail::array_lane<cuda::std::array<std::uint64_t, N>> lane{byte_addresses, 0};
  return warp_shared_access(lane, elem_bytes, detail::lanes_mask(N));
}

/// The same from a std::array of addresses (host code).
template <std::size_t N>
constexpr shared_cost shared_access(const std::array<std::uint64_t, N>& byte_addresses, unsigned elem_bytes) {
  return shared_access(detail::to_cuda_array(byte_addresses), elem_bytes);
}

/// Thread t (of `threads`, in warps of 32) accesses `elem_bytes` at base_bytes + t * stride_bytes.
COALESCE_HOST_DEVICE constexpr global_cost strided_access(std::size_t stride_bytes, unsigned elem_bytes,
                                                          std::size_t base_bytes = 0, unsigned threads = warp_size) {
  global_cost total{};
  for (unsigned first = 0; first < threads; first += warp_size) {
    const detail::strided_lane lane{base_bytes, stride_bytes, first};
    detail::accumulate(total, warp_global_access(lane, elem_bytes, detail::lanes_mask(threads - first)));
  }
  return total;
}

/// The seed material's closed form for lines moved by a strided warp access starting on a line
/// boundary: ceil(((threads - 1) * stride + elem) / 128), valid while stride <= 128.
COALESCE_HOST_DEVICE constexpr unsigned seed_line_formula(std::size_t stride_bytes, unsigned elem_bytes,
                                                          unsigned threads = warp_size) {
  return static_cast<unsigned>(((threads - 1) * stride_bytes + elem_bytes + line_bytes - 1) / line_bytes);
}

namespace detail {

// Thread t's address: a leaf of element first + t in groups of Group elements (tiles), GroupBytes
// apart, the leaf's run Offset bytes into its group, Bytes a value.
template <std::size_t Group, std::size_t GroupBytes, std::size_t Offset, std::size_t Bytes>
struct group_lane {
  std::size_t first;
  unsigned warp_first;
  COALESCE_HOST_DEVICE constexpr std::uint64_t operator()(unsigned lane) const {
    const std::size_t i = first + warp_first + lane;
    return std::uint64_t(i / Group * GroupBytes + Offset + i % Group * Bytes);
  }
};

// The cost of threads reading a leaf in groups (see group_lane), a warp at a time.
template <class Lane>
COALESCE_HOST_DEVICE constexpr global_cost grouped_access(std::size_t first, unsigned threads, unsigned bytes) {
  global_cost total{};
  for (unsigned warp_first = 0; warp_first < threads; warp_first += warp_size) {
    const Lane lane{first, warp_first};
    accumulate(total, warp_global_access(lane, bytes, lanes_mask(threads - warp_first)));
  }
  return total;
}

}  // namespace detail

/// What `threads` consecutive threads (warps of 32) cost, thread t reading or writing leaf L of T
/// (coalesce::leaf_t<T, L>: p[i].x is leaf 0 of a Particle) of element first + t, stored in Layout
/// from a 256-byte-aligned start, as coalesce's containers allocate it:
///   - layout::soa: leaf L's column: one request of a float field is 4 sectors;
///   - layout::aosoa<Lanes>: leaf L's runs in the tiles: 4 sectors while a warp stays in one tile;
///   - layout::aos: records sizeof(T) apart, the leaf `leaf_offset` bytes into its record
///     (offsetof(T, member), which only the caller can compute in a constant expression): a float
///     of a 24-byte particle is 24 sectors a request, 4 bytes used of each 32 read;
///   - layout::split<Hot, Cold>: a hot leaf as in its column; a cold one in Cold's records (of the
///     cold leaves only, at their offset there) or tiles.
/// The leaf must be 1, 2, 4, 8 or 16 bytes (one access); otherwise the cost is empty.
template <class T, class Layout, std::size_t L>
COALESCE_HOST_DEVICE constexpr global_cost field_access(std::size_t first = 0, unsigned threads = warp_size,
                                                        std::size_t leaf_offset = 0) {
  constexpr unsigned bytes = unsigned(sizeof(coalesce::detail::leaf_type_t<T, L>));
  static_assert(is_layout_v<Layout>, "coalesce::model::field_access<T, Layout, L>: Layout must be "
                                     "coalesce::layout::soa, aos, aosoa<Lanes> or split<Hot, Cold>");
  if constexpr (std::is_same_v<Layout, layout::soa>) {
    return strided_access(bytes, bytes, first * bytes, threads);
  } else if constexpr (std::is_same_v<Layout, layout::aos>) {
    return strided_access(sizeof(T), bytes, first * sizeof(T) + leaf_offset, threads);
  } else if constexpr (coalesce::detail::is_split<Layout>::value) {
    using map = coalesce::detail::layout_map<T, Layout>;
    if constexpr (map::table.hot[L]) {
      return strided_access(bytes, bytes, first * bytes, threads);
    } else if constexpr (map::group == 1) {
      return strided_access(map::group_bytes, bytes, first * map::group_bytes + map::template cold_offset<L>, threads);
    } else {
      return detail::grouped_access<
          detail::group_lane<map::group, map::group_bytes, map::template cold_offset<L>, bytes>>(first, threads, bytes);
    }
  } else {
    using map = coalesce::detail::layout_map<T, Layout>;
    return detail::grouped_access<detail::group_lane<Layout::lanes, map::tile_bytes, map::offsets.at[L], bytes>>(
        first, threads, bytes);
  }
}

}  // namespace coalesce::model
