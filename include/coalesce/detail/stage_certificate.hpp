// coalesce::detail: what a stage's shared-memory accesses cost, proved by the access model at
// compile time. A stage is the shared-memory copy of a run of structs that staged for_each and
// AoS <-> SoA conversion work on. Users never include this header. Host-capable.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/tile_layout.hpp>

#include <cstddef>

namespace coalesce::detail {

// The certificate of a stage of T, whose two kinds of shared access are: block_copy's consecutive 16-byte words, conflict-free by construction; and each
// thread's own element, lane l of a warp taking element l of 32 consecutive ones, word by word in
// words of alignof(T) (the stage promises no more). Those word accesses are as far apart as an
// element is long, so they conflict as the access model says: the 24-byte Particle's 6 words
// 2-way (lanes l and l + 16 share a bank), a 12-byte Vec3's 3 words not at all, a 32-byte
// struct's 8 words 8-way. A stage is a one-row tile of words; the model prices the worst word.
template <class T>
struct stage_certificate {
  static constexpr std::size_t word_bytes = alignof(T) < 16 ? alignof(T) : 16;
  static constexpr std::size_t words = sizeof(T) / word_bytes;
  using word = vector_chunk<unsigned char, word_bytes, word_bytes>;
  using stage = tile_layout<word, 1, 32 * words, unpadded>;
  // Word j of each lane's element.
  COALESCE_HOST_DEVICE static constexpr warp_access element_word(std::size_t j) {
    return warp_access::along_row(words).from(0, j);
  }
  static constexpr unsigned worst_word() {
    unsigned w = 0;
    for (std::size_t j = 0; j < words; ++j) {
      const unsigned here = stage::wavefronts(element_word(j));
      w = here > w ? here : w;
    }
    return w;
  }
  // Wavefronts of one warp instruction reading (or writing) a word of each lane's element, and
  // the least any placement could take.
  static constexpr unsigned element_word_wavefronts = worst_word();
  static constexpr unsigned ideal_element_word_wavefronts = stage::ideal_wavefronts(element_word(0));
  static_assert(element_word_wavefronts != 0, "a staged element's words must be single shared-memory accesses");
};

}  // namespace coalesce::detail
