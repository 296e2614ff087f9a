// coalesce: what a stencil reads beyond the edge of a matrix. Four policies, passed by value to
// coalesce::stencil: clamp (the nearest edge element), periodic (wrap around), constant(v) (the
// value v), and interior (outputs whose neighbourhood leaves the matrix are not written; a shape
// with none inside, an extent of 2R or less, is refused by stencil). The
// index arithmetic is plain constexpr code, for host and device, so it is tested with no GPU.
#pragma once
/// @file

#include <coalesce/config.hpp>

#include <cuda/std/type_traits>

#include <cstddef>
#include <type_traits>

namespace coalesce {

/// Reads beyond an edge return the nearest element of the edge (an image's usual border).
struct clamp_t {};
inline constexpr clamp_t clamp{};  ///< the clamp policy

/// Reads beyond an edge wrap around to the other side (a torus: periodic boundary conditions).
struct periodic_t {};
inline constexpr periodic_t periodic{};  ///< the periodic policy

/// Only outputs whose whole neighbourhood lies inside the matrix are written; the others keep
/// what they held (a Dirichlet boundary stored in the output's edge).
struct interior_t {};
inline constexpr interior_t interior{};  ///< the interior policy

/// Reads beyond an edge return `value` (converted to the input's element type).
template <class T>
struct constant {
  static_assert(std::is_trivially_copyable_v<T>,
                "coalesce::constant<T>: T must be trivially copyable (it is passed to kernels)");
  T value;  ///< what a read beyond the edge returns
  COALESCE_HOST_DEVICE constexpr explicit constant(T v) : value(v) {}  ///< reads beyond the edge return v
};

/// Whether P is one of the four boundary policies (clamp_t, periodic_t, interior_t, constant<T>).
template <class P>
inline constexpr bool is_boundary_policy_v = false;
template <>
inline constexpr bool is_boundary_policy_v<clamp_t> = true;  ///< clamp is a policy
template <>
inline constexpr bool is_boundary_policy_v<periodic_t> = true;  ///< periodic is a policy
template <>
inline constexpr bool is_boundary_policy_v<interior_t> = true;  ///< interior is a policy
template <class T>
inline constexpr bool is_boundary_policy_v<constant<T>> = true;  ///< constant(v) is a policy

/// Whether the policy reads nothing beyond the edge and substitutes a value there (constant(v)):
/// the one policy whose boundary_index can say "outside" (-1).
template <class P>
inline constexpr bool is_constant_policy_v = false;
template <class T>
inline constexpr bool is_constant_policy_v<constant<T>> = true;  ///< constant(v) substitutes v

/// The index a stencil reads for position `i` of an axis of `n` elements (n >= 1), under the
/// policy: `i` itself inside [0, n); outside, clamp gives the nearest edge, periodic wraps (any
/// distance, so a radius wider than the axis is fine), interior clamps too (what it reads there
/// feeds only outputs it does not write, and a clamped read stays inside the allocation), and
/// constant gives -1: no read, the constant instead. In the index type of `i` (signed): a kernel
/// whose axes fit in 32 bits computes them in 32 bits (a 64-bit % is a long instruction sequence).
/// (n is a non-deduced cuda::std::type_identity_t<I>: it takes i's type, whatever the caller's n
/// was, a size_t extent or an int literal.)
template <class I>
COALESCE_HOST_DEVICE constexpr I boundary_index(clamp_t, I i, cuda::std::type_identity_t<I> n) {
  return i < 0 ? I(0) : i >= n ? n - 1 : i;
}
/// Under periodic: i modulo n, in [0, n).
template <class I>
COALESCE_HOST_DEVICE constexpr I boundary_index(periodic_t, I i, cuda::std::type_identity_t<I> n) {
  const I m = i % n;
  return m < 0 ? m + n : m;
}
/// Under interior: as clamp (the elements that would read beyond the edge are not written).
template <class I>
COALESCE_HOST_DEVICE constexpr I boundary_index(interior_t, I i, cuda::std::type_identity_t<I> n) {
  return boundary_index(clamp, i, n);
}
/// Under constant(v): i inside the axis, -1 outside (read v there).
template <class T, class I>
COALESCE_HOST_DEVICE constexpr I boundary_index(const constant<T>&, I i, cuda::std::type_identity_t<I> n) {
  return i >= 0 && i < n ? i : I(-1);
}

/// Whether position `i` of an axis of `n` elements has all of [i - radius, i + radius] inside the
/// axis: the outputs interior writes.
template <class I>
COALESCE_HOST_DEVICE constexpr bool interior_contains(cuda::std::type_identity_t<I> radius, I i,
                                                      cuda::std::type_identity_t<I> n) {
  return i >= radius && i + radius < n;
}

}  // namespace coalesce
