# Warnings as errors for coalesce's own tests, examples and benchmarks - never for the
# INTERFACE targets users link.
add_library(coalesce_warnings INTERFACE)
target_compile_options(coalesce_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
