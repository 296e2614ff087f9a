// coalesce::detail: the operations a reduction or a scan takes, as device code can call them.
// std::plus<> and its kin are constexpr __host__ functions, which device code may call only
// under --expt-relaxed-constexpr (and public headers must not need it); libcu++ has the same
// function objects for host and device, so a standard one is swapped for its cuda::std twin
// before the launch. Users never include this header.
#pragma once

#include <coalesce/config.hpp>

#include <cuda/std/functional>

#include <functional>  // costs nothing under nvcc: cuda_runtime.h, which it includes in every .cu, has it
#include <type_traits>

namespace coalesce::detail {

// The type device code calls for an operation of type Op: Op itself, or for the standard binary
// function objects that combine two values into one of their type, their cuda::std counterparts
// (same template argument, so std::plus<int> is cuda::std::plus<int> and std::plus<> the
// transparent cuda::std::plus<>). The comparisons (std::less...) are left out: they return bool,
// which no reduction or scan of other values combines.
template <class Op>
struct device_operator {
  using type = Op;
};
template <class T>
struct device_operator<std::plus<T>> {
  using type = cuda::std::plus<T>;
};
template <class T>
struct device_operator<std::minus<T>> {
  using type = cuda::std::minus<T>;
};
template <class T>
struct device_operator<std::multiplies<T>> {
  using type = cuda::std::multiplies<T>;
};
template <class T>
struct device_operator<std::bit_and<T>> {
  using type = cuda::std::bit_and<T>;
};
template <class T>
struct device_operator<std::bit_or<T>> {
  using type = cuda::std::bit_or<T>;
};
template <class T>
struct device_operator<std::bit_xor<T>> {
  using type = cuda::std::bit_xor<T>;
};
template <class T>
struct device_operator<std::logical_and<T>> {
  using type = cuda::std::logical_and<T>;
};
template <class T>
struct device_operator<std::logical_or<T>> {
  using type = cuda::std::logical_or<T>;
};
template <class Op>
using device_operator_t = typename device_operator<std::remove_cv_t<Op>>::type;

// `op` as device code can call it: a standard function object (stateless) as its cuda::std
// counterpart, anything else as it is.
template <class Op>
device_operator_t<Op> as_device_operator(const Op& op) {
  if constexpr (std::is_same_v<device_operator_t<Op>, std::remove_cv_t<Op>>) {
    return op;
  } else {
    return device_operator_t<Op>{};
  }
}

// Whether device code can call an operation of type Op at all, as far as its type says: a
// pointer to a function cannot be, since the address was taken on the host (the device's copy of
// a __device__ function has another). A host lambda or a functor whose operator() is host-only
// cannot be told apart from a __host__ __device__ one by its type: nvcc reports those at the call
// in device code ("calling a __host__ function from a __device__ function").
template <class Op>
inline constexpr bool is_function_pointer_v =
    std::is_pointer_v<std::decay_t<Op>> && std::is_function_v<std::remove_pointer_t<std::decay_t<Op>>>;

}  // namespace coalesce::detail
