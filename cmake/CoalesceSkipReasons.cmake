# After ctest's summary, says why each skipped test was skipped. ctest reports a test that exits
# with its SKIP_RETURN_CODE (77 here) as "***Skipped" and lists it under "The following tests did
# not run", with no reason; every skip path of coalesce's tests and examples prints one line
#   SKIPPED: <reason>
# before it exits 77 (no CUDA driver, no device, no counter permission, no cuobjdump...). This
# script finds those lines in the log of the run that just ended and prints
#   Why tests were skipped:
#     <test>, <test>...:
#       <reason>
# one entry per distinct reason, or nothing when nothing was skipped.
#
# The top-level CMakeLists.txt writes <build>/CTestCustom.cmake, which runs this script through
# CTEST_CUSTOM_POST_TEST, so ctest --test-dir <build>, ctest --preset and cmake --workflow all
# print it. Usage: cmake -DBUILD_DIR=<build> -P CoalesceSkipReasons.cmake
#
# While the post-test command runs, ctest is still writing the run's log as
# Testing/Temporary/LastTest.log.tmp (LastTest_<date>.log.tmp in dashboard mode) and renames it
# when it exits; LastTest.log is then the previous run's. The log holds every test's output in
# full, but it reads "Test Passed." for a skipped test, hence the SKIPPED line.
#
# A post-test command that fails makes ctest print "Problem running command" and fail the run, so
# this script never fails: whatever it cannot read, it says nothing about.
cmake_minimum_required(VERSION 3.25)

if(NOT BUILD_DIR)
  set(BUILD_DIR "${CMAKE_CURRENT_BINARY_DIR}")  # with -P: the working directory, where ctest runs it
endif()
set(logs_dir "${BUILD_DIR}/Testing/Temporary")

# The log being written now is the newest .tmp; without one (a ctest that has closed its log), the
# newest .log.
set(log "")
foreach(pattern "LastTest*.log.tmp" "LastTest*.log")
  file(GLOB candidates LIST_DIRECTORIES false "${logs_dir}/${pattern}")
  foreach(candidate IN LISTS candidates)
    if(NOT log OR candidate IS_NEWER_THAN log)
      set(log "${candidate}")
    endif()
  endforeach()
  if(log)
    break()
  endif()
endforeach()
if(NOT log)
  return()
endif()

file(READ "${log}" text)
# Semicolons and square brackets would split or group the list below: stand-ins until printing.
string(ASCII 1 semicolon)
string(ASCII 2 open_bracket)
string(ASCII 3 close_bracket)
string(REPLACE ";" "${semicolon}" text "${text}")
string(REPLACE "[" "${open_bracket}" text "${text}")
string(REPLACE "]" "${close_bracket}" text "${text}")
string(REPLACE "\r" "" text "${text}")

# The lines that matter, in order: a test's name, the start and end of its output, SKIPPED lines
# inside it, and its result.
string(REGEX MATCHALL
  "\n[0-9]+/[0-9]+ Test: [^\n]*|\nOutput:\n|\n<end of output>\n|\nSKIPPED: [^\n]*|\nTest Passed\\.|\nTest Failed"
  tokens "${text}")

set(test "")
set(in_output FALSE)
set(reasons "")     # the distinct reasons, in the order they first appear
set(reason_count 0)
foreach(token IN LISTS tokens)
  string(STRIP "${token}" token)
  if(token MATCHES "^[0-9]+/[0-9]+ Test: (.*)$")
    set(test "${CMAKE_MATCH_1}")
    set(in_output FALSE)
    set(test_reasons "")
  elseif(token STREQUAL "Output:")
    set(in_output TRUE)
  elseif(token STREQUAL "<end of output>")
    set(in_output FALSE)
  elseif(in_output AND test AND token MATCHES "^SKIPPED: (.*)$")
    string(STRIP "${CMAKE_MATCH_1}" reason)
    if(NOT reason STREQUAL "")
      list(APPEND test_reasons "${reason}")
    endif()
  elseif(token STREQUAL "Test Passed." AND test AND test_reasons)
    # Skipped (exit 77 reads as passed here) and said why. Several lines from one test: all of them.
    list(REMOVE_DUPLICATES test_reasons)
    list(JOIN test_reasons "${semicolon} " reason)
    list(FIND reasons "${reason}" index)
    if(index EQUAL -1)
      list(APPEND reasons "${reason}")
      set(index ${reason_count})
      math(EXPR reason_count "${reason_count} + 1")
    endif()
    list(APPEND tests_${index} "${test}")
    list(SORT tests_${index})
    set(test "")
  elseif(token MATCHES "^Test (Passed|Failed)")
    set(test "")  # passed without skipping, or failed: ctest has said all there is to say
  endif()
endforeach()

if(reason_count EQUAL 0)
  return()
endif()
set(report "\nWhy tests were skipped:")  # a blank line first, as ctest sets its lists apart
math(EXPR last "${reason_count} - 1")
foreach(index RANGE ${last})
  list(GET reasons ${index} reason)
  list(JOIN tests_${index} ", " names)
  string(APPEND report "\n  ${names}:\n    ${reason}")
endforeach()
string(REPLACE "${semicolon}" ";" report "${report}")
string(REPLACE "${open_bracket}" "[" report "${report}")
string(REPLACE "${close_bracket}" "]" report "${report}")
# ctest shows this command's output, standard output and error merged; one message keeps it whole.
message("${report}")
