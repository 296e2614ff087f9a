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
