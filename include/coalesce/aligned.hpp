// coalesce: a pointer that carries its alignment in its type. aligned_ptr<float, 16> promises
// 16-byte alignment, so load<4>(i) is one 16-byte access (a float4) without casts, the compiler
// may assume the alignment (__builtin_assume_aligned), and the same promise becomes a
// cuda::std::aligned_accessor for mdspan. load_read_only<N>(i) reads through the non-coherent
// path (LDG.E.CONSTANT), for data no thread writes during the kernel. Host-capable.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/memory.hpp>

#include <cuda/std/mdspan>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace coalesce {

/// N elements of T moved as one access of N * sizeof(T) bytes (an access width: 1, 2, 4, 8 or 16),
/// aligned to its size. The same type every coalesce kernel moves its chunks in.
template <class T, std::size_t N>
using vec = detail::vector_chunk<T, N, detail::whole_access_alignment<T, N>()>;

/// A pointer to T that promises `Alignment` bytes of alignment (a power of two, at least
/// alignof(T)), so that load<N> and store<N> move N elements as one vector access.
template <class T, std::size_t Alignment = alignof(T)>
class aligned_ptr {
  static_assert(detail::is_power_of_two(Alignment) && Alignment >= alignof(T),
                "coalesce::aligned_ptr<T, Alignment>: Alignment must be a power of two no smaller than alignof(T)");

 public:
  using element_type = T;                              ///< the pointee, const if T is
  using value_type = std::remove_cv_t<T>;              ///< T without const or volatile
  static constexpr std::size_t alignment = Alignment;  ///< the alignment promised, in bytes
  /// The mdspan accessor that makes the same promise.
  using accessor_type = cuda::std::aligned_accessor<T, Alignment>;

  aligned_ptr() = default;
  /// Precondition: p is a multiple of Alignment (checked under COALESCE_DEBUG; make_aligned checks
  /// always, on the host).
  COALESCE_HOST_DEVICE explicit aligned_ptr(T* p) noexcept : p_(p) {
    COALESCE_ASSERT(reinterpret_cast<std::uintptr_t>(p) % Alignment == 0,
                    "coalesce::aligned_ptr: the pointer is less aligned than its type says");
  }
  /// From a pointer with at least this alignment, or to a pointer to const.
  template <class U, std::size_t A,
            std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]> && (A >= Alignment), int> = 0>
  COALESCE_HOST_DEVICE aligned_ptr(const aligned_ptr<U, A>& other) noexcept : p_(other.get()) {}

  /// The pointer, with its alignment told to the compiler.
  COALESCE_HOST_DEVICE T* get() const noexcept { return static_cast<T*>(__builtin_assume_aligned(p_, Alignment)); }
  COALESCE_HOST_DEVICE T& operator*() const noexcept { return *get(); }                 ///< the first element
  COALESCE_HOST_DEVICE T& operator[](std::size_t i) const noexcept { return get()[i]; }  ///< element i
  COALESCE_HOST_DEVICE explicit operator bool() const noexcept { return p_ != nullptr; }  ///< whether it is not null

  /// Elements [i, i + N) as one access. Precondition: i is a multiple of N (checked under
  /// COALESCE_DEBUG); N * sizeof(T) <= Alignment is checked at compile time.
  template <std::size_t N>
  COALESCE_HOST_DEVICE vec<value_type, N> load(std::size_t i) const noexcept {
    check_vector<N>(i);
    return *reinterpret_cast<const vec<value_type, N>*>(get() + i);
  }
  /// Writes `v` to elements [i, i + N) as one access (not for a pointer to const); the same
  /// preconditions as load.
  template <std::size_t N, class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  COALESCE_HOST_DEVICE void store(std::size_t i, const vec<value_type, N>& v) const noexcept {
    check_vector<N>(i);
    *reinterpret_cast<vec<value_type, N>*>(get() + i) = v;
  }
  /// The same as load, through the read-only data path on the device (no thread may write these
  /// elements while the kernel runs); a plain load on the host.
  template <std::size_t N>
  COALESCE_HOST_DEVICE vec<value_type, N> load_read_only(std::size_t i) const noexcept {
    check_vector<N>(i);
#if COALESCE_DEVICE_PASS
    return detail::load_chunk<true>(reinterpret_cast<const vec<value_type, N>*>(get() + i));
#else
    return load<N>(i);
#endif
  }

 private:
  template <std::size_t N>
  COALESCE_HOST_DEVICE static void check_vector(std::size_t i) noexcept {
    static_assert(detail::is_access_width(N * sizeof(T)),
                  "coalesce::aligned_ptr::load<N>: N * sizeof(T) must be 1, 2, 4, 8 or 16 bytes (one memory access)");
    static_assert(N * sizeof(T) <= Alignment,
                  "coalesce::aligned_ptr::load<N>: N elements are wider than the pointer's alignment promises");
    COALESCE_ASSERT(i % N == 0, "coalesce::aligned_ptr: a vector access must start at a multiple of N");
    (void)i;
  }

  T* p_ = nullptr;
};

/// `p` as an aligned_ptr, after checking the promise: throws std::invalid_argument when p is not
/// a multiple of Alignment. For pointers of unknown origin, on the host.
template <std::size_t Alignment, class T>
aligned_ptr<T, Alignment> make_aligned(T* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % Alignment != 0)
    throw std::invalid_argument("coalesce::make_aligned<" + std::to_string(Alignment) +
                                ">: the pointer is not aligned to " + std::to_string(Alignment) + " bytes");
  return aligned_ptr<T, Alignment>(p);
}

/// A row-major mdspan over `p` whose accessor keeps the alignment promise
/// (cuda::std::aligned_accessor).
template <class T, std::size_t A, class... Extents>
COALESCE_HOST_DEVICE auto to_mdspan(aligned_ptr<T, A> p, Extents... extents) {
  using extents_type = cuda::std::dextents<std::size_t, sizeof...(Extents)>;
  return cuda::std::mdspan<T, extents_type, cuda::std::layout_right, cuda::std::aligned_accessor<T, A>>(
      p.get(), extents_type(static_cast<std::size_t>(extents)...));
}

}  // namespace coalesce
