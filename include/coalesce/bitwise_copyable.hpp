// coalesce: is_bitwise_copyable<T>, whether coalesce may copy a T by copying its bytes. True for
// trivially copyable types; specialize it for a class whose copy constructor is user-written but
// copies nothing more than its bytes (Eigen::Vector3d), so that it can be a field of a soa_vector.
// Host-capable; included by <coalesce/soa.hpp>.
#pragma once
/// @file

#include <coalesce/config.hpp>

#include <type_traits>

namespace coalesce {

/// Whether a copy of the bytes of a T is a copy of the T. coalesce moves the fields of a
/// soa_vector<Record> by their bytes: cudaMemcpy between columns, memcpy on the host, loads and
/// stores of whole words in kernels. C++ promises that this copies a T only when T is trivially
/// copyable, so that is the default. Many classes of numerical codes are not, yet copy like one:
/// Eigen::Vector3d declares its copy constructor (EIGEN_DEVICE_FUNC), which copies three doubles.
/// For such a class, specialize the trait (for the cv-unqualified type, at namespace scope):
///   template <> struct coalesce::is_bitwise_copyable<Eigen::Vector3d> : std::true_type {};
/// The specialization promises, for every T object `a`:
///   - bytes of `a` copied into storage for a T (suitably aligned) are a T equal to `a`, with no
///     constructor run; and storage overwritten with such bytes needs no destructor run first.
///     coalesce runs no constructor, assignment or destructor on the elements its columns hold.
///   - T is default-constructible (a soa_vector's new elements are Record{}) and copyable; where a
///     kernel touches T values (for_each), these are __host__ __device__, as Eigen's are.
/// A field of such a type is one leaf: one column of T, as coalesce::keep_whole makes one, never
/// split into T's own members (a class with a user-written copy constructor is copied by it, not
/// member by member, everywhere coalesce does not copy bytes: view[i].v = w, Record r = view[i]).
/// Not for a class that owns memory, counts references or points into itself: store indices or
/// handles in a column instead.
template <class T>
struct is_bitwise_copyable : std::is_trivially_copyable<T> {};

template <class T>
inline constexpr bool is_bitwise_copyable_v = is_bitwise_copyable<T>::value;  ///< is_bitwise_copyable<T>::value

}  // namespace coalesce
