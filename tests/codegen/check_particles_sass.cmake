# The codegen.particles test, run with cmake -P: a kernel on a coalesce::soa_view must touch
# memory exactly like the same kernel on plain pointers. Compiles three units to sm_90 cubins and
# lists each kernel's global, local and shared memory instructions from its SASS, in order:
#   particles_soa.cu       the kernel on a soa_view<Particle>: its list must equal plain's, and
#                          ptxas must report no stack frame and no spills for it;
#   particles_plain.cu     the same kernel on six plain pointers;
#   particles_restrict.cu  the same on __restrict__ pointers: printed with how it differs, never
#                          asserted, because a soa_view cannot promise that its columns do not alias.
# SASS needs cuobjdump, which runs nvdisasm. When either was not found or does not run, the script
# writes why to SKIP_FILE and ends: cmake -P cannot choose its exit code, so the test's sh
# wrapper turns that file into exit 77, which ctest reports as skipped.
# Variables: NVCC, CUOBJDUMP, NVDISASM, INCLUDE_DIRS (|-separated), SOURCE_DIR, WORK_DIR, SKIP_FILE.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/CoalesceText.cmake)  # pad()
foreach(var NVCC CUOBJDUMP NVDISASM INCLUDE_DIRS SOURCE_DIR WORK_DIR SKIP_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_particles_sass.cmake: ${var} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/sass_tools.cmake)  # skip(), includes, memory_opcodes
if(NOT sass_tools_found)
  return()
endif()

set(no_frame "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")

foreach(unit soa plain restrict)
  set(cubin ${WORK_DIR}/particles_${unit}.cubin)
  execute_process(COMMAND ${NVCC} -std=c++17 -O3 -arch=sm_90 ${includes} -cubin -Xptxas -v
                          ${SOURCE_DIR}/particles_${unit}.cu -o ${cubin}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE ptxas_log ERROR_VARIABLE ptxas_log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc -cubin particles_${unit}.cu failed:\n${ptxas_log}")
  endif()
  string(REGEX MATCHALL "[0-9]+ bytes stack frame, [0-9]+ bytes spill stores, [0-9]+ bytes spill loads"
         ${unit}_frames "${ptxas_log}")

  execute_process(COMMAND ${CUOBJDUMP} -sass ${cubin} RESULT_VARIABLE rc OUTPUT_VARIABLE sass ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    skip("${CUOBJDUMP} -sass does not run (${rc}) ${err}")
    return()
  endif()
  # Every SASS instruction ends with ';', CMake's list separator: drop them before matching.
  string(REPLACE ";" "" sass "${sass}")
  string(REGEX MATCHALL "Function : [^\n]+" functions "${sass}")
  list(LENGTH functions function_count)
  if(NOT function_count EQUAL 1)
    message(FATAL_ERROR "particles_${unit}.cu should hold one kernel; its SASS has ${function_count}: ${functions}")
  endif()
  # An instruction line: /*address*/, an optional predicate (@P0, @!PT, @UP1), the opcode with
  # its dot-qualifiers (LDG.E.CONSTANT, STG.E.128), then operands.
  string(REGEX MATCHALL "/\\*[0-9a-f]+\\*/ +(@!?U?P[0-9T] +)?[A-Z0-9]+(\\.[A-Z0-9_]+)*" instructions "${sass}")
  set(${unit}_memory "")
  foreach(instruction IN LISTS instructions)
    string(REGEX REPLACE "^.* " "" opcode "${instruction}")
    string(REGEX REPLACE "\\..*" "" base "${opcode}")
    if(base IN_LIST memory_opcodes)
      list(APPEND ${unit}_memory ${opcode})
    endif()
  endforeach()
endforeach()

# The three lists side by side, rows where soa_view and plain pointers differ marked.
list(LENGTH soa_memory soa_count)
list(LENGTH plain_memory plain_count)
list(LENGTH restrict_memory restrict_count)
set(rows ${soa_count})
foreach(count ${plain_count} ${restrict_count})
  if(count GREATER rows)
    set(rows ${count})
  endif()
endforeach()
set(table "memory instructions of the particle update's kernel, in SASS order:\n")
pad("  #" 6 line)
foreach(column "soa_view" "plain pointers" "__restrict__")
  pad("${column}" 20 cell)
  string(APPEND line "${cell}")
endforeach()
string(REGEX REPLACE " +$" "" line "${line}")
string(APPEND table "${line}\n")
set(soa_matches_plain TRUE)
if(rows GREATER 0)
  math(EXPR last "${rows} - 1")
  foreach(row RANGE ${last})
    math(EXPR number "${row} + 1")
    pad("  ${number}" 6 line)
    foreach(unit soa plain restrict)
      set(${unit}_op "")
      if(row LESS ${unit}_count)
        list(GET ${unit}_memory ${row} ${unit}_op)
      endif()
      pad("${${unit}_op}" 20 cell)
      string(APPEND line "${cell}")
    endforeach()
    if(NOT soa_op STREQUAL plain_op)
      set(soa_matches_plain FALSE)
      string(APPEND line "<- soa_view differs")
    endif()
    string(REGEX REPLACE " +$" "" line "${line}")
    string(APPEND table "${line}\n")
  endforeach()
endif()
message("${table}")
foreach(unit soa plain restrict)
  message("ptxas, particles_${unit}.cu: ${${unit}_frames}")
endforeach()

# Printed, not asserted: how many of each instruction the __restrict__ kernel has where plain
# pointers differ (its vx, vy, vz loads go through the read-only path: LDG.E.CONSTANT).
function(count_of list_name value out_var)
  set(count 0)
  foreach(item IN LISTS ${list_name})
    if(item STREQUAL value)
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  set(${out_var} ${count} PARENT_SCOPE)
endfunction()
set(restrict_differences "")
set(opcodes ${restrict_memory} ${plain_memory})
list(REMOVE_DUPLICATES opcodes)
foreach(opcode IN LISTS opcodes)
  count_of(restrict_memory ${opcode} in_restrict)
  count_of(plain_memory ${opcode} in_plain)
  if(NOT in_restrict EQUAL in_plain)
    list(APPEND restrict_differences "${in_restrict} ${opcode} where plain pointers have ${in_plain}")
  endif()
endforeach()
if(NOT restrict_differences AND NOT restrict_memory STREQUAL plain_memory)
  set(restrict_differences "the same instructions in another order")
endif()
if(restrict_differences)
  list(JOIN restrict_differences ", " restrict_differences)
  message("__restrict__ kernel (printed, not checked: a soa_view cannot promise that its columns do not "
          "alias): ${restrict_differences}")
else()
  message("__restrict__ kernel: the plain-pointer kernel's memory instructions")
endif()

if(NOT soa_matches_plain)
  message(FATAL_ERROR "the soa_view kernel's memory instructions differ from the plain-pointer kernel's "
                      "(rows marked above): the view costs instructions")
endif()
if(NOT soa_frames)
  message(FATAL_ERROR "ptxas -v printed no stack frame line for the soa_view kernel")
endif()
foreach(frame IN LISTS soa_frames)
  if(NOT frame STREQUAL no_frame)
    message(FATAL_ERROR "the soa_view kernel has a stack frame or spills: ${frame}")
  endif()
endforeach()
message("soa_view kernel: the plain-pointer kernel's ${soa_count} memory instructions, no stack frame, no spills")
