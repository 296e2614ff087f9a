# The GPU architectures coalesce's own tests, examples and benchmarks are built for, when the
# user names none (-DCMAKE_CUDA_ARCHITECTURES=80 or the CUDAARCHS environment variable): those of
# the GPUs present, so the build runs where it is made; else sm_90 (Hopper: H100, H200), what
# coalesce is measured on, so a machine with no GPU still compiles and checks everything.
# CMake's own "native" needs a GPU at configure time, hence nvidia-smi, which may be absent.
function(coalesce_default_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    return()
  endif()
  set(architectures "")
  find_program(COALESCE_NVIDIA_SMI nvidia-smi)
  if(COALESCE_NVIDIA_SMI)
    execute_process(COMMAND ${COALESCE_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    RESULT_VARIABLE rc OUTPUT_VARIABLE capabilities ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" capabilities "${capabilities}")
      foreach(capability IN LISTS capabilities)
        string(REPLACE "." "" architecture ${capability})
        list(APPEND architectures ${architecture})
      endforeach()
      list(REMOVE_DUPLICATES architectures)
    endif()
  endif()
  if(architectures)
    message(STATUS "coalesce: building for the GPU here, sm_${architectures} (set CMAKE_CUDA_ARCHITECTURES to choose)")
  else()
    set(architectures 90)
    message(STATUS "coalesce: no GPU found, building for sm_90 (set CMAKE_CUDA_ARCHITECTURES to choose)")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${architectures} CACHE STRING "CUDA architectures to build for")
endfunction()

# Sets `out` to TRUE when nvidia-smi lists a GPU on this machine (what the quick test scope asks
# before it builds the device tests), FALSE otherwise.
function(coalesce_gpu_present out)
  set(present FALSE)
  find_program(COALESCE_NVIDIA_SMI nvidia-smi)
  if(COALESCE_NVIDIA_SMI)
    execute_process(COMMAND ${COALESCE_NVIDIA_SMI} -L RESULT_VARIABLE rc OUTPUT_VARIABLE gpus ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0 AND gpus MATCHES "GPU [0-9]")
      set(present TRUE)
    endif()
  endif()
  set(${out} ${present} PARENT_SCOPE)
endfunction()
