// coalesce::detail: the host-side arithmetic of compaction and reordering (erase_if, copy_if,
// sort_by_key, gather, scatter): how the elements split into tiles, which index type a
// permutation needs, how many key bits a radix sort looks at. Host-capable, so that it is tested
// without a GPU; the kernels are in compact_walk.hpp and permute_walk.hpp. Users never include it.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace coalesce::detail {

// A compaction tile: compact_rounds elements per thread of a compact_threads block, each round a
// warp's 32 neighbouring elements, so every column is read coalesced and a round's kept elements
// are written to one contiguous run. The rounds are loaded before any is tested: with 6 float
// columns, 48 loads in flight per thread.
inline constexpr unsigned compact_threads = 256;
inline constexpr unsigned compact_rounds = 8;
inline constexpr std::size_t compact_tile = std::size_t(compact_threads) * compact_rounds;

// Tiles over n elements (the last one partial); one block each.
constexpr std::size_t compact_tiles(std::size_t n) noexcept { return n / compact_tile + (n % compact_tile != 0); }

// The largest grid a one-dimensional launch may have; a compaction of more tiles than that is
// refused rather than silently cut.
inline constexpr std::size_t max_grid_blocks = 0x7fffffff;

// Blocks of `per_block` elements over n elements (the last one partial). Throws std::length_error
// when that is more blocks than one grid launches.
inline unsigned blocks_for(std::size_t n, std::size_t per_block, const char* what) {
  const std::size_t blocks = n / per_block + (n % per_block != 0);
  if (blocks > max_grid_blocks)
    throw std::length_error(std::string(what) + ": " + std::to_string(n) + " elements need more blocks of " +
                            std::to_string(per_block) + " than one grid launches");
  return unsigned(blocks);
}

// A permutation of n elements takes 32-bit indices while n itself fits in 32 bits, n <= 2^32 - 1
// (half the bytes of 64-bit indices for the sort to move and the gather to read), else 64-bit
// ones. The count, not only the indices below it: CUB's radix sort takes its count in the index
// type, and at exactly 2^32 elements every index fits 32 bits but the count is 0 there, so the
// sort would order nothing.
constexpr bool permutation_fits_32_bits(std::size_t n) noexcept {
  return n <= std::size_t(std::numeric_limits<std::uint32_t>::max());
}

// n as Count, the type a count is handed to a library call in (CUB sizes its offsets by it: 32
// bits for a 32-bit count), or std::length_error naming `what` where n does not fit: a count is
// never cut to its low bits.
template <class Count>
Count count_as(std::size_t n, const char* what) {
  static_assert(std::is_integral_v<Count> && std::is_unsigned_v<Count> && !std::is_same_v<Count, bool>,
                "coalesce::detail::count_as<Count>: Count must be an unsigned integer type");
  if (n > std::size_t(std::numeric_limits<Count>::max()))
    throw std::length_error(std::string(what) + ": " + std::to_string(n) + " elements do not fit a " +
                            std::to_string(sizeof(Count) * 8) + "-bit count");
  return static_cast<Count>(n);
}

// The key types sort_by_key sorts: unsigned 32- and 64-bit integers.
template <class K>
inline constexpr bool is_sort_key_v =
    std::is_integral_v<K> && std::is_unsigned_v<K> && !std::is_same_v<K, bool> && (sizeof(K) == 4 || sizeof(K) == 8);

// The bits of key type K the radix sort looks at, [0, end_bit): all of K's unless the caller says
// fewer (cell keys of 20 bits take 3 passes of 8 bits, not 4). Throws std::invalid_argument for
// an end_bit outside [1, bits of K].
template <class K>
int sort_end_bit(int end_bit, const char* what) {
  constexpr int bits = int(sizeof(K) * 8);
  if (end_bit < 0) return bits;  // not given
  if (end_bit == 0 || end_bit > bits)
    throw std::invalid_argument(std::string(what) + ": end_bit " + std::to_string(end_bit) + " is outside [1, " +
                                std::to_string(bits) + "], the bits of the key type");
  return end_bit;
}

}  // namespace coalesce::detail
