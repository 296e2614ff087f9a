// coalesce: configuration and compiler detection.
// This is the only header that looks at __CUDACC__, __CUDA_ARCH__ or compiler versions; every
// other header includes it first and uses the macros below.
#pragma once

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
#if COALESCE_DETAIL_CPLUSPLUS >= 202002L
#  define COALESCE_CXX20 1
#else
#  define COALESCE_CXX20 0
#endif

// --- CUDA compilation -----------------------------------------------------------------------
// COALESCE_CUDA_COMPILER: 1 when a CUDA compiler (nvcc, nvc++ -cuda, clang -x cuda) sees this
// translation unit, so __host__/__device__ exist. COALESCE_DEVICE_PASS: 1 in the device pass.
#if defined(__CUDACC__)
#  define COALESCE_CUDA_COMPILER 1
#else
#  define COALESCE_CUDA_COMPILER 0
#endif
#if defined(__CUDA_ARCH__)
#  define COALESCE_DEVICE_PASS 1
#else
#  define COALESCE_DEVICE_PASS 0
#endif

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

// Around code that only probes a type at compile time (detail/fields.hpp): clang (14 at least)
// warns there that T{{}} leaves fields without initializers (-Wmissing-field-initializers: the
// probe's point) and that detail::probe_object, declared and never defined, has no definition
// (-Wundefined-var-template); g++ and nvcc say nothing.
#if defined(__clang__)
#  define COALESCE_DETAIL_PROBES_BEGIN                                                                \
     _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wmissing-field-initializers\"") \
         _Pragma("clang diagnostic ignored \"-Wundefined-var-template\"")
#  define COALESCE_DETAIL_PROBES_END _Pragma("clang diagnostic pop")
#else
#  define COALESCE_DETAIL_PROBES_BEGIN
#  define COALESCE_DETAIL_PROBES_END
#endif

// Whether the CUDA runtime API (cuda_runtime_api.h) can be included. It is a plain C header, so
// host compilers can use it too when the toolkit's include directory is on the path.
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
#  define COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(F)                                                    \
     (!__nv_is_extended_device_lambda_closure_type(F) || __nv_is_extended_host_device_lambda_closure_type(F) || \
      __nv_is_extended_device_lambda_with_preserved_return_type(F))
#else
#  define COALESCE_DETAIL_RESULT_VISIBLE_ON_HOST(F) true
#endif

// --- debug checks ---------------------------------------------------------------------------
// COALESCE_DEBUG turns on bounds and precondition checks on host and device. Users may predefine
// it (or COALESCE_ASSERT itself) before including any coalesce header.
#ifndef COALESCE_DEBUG
#  define COALESCE_DEBUG 0
#endif

#ifndef COALESCE_ASSERT
#  if COALESCE_DEBUG
#    if COALESCE_DEVICE_PASS
#      include <cstdio>
#      define COALESCE_ASSERT(cond, msg)                                                              \
         do {                                                                                        \
           if (!(cond)) {                                                                            \
             ::printf("coalesce: %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond);                 \
             __trap();                                                                               \
           }                                                                                         \
         } while (0)
#    else
#      include <cstdio>
#      include <cstdlib>
#      define COALESCE_ASSERT(cond, msg)                                                              \
         do {                                                                                        \
           if (!(cond)) {                                                                            \
             std::fprintf(stderr, "coalesce: %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond);     \
             std::abort();                                                                           \
           }                                                                                         \
         } while (0)
#    endif
#  else
#    define COALESCE_ASSERT(cond, msg) ((void)0)
#  endif
#endif
