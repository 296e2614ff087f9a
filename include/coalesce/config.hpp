// coalesce: configuration and compiler detection.
// This is the only header that looks at __CUDACC__, __CUDA_ARCH__ or compiler versions; every
// other header includes it first and uses the macros below.
#pragma once
/// @file

#include <coalesce/version.hpp>

// --- language level -------------------------------------------------------------------------
#if defined(_MSVC_LANG)
#  define COALESCE_DETAIL_CPLUSPLUS _MSVC_LANG
#else
#  define COALESCE_DETAIL_CPLUSPLUS __cplusplus
#endif
#if COALESCE_DETAIL_CPLUSPLUS < 201703L
#  error "coalesce requires C++17 or newer (compile with -std=c++17 or later)."
#endif
/// @def COALESCE_CXX20
/// 1 when the translation unit is compiled as C++20 or newer, 0 under C++17. Read from
/// `_MSVC_LANG` on MSVC, whose `__cplusplus` stays 199711L without /Zc:__cplusplus. Older
/// standards stop with an error: coalesce needs C++17.
#if COALESCE_DETAIL_CPLUSPLUS >= 202002L
#  define COALESCE_CXX20 1
#else
#  define COALESCE_CXX20 0
#endif

// --- CUDA compilation -----------------------------------------------------------------------
/// @def COALESCE_CUDA_COMPILER
/// 1 when a CUDA compiler (nvcc, nvc++ -cuda, clang -x cuda) sees this translation unit, so
/// `__host__` and `__device__` exist; 0 under a plain host compiler, which still compiles the
/// host-only headers and the host parts of the containers.
#if defined(__CUDACC__)
#  define COALESCE_CUDA_COMPILER 1
#else
#  define COALESCE_CUDA_COMPILER 0
#endif
/// @def COALESCE_DEVICE_PASS
/// 1 in a CUDA compiler's device pass (`__CUDA_ARCH__` is defined), 0 in its host pass and under a
/// host compiler: code that must differ between the two passes tests this.
#if defined(__CUDA_ARCH__)
#  define COALESCE_DEVICE_PASS 1
#else
#  define COALESCE_DEVICE_PASS 0
#endif

/// @def COALESCE_HOST_DEVICE
/// `__host__ __device__` under a CUDA compiler, nothing otherwise: a function that runs on both
/// sides, which plain g++ still compiles as an ordinary host function.
/// @def COALESCE_DEVICE
/// `__device__` under a CUDA compiler, nothing otherwise: a function only device code calls.
/// @def COALESCE_HOST
/// `__host__` under a CUDA compiler, nothing otherwise: a function only host code calls.
/// @def COALESCE_FORCEINLINE
/// Inlines a function whatever the compiler's cost estimate: `__forceinline__` under a CUDA
/// compiler, `inline __attribute__((always_inline))` with g++ and clang, `__forceinline` with
/// MSVC, plain `inline` elsewhere. For the small per-element helpers of the kernels' inner loops.
#if COALESCE_CUDA_COMPILER
#  define COALESCE_HOST_DEVICE __host__ __device__
#  define COALESCE_DEVICE __device__
#  define COALESCE_HOST __host__
#  define COALESCE_FORCEINLINE __forceinline__
#else
#  define COALESCE_HOST_DEVICE
#  define COALESCE_DEVICE
#  define COALESCE_HOST
#  if defined(__GNUC__) || defined(__clang__)
#    define COALESCE_FORCEINLINE inline __attribute__((always_inline))
#  elif defined(_MSC_VER)
#    define COALESCE_FORCEINLINE __forceinline
#  else
#    define COALESCE_FORCEINLINE inline
#  endif
#endif

// Placed before a __host__ __device__ function template that calls a user's callable: the
// callable may be host-only (a host lambda in a .cu file), which is fine as long as that
// instantiation only runs on the host. nvcc (all versions) otherwise rejects the call; CCCL uses
// the same pragma for the same reason.
#if defined(__NVCC__)
#  define COALESCE_DETAIL_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#  define COALESCE_DETAIL_EXEC_CHECK_DISABLE
#endif

// `#pragma unroll` in nvcc's device pass, nothing elsewhere: a host compiler (nvcc's host pass
// included) warns of an unknown pragma, and host-capable headers compile under -Wall -Werror.
#if defined(__CUDA_ARCH__)
#  define COALESCE_DETAIL_UNROLL _Pragma("unroll")
#else
#  define COALESCE_DETAIL_UNROLL
#endif

// Around code that only probes a type at compile time (detail/fields.hpp): clang (14 at least)
// warns there that T{{}} leaves fields without initializers (-Wmissing-field-initializers: the
// probe's point) and that detail::probe_object, declared and never defined, has no definition
// (-Wundefined-var-template); g++ and nvcc say nothing.
#if defined(__clang__)
#  define COALESCE_DETAIL_PROBES_BEGIN                                                                    \
    _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wmissing-field-initializers\"") \
        _Pragma("clang diagnostic ignored \"-Wundefined-var-template\"")
#  define COALESCE_DETAIL_PROBES_END _Pragma("clang diagnostic pop")
#else
#  define COALESCE_DETAIL_PROBES_BEGIN
#  define COALESCE_DETAIL_PROBES_END
#endif

/// @def COALESCE_HAS_CUDA_RUNTIME
/// 1 when the CUDA runtime API (cuda_runtime_api.h) can be included, 0 otherwise. It is a plain C
/// header, so host compilers can use it too when the toolkit's include directory is on the path;
/// with it, a plain host compiler also knows CUDA's vector types (float3, int2, ...), whose fields
/// a soa_view names with no COALESCE_FIELDS.
#if defined(__has_include)
#  if __has_include(<cuda_runtime_api.h>)
#    define COALESCE_HAS_CUDA_RUNTIME 1
#  endif
#endif
#ifndef COALESCE_HAS_CUDA_RUNTIME
#  define COALESCE_HAS_CUDA_RUNTIME 0
#endif

// Whether the host can see what callable F returns. nvcc hands the host compiler a placeholder for
// an extended __device__ lambda (one without a trailing return type), whose operator() says
// nothing true about the lambda's (CUDA 12.3 and later: libcu++'s invoke_result asks the same
// three traits). Named function objects, __host__ __device__ lambdas, cuda::proclaim_return_type
// and lambdas with `-> R` pass.
#if defined(__CUDACC_EXTENDED_LAMBDA__) && !COALESCE_DEVICE_PASS
#  define COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(F)                                                            \
    (!__nv_is_extended_device_lambda_closure_type(F) || __nv_is_extended_host_device_lambda_closure_type(F) || \
     __nv_is_extended_device_lambda_with_preserved_return_type(F))
#else
#  define COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(F) true
#endif

// --- debug checks ---------------------------------------------------------------------------
/// @def COALESCE_DEBUG
/// 1 turns on bounds and precondition checks on host and device (COALESCE_ASSERT), and the
/// algorithms' check that each pointer they are handed is memory the GPU reads (else they throw
/// std::invalid_argument); 0, the default, compiles them all away. Predefine it
/// (-DCOALESCE_DEBUG=1) before including any coalesce header, alike in every translation unit: the
/// inline functions it changes must be the same everywhere.
#ifndef COALESCE_DEBUG
#  define COALESCE_DEBUG 0
#endif

/// @def COALESCE_ASSERT(cond, msg)
/// Checks a precondition under COALESCE_DEBUG: when `cond` is false, prints
/// "coalesce: file:line: msg (cond)" (stderr on the host, printf on the device) and aborts the
/// process (std::abort) or traps the kernel (__trap, which fails every later CUDA call of the
/// context). Without COALESCE_DEBUG it expands to nothing and `cond` is not evaluated. Predefine it
/// to route failures elsewhere, e.g. to a test framework.
#ifndef COALESCE_ASSERT
#  if COALESCE_DEBUG
#    if COALESCE_DEVICE_PASS
#      include <cstdio>
#      define COALESCE_ASSERT(cond, msg)                                            \
        do {                                                                        \
          if (!(cond)) {                                                            \
            ::printf("coalesce: %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond); \
            __trap();                                                               \
          }                                                                         \
        } while (0)
#    else
#      include <cstdio>
#      include <cstdlib>
#      define COALESCE_ASSERT(cond, msg)                                                        \
        do {                                                                                    \
          if (!(cond)) {                                                                        \
            std::fprintf(stderr, "coalesce: %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond); \
            std::abort();                                                                       \
          }                                                                                     \
        } while (0)
#    endif
#  else
#    define COALESCE_ASSERT(cond, msg) ((void)0)
#  endif
#endif
