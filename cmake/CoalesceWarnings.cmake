# Warnings as errors for coalesce's own tests, examples and benchmarks - never for the
# INTERFACE targets users link.
add_library(coalesce_warnings INTERFACE)
target_compile_options(coalesce_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)

# Tests and examples may use extended lambdas; the public headers must not need them.
add_library(coalesce_cuda_test_flags INTERFACE)
target_compile_options(coalesce_cuda_test_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
