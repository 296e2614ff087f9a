// coalesce::detail: N values moved as one memory access - the one type, the one width rule and
// the one read-only load that every coalesce kernel and aligned_ptr use. Users never include it;
// they see it as coalesce::vec (aligned.hpp). The type and the rules are host-capable; the loads
// and stores need a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <cstring>

namespace coalesce::detail {

// Whether one memory instruction moves `bytes` bytes: 1, 2, 4, 8 or 16. (Global loads and
// stores, and shared-memory accesses, have exactly these widths.)
COALESCE_HOST_DEVICE constexpr bool is_access_width(std::size_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

// The widest power of two, at most 16, that divides `bytes`: the alignment of an access of that
// size, or of an address.
COALESCE_HOST_DEVICE constexpr std::size_t access_alignment(std::size_t bytes) {
  std::size_t a = 16;
  while (a > 1 && bytes % a != 0) a /= 2;
  return a;
}

// The alignment a chunk of N values of F is loaded with: the widest access its size allows, and
// never less than F's own. For N == 1 that may be more than F* promises (a 16-byte struct of
// floats is 4-byte aligned, yet read as one 16-byte access where the address allows it), so the
// walks check addresses before they use a chunk, and fall back to the element itself.
template <class F, std::size_t N>
inline constexpr std::size_t chunk_alignment =
    access_alignment(sizeof(F) * N) < alignof(F) ? alignof(F) : access_alignment(sizeof(F) * N);

// N consecutive values as one aligned access (several 16-byte ones when wider than 16 bytes).
// Alignment defaults to what a column of F guarantees at a chunk boundary; coalesce::vec asks for
// the whole size.
template <class F, std::size_t N, std::size_t Alignment = chunk_alignment<F, N>>
struct alignas(Alignment) vector_chunk {
  F value[N];
  COALESCE_HOST_DEVICE constexpr F& operator[](std::size_t i) { return value[i]; }
  COALESCE_HOST_DEVICE constexpr const F& operator[](std::size_t i) const { return value[i]; }
};

// The alignment of coalesce::vec<T, N>: its whole size, which must be an access width.
template <class T, std::size_t N>
constexpr std::size_t whole_access_alignment() {
  static_assert(is_access_width(N * sizeof(T)),
                "coalesce::vec<T, N>: N * sizeof(T) must be 1, 2, 4, 8 or 16 bytes (one memory access)");
  return is_access_width(N * sizeof(T)) ? N * sizeof(T) : alignof(T);
}

// Elements per chunk for a column of `bytes`-byte values: the fewest that make whole 16-byte
// accesses (4 floats or 2 doubles as one, 4 twelve-byte float3s as three), halved while that
// would hold more than 64 bytes of one column in registers, and one value of 16 bytes or more.
// Each column so moves in its own widest access: a 12-byte column beside float columns costs
// those nothing.
COALESCE_HOST_DEVICE constexpr unsigned chunk_elements_for(std::size_t bytes) {
  if (bytes == 0 || bytes >= 16) return 1u;
  unsigned n = unsigned(16 / access_alignment(bytes));
  while (n > 1 && n * bytes > 64) n /= 2;
  return n;
}

#if COALESCE_CUDA_COMPILER

// The unsigned word of each access width: what loads and stores move.
template <std::size_t Bytes>
struct access_word;
template <>
struct access_word<1> {
  using type = unsigned char;
};
template <>
struct access_word<2> {
  using type = unsigned short;
};
template <>
struct access_word<4> {
  using type = unsigned;
};
template <>
struct access_word<8> {
  using type = uint2;
};
template <>
struct access_word<16> {
  using type = uint4;
};

// The word a chunk of alignment A moves in (16 bytes at most).
template <std::size_t A>
using chunk_word = typename access_word<(A < 16 ? A : 16)>::type;

// Non-coherent (read-only path) loads of 1 to 16 bytes. Unlike __ldg, whose asm is volatile,
// these may be dropped by the compiler when nothing uses the value, so a transform reading 3 of
// 6 columns loads 3.
COALESCE_DEVICE COALESCE_FORCEINLINE void load_read_only(const void* p, unsigned char& v) {
  unsigned short wide;
  asm("ld.global.nc.u8 %0, [%1];" : "=h"(wide) : "l"(p));
  v = static_cast<unsigned char>(wide);
}
COALESCE_DEVICE COALESCE_FORCEINLINE void load_read_only(const void* p, unsigned short& v) {
  asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
}
COALESCE_DEVICE COALESCE_FORCEINLINE void load_read_only(const void* p, unsigned& v) {
  asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
}
COALESCE_DEVICE COALESCE_FORCEINLINE void load_read_only(const void* p, uint2& v) {
  asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
}
COALESCE_DEVICE COALESCE_FORCEINLINE void load_read_only(const void* p, uint4& v) {
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
}

// The bytes of an object, `Alignment`-aligned in memory, as words of that alignment (16 bytes at
// most): what its loads and stores move, every byte included. A struct copy may move only the
// members: nvcc 13.0 read an 8-byte {char, float} chunk as ld.u8 and ld.f32 and stored its
// padding as zeros, and split a chunk of 4 floats into four st.global.f32 on some paths. Words
// are neither split nor thinned.
template <std::size_t Bytes, std::size_t Alignment>
struct word_image {
  using word = chunk_word<Alignment>;
  static_assert(Bytes % sizeof(word) == 0, "coalesce: an object's size is a multiple of its alignment");
  word w[Bytes / sizeof(word)];
};

template <std::size_t Alignment, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE word_image<sizeof(T), Alignment> load_image(const T* from) {
  using image = word_image<sizeof(T), Alignment>;
  image bytes;
#  pragma unroll
  for (std::size_t k = 0; k < sizeof(bytes.w) / sizeof(bytes.w[0]); ++k)
    bytes.w[k] = reinterpret_cast<const typename image::word*>(from)[k];
  return bytes;
}
template <std::size_t Alignment, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_image(T* to, const word_image<sizeof(T), Alignment>& bytes) {
  using image = word_image<sizeof(T), Alignment>;
#  pragma unroll
  for (std::size_t k = 0; k < sizeof(bytes.w) / sizeof(bytes.w[0]); ++k)
    reinterpret_cast<typename image::word*>(to)[k] = bytes.w[k];
}

// A value of a bitwise copyable type (coalesce::is_bitwise_copyable) loaded, or stored, as words
// of its alignment; T is default-constructible.
template <std::size_t Alignment, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE T load_words(const T* from) {
  const auto bytes = load_image<Alignment>(from);
  T value;
  std::memcpy(&value, &bytes, sizeof value);
  return value;
}
template <std::size_t Alignment, class T>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_words(T* to, const T& value) {
  word_image<sizeof(T), Alignment> bytes;
  std::memcpy(&bytes, &value, sizeof value);
  store_image<Alignment>(to, bytes);
}

// Loads a chunk (of any bitwise copyable type) as words of its alignment; ReadOnly takes the
// non-coherent path (ld.global.nc), legal only for memory no thread of the kernel writes.
template <bool ReadOnly, class Chunk>
COALESCE_DEVICE COALESCE_FORCEINLINE Chunk load_chunk(const Chunk* from) {
  if constexpr (!ReadOnly) {
    return load_words<alignof(Chunk)>(from);
  } else {
    using word = chunk_word<alignof(Chunk)>;
    constexpr std::size_t words = sizeof(Chunk) / sizeof(word);
    word w[words];
#  pragma unroll
    for (std::size_t k = 0; k < words; ++k) load_read_only(reinterpret_cast<const word*>(from) + k, w[k]);
    Chunk chunk;
    std::memcpy(&chunk, w, sizeof chunk);
    return chunk;
  }
}

// Stores a chunk as words of its alignment (one 16-byte store for 4 floats).
template <class Chunk>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_chunk(Chunk* to, const Chunk& chunk) {
  store_words<alignof(Chunk)>(to, chunk);
}

#endif  // COALESCE_CUDA_COMPILER

}  // namespace coalesce::detail
