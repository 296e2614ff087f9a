# What the SASS checks of codegen/ share, included by their scripts (cmake -P): the skip that a
# missing cuobjdump or nvdisasm leads to, and the -I flags from INCLUDE_DIRS. Needs CUOBJDUMP,
# NVDISASM, INCLUDE_DIRS (|-separated) and SKIP_FILE. After including it, a script whose
# sass_tools_found is FALSE has already written why to SKIP_FILE and should return.
file(REMOVE ${SKIP_FILE})

# The line "SKIPPED: <reason>" is what the summary after ctest's (cmake/CoalesceSkipReasons.cmake)
# quotes; cmake -P cannot choose its exit code, so the test's sh wrapper turns SKIP_FILE into 77.
function(skip reason)
  string(REGEX REPLACE "[\r\n]+" " " line "${reason}")  # one line
  message("SKIPPED: ${line}")
  file(WRITE ${SKIP_FILE} "${reason}\n")
endfunction()

set(sass_tools_found TRUE)
if(NOT CUOBJDUMP OR NOT NVDISASM)
  string(CONCAT reason "cuobjdump or nvdisasm was not found when the build was configured "
         "(CUOBJDUMP=${CUOBJDUMP}, NVDISASM=${NVDISASM}): put both on PATH (.ci/run shows how) "
         "and configure again")
  skip("${reason}")
  set(sass_tools_found FALSE)
else()
  # cuobjdump looks for nvdisasm in this directory before PATH: use the one that was found.
  get_filename_component(nvdisasm_dir ${NVDISASM} DIRECTORY)
  set(ENV{NVDISASM_PATH} ${nvdisasm_dir})
endif()

set(includes "")
string(REPLACE "|" ";" include_list "${INCLUDE_DIRS}")
foreach(dir IN LISTS include_list)
  list(APPEND includes -I${dir})
endforeach()

# Opcodes (the part before the first dot) that read or write global, local or shared memory; LDC
# and ULDC are left out: they read the constant bank, where every kernel's parameters live.
set(memory_opcodes LD ST LDG STG LDL STL LDS STS LDSM STSM LDGSTS ATOM ATOMG ATOMS RED REDG
                   UBLKCP UBLKRED UTMALDG UTMASTG UTMAREDG)

# kernels_of(<source> <out_var>): compiles <source> to an sm_90 cubin in WORK_DIR (with
# --extended-lambda) and sets <out_var> to a list of its kernels, each its mangled name, a newline,
# then its SASS, with the ';' that ends every instruction (CMake's list separator) dropped. Where
# cuobjdump does not run, it calls skip() and sets <out_var> to "" and sass_tools_found to FALSE.
function(kernels_of source out_var)
  get_filename_component(stem ${source} NAME_WE)
  set(cubin ${WORK_DIR}/${stem}.cubin)
  execute_process(COMMAND ${NVCC} -std=c++17 -O3 -arch=sm_90 --extended-lambda ${includes} -cubin ${source} -o ${cubin}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc -cubin ${source} failed:\n${err}")
  endif()
  execute_process(COMMAND ${CUOBJDUMP} -sass ${cubin} RESULT_VARIABLE rc OUTPUT_VARIABLE sass ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    skip("${CUOBJDUMP} -sass does not run (${rc}) ${err}")
    set(sass_tools_found FALSE PARENT_SCOPE)
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE ";" "" sass "${sass}")
  string(REPLACE "Function : " ";" kernels "${sass}")
  list(REMOVE_AT kernels 0)
  set(${out_var} "${kernels}" PARENT_SCOPE)
endfunction()
