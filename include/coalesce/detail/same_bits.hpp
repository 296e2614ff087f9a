// coalesce::detail: whether two objects hold the same bytes, a word at a time. What decides
// whether a walk stores an element (detail/element_bytes.hpp) and whether a member function
// called on an element changed a leaf (<coalesce/element_methods.hpp>). Users never include this
// header. Host-capable.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace coalesce::detail {

// Compared a word at a time: a byte-wise loop costs about 4x the instructions, and an in-place
// update of one float column is instruction-bound enough to lose 20% to it on an H200. Bits, not
// values: a NaN the element held compares equal to itself, and -0.0 differs from +0.0.
template <class F>
COALESCE_HOST_DEVICE COALESCE_FORCEINLINE bool same_bits(const F& a, const F& b) {
  using word = std::conditional_t<sizeof(F) % 4 == 0, unsigned,
                                  std::conditional_t<sizeof(F) % 2 == 0, unsigned short, unsigned char>>;
  constexpr std::size_t words = sizeof(F) / sizeof(word);
  word x[words], y[words];
  std::memcpy(x, &a, sizeof(F));
  std::memcpy(y, &b, sizeof(F));
  unsigned difference = 0;
  COALESCE_DETAIL_UNROLL
  for (std::size_t i = 0; i < words; ++i) difference |= unsigned(x[i] ^ y[i]);
  return difference == 0;
}

}  // namespace coalesce::detail
