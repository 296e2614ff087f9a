# Runs one downstream consumer end to end: (install,) configure, build, run.
# -DMODE=find_package|add_subdirectory, and the paths given by tests/package/CMakeLists.txt.
cmake_minimum_required(VERSION 3.25)

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test (${MODE}): ${step} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${step}: ok\n${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(common -G ${GENERATOR} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release)

if(MODE STREQUAL "find_package")
  set(prefix ${WORK_DIR}/prefix)
  run("install to a temporary prefix" ${CMAKE_COMMAND} --install ${COALESCE_BUILD_DIR} --prefix ${prefix})
  foreach(f include/coalesce/coalesce.hpp include/coalesce/config.hpp share/cmake/coalesce/coalesceConfig.cmake
            share/cmake/coalesce/coalesceConfigVersion.cmake)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "package test: ${f} was not installed")
    endif()
  endforeach()
  # The version file must refuse another major version (SameMajorVersion).
  file(WRITE ${WORK_DIR}/wrong_major/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\nproject(wrong_major LANGUAGES NONE)\nfind_package(coalesce 1.0 CONFIG REQUIRED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/wrong_major -B ${WORK_DIR}/wrong_major/build
                          -DCMAKE_PREFIX_PATH=${prefix}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "coalesce")
    message(FATAL_ERROR "package test: find_package(coalesce 1.0) should have failed against 0.x:\n${err}")
  endif()
  set(source ${COALESCE_SOURCE_DIR}/tests/package/consumer_find)
  set(extra -DCMAKE_PREFIX_PATH=${prefix})
else()
  set(source ${COALESCE_SOURCE_DIR}/tests/package/consumer_subdir)
  set(extra -DCOALESCE_SOURCE_DIR=${COALESCE_SOURCE_DIR})
endif()

run("configure the consumer" ${CMAKE_COMMAND} -S ${source} -B ${WORK_DIR}/build ${common} ${extra})
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("run the consumer" ${WORK_DIR}/build/consumer)
