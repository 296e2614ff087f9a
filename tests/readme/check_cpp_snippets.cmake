# The readme.cpp_snippets test, run with cmake -P: every ```cpp block of README.md and of every
# guide in docs/ (docs/*.md) compiles as written, in a downstream project that brings coalesce in
# with add_subdirectory, as the README's "Install" shows, with nvcc and warnings as errors. The
# files are found and read when the test runs, so an edit to one, or a new guide, is checked
# without configuring again.
#
# Each block becomes one .cu file of its own, so its #include lines must be enough for it, and one
# OBJECT library (compiled, never linked or run: no GPU needed). #line directives point every
# diagnostic at the Markdown file, and a failure names the file and line of the block that failed.
#
# A block without a marker is compiled at namespace scope, as is. A fragment says what it needs
# in a marker directly before its fence (tests/readme/readme_snippets.cmake reads it):
#   <!-- snippet
#   before: <code>           namespace-scope code placed before the block, such as the declarations
#                            of names the block uses (repeatable)
#   from `<text>`: <head>    from the first line that starts with <text> (leading blanks aside) on,
#                            the block is the body of "<head> { ... }": a function, a __global__
#                            kernel, or TEST_CASE("...") (repeatable: each from starts a new body;
#                            the lines above the first stay at namespace scope)
#   link: <targets>          targets the block's object links besides coalesce::coalesce, as the
#                            README tells a user to (coalesce::testing)
#   not compiled: <reason>   the block is not compiled, and the test prints why
#   -->
# Inside a body, an #include line goes to the top of the file, where the reader would put it (a
# header included inside a function does not compile). A body whose head is TEST_CASE(...) is in a
# Catch2 test file: Catch2's headers come first (Catch2 3, or 2.x), and with a Catch2 older than 3.3,
# which has no SKIP, SKIP(reason) ends the test case with a warning, as Catch2 3's does with a skip.
# Unused variables are no error: a fragment's variables are used by code it leaves out.
#
# Variables: README (README.md's path), DOCS_DIR (the guides' directory), COALESCE_SOURCE_DIR,
# WORK_DIR, GENERATOR, CXX_COMPILER, CUDA_COMPILER, CUDA_HOST_COMPILER (may be empty),
# CUDA_ARCHITECTURES (comma-separated), CATCH2_DIR (may be empty).
cmake_minimum_required(VERSION 3.25)
foreach(var README DOCS_DIR COALESCE_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER CUDA_COMPILER CUDA_ARCHITECTURES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_cpp_snippets.cmake: ${var} is not set")
  endif()
endforeach()
# README.md first, then the guides in name order; each with the name its messages give it.
file(GLOB guides LIST_DIRECTORIES false RELATIVE ${COALESCE_SOURCE_DIR} ${DOCS_DIR}/*.md)
list(SORT guides)
set(markdown_files ${README} ${guides})
set(readme_errors "")

# fail_on_errors(<what>): fails the test with every problem found so far, if there is one.
function(fail_on_errors what)
  if(readme_errors)
    set(report "")
    foreach(error IN LISTS readme_errors)
      readme_decode(error)
      string(APPEND report "\n${error}")
    endforeach()
    message("${what}:${report}")  # as written: FATAL_ERROR would reflow it
    message(FATAL_ERROR "readme.cpp_snippets failed")
  endif()
endfunction()

set(src ${WORK_DIR}/src)
set(build ${WORK_DIR}/build)
file(MAKE_DIRECTORY ${src})

# write_if_changed(<file> <content>): leaves an unchanged file alone, so that a build after an edit
# to one block compiles that block only.
function(write_if_changed file content)
  if(EXISTS ${file})
    file(READ ${file} old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE ${file} "${content}")
endfunction()

set(catch2_preamble [[
// A Catch2 test file: TEST_CASE, REQUIRE, SKIP and Approx as Catch2 3 has them, also with Catch2 2.x.
#if __has_include(<catch2/catch_test_macros.hpp>)
#  include <catch2/catch_approx.hpp>
#  include <catch2/catch_test_macros.hpp>
using Catch::Approx;
#else
#  include <catch2/catch.hpp>
#endif
#ifndef SKIP  // Catch2 before 3.3: end the test case with a warning instead of a skip
#  define SKIP(...) do { WARN(__VA_ARGS__); return; } while (false)
#endif
]])

set(targets "")       # one OBJECT library per compiled block: readme_block_<n>, n = 1, 2...
set(summary "")
set(needs_catch2 FALSE)
set(cmake_lists "")
set(files_read "")
foreach(markdown IN LISTS markdown_files)
  if(IS_ABSOLUTE "${markdown}")
    file(RELATIVE_PATH README_NAME ${COALESCE_SOURCE_DIR} ${markdown})
    set(README ${markdown})
  else()
    set(README_NAME ${markdown})
    set(README ${COALESCE_SOURCE_DIR}/${markdown})
  endif()
  include(${CMAKE_CURRENT_LIST_DIR}/readme_snippets.cmake)
  list(APPEND files_read ${README_NAME})
  if(snippet_count EQUAL 0)
    continue()
  endif()
  foreach(i RANGE 1 ${snippet_count})
    if(NOT snippet_${i}_kind STREQUAL "cpp")
      continue()
    endif()
    set(fence ${snippet_${i}_line})
    set(at_fence "${README_NAME}:${fence}")

    # The marker: what comes before the block, where its bodies start, what it links.
    set(before "")
    set(from_count 0)
    set(links "")
    set(not_compiled "")
    if(snippet_${i}_entry_count GREATER 0)
      foreach(j RANGE 1 ${snippet_${i}_entry_count})
        set(key "${snippet_${i}_entry_${j}_key}")
        set(value "${snippet_${i}_entry_${j}_value}")
        set(at ${snippet_${i}_entry_${j}_line})
        if(key STREQUAL "before")
          string(APPEND before "#line ${at} \"${README}\"\n${value}\n")
        elseif(key MATCHES "^from `(.+)`$")
          math(EXPR from_count "${from_count} + 1")
          set(from_${from_count}_text "${CMAKE_MATCH_1}")
          set(from_${from_count}_head "${value}")
          set(from_${from_count}_line ${at})
        elseif(key STREQUAL "link")
          string(REGEX REPLACE "[ \t\n]+" ";" value "${value}")
          list(APPEND links ${value})
        elseif(key STREQUAL "not compiled")
          set(not_compiled "${value}")
        else()
          readme_error(${at} "a ```cpp block's marker knows before, from `<text>`, link and not compiled, not '${key}'")
        endif()
      endforeach()
    endif()
    if(NOT not_compiled STREQUAL "")
      string(APPEND summary "\n  ${at_fence}: not compiled: ${not_compiled}")
      continue()
    endif()

    # Which body each line of the block belongs to: 0 is namespace scope, k the k-th from.
    set(segment_of_line "")
    set(segment 0)
    set(k 0)
    foreach(raw IN LISTS snippet_${i}_lines)
      math(EXPR k "${k} + 1")
      math(EXPR next "${segment} + 1")
      if(next LESS_EQUAL from_count)
        set(text "${raw}")
        readme_decode(text)
        string(REGEX REPLACE "^[ \t]+" "" text "${text}")
        string(FIND "${text}" "${from_${next}_text}" position)
        if(position EQUAL 0)
          set(segment ${next})
        endif()
      endif()
      list(APPEND segment_of_line ${segment})
    endforeach()
    if(segment LESS from_count)
      math(EXPR missing "${segment} + 1")
      readme_error(${from_${missing}_line} "no line of the ```cpp block at ${at_fence} starts with "
        "`${from_${missing}_text}`, after the line where the body above it starts")
      continue()
    endif()

    # The source: Catch2 if a body is a test case, the bodies' #includes, before, then the block.
    set(block_catch2 FALSE)
    set(includes "")
    set(body "")
    set(k 0)
    set(open_segment 0)
    foreach(raw IN LISTS snippet_${i}_lines)
      math(EXPR k "${k} + 1")
      math(EXPR line "${fence} + ${k}")
      math(EXPR index "${k} - 1")
      list(GET segment_of_line ${index} segment)
      set(text "${raw}")
      readme_decode(text)
      if(NOT segment EQUAL open_segment)
        if(open_segment GREATER 0)
          string(APPEND body "}\n")
        endif()
        set(head "${from_${segment}_head}")
        if(head MATCHES "^TEST_CASE")
          set(needs_catch2 TRUE)
          set(block_catch2 TRUE)
        endif()
        string(APPEND body "#line ${from_${segment}_line} \"${README}\"\n${head} {\n#line ${line} \"${README}\"\n")
        set(open_segment ${segment})
      elseif(k EQUAL 1)
        string(APPEND body "#line ${line} \"${README}\"\n")
      endif()
      if(segment GREATER 0 AND text MATCHES "^[ \t]*#[ \t]*include")
        string(APPEND includes "#line ${line} \"${README}\"\n${text}\n")
        set(text "")  # the line stays, empty, so that the lines below keep their numbers
      endif()
      string(APPEND body "${text}\n")
    endforeach()
    if(open_segment GREATER 0)
      string(APPEND body "}\n")
    endif()

    set(source "// ${at_fence} as the readme.cpp_snippets test compiles it (tests/readme/check_cpp_snippets.cmake).\n")
    if(block_catch2)
      string(APPEND source "${catch2_preamble}")
      list(APPEND links Catch2::Catch2)
    endif()
    string(APPEND source "${includes}${before}${body}")
    list(LENGTH targets n)
    math(EXPR n "${n} + 1")
    write_if_changed(${src}/block_${n}.cu "${source}")
    list(APPEND targets readme_block_${n})
    set(block_${n}_fence ${at_fence})
    list(PREPEND links coalesce::coalesce)
    list(REMOVE_DUPLICATES links)
    list(JOIN links " " links)
    string(APPEND cmake_lists "
add_library(readme_block_${n} OBJECT block_${n}.cu)  # ${at_fence}
target_link_libraries(readme_block_${n} PRIVATE ${links})
target_compile_options(readme_block_${n} PRIVATE \${snippet_warnings})
")
  endforeach()
endforeach()
fail_on_errors("the ```cpp snippets of README.md and docs/*.md")
if(NOT targets)
  message(FATAL_ERROR "README.md and docs/*.md have no ```cpp block to compile")
endif()

# --- the downstream project: coalesce as a subdirectory, as the README's "Install" shows --------
set(project "cmake_minimum_required(VERSION 3.25)
project(readme_snippets LANGUAGES CXX CUDA)

add_subdirectory(third_party/coalesce)
")
if(needs_catch2)
  string(APPEND project "find_package(Catch2 REQUIRED)\n")
endif()
string(APPEND project "
# coalesce's own warning flags, errors included; an unused variable (nvcc's 177) is none here.
set(snippet_warnings -Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror --diag-suppress=177)
${cmake_lists}")
write_if_changed(${src}/CMakeLists.txt "${project}")
# A link to this source tree rather than a copy, which could hold build directories (this test's
# among them); a file(REMOVE_RECURSE) of the work directory removes the link, not the tree.
if(NOT IS_SYMLINK ${src}/third_party/coalesce)
  file(MAKE_DIRECTORY ${src}/third_party)
  file(CREATE_LINK ${COALESCE_SOURCE_DIR} ${src}/third_party/coalesce SYMBOLIC)
endif()

# run(<step> <command>...): fails the test, with the command's output, unless it exits 0.
function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readme.cpp_snippets: ${step} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

string(TIMESTAMP start "%s")
# The architectures of the build that runs the tests, through CUDAARCHS because a list does not
# survive a -D in a list of arguments.
string(REPLACE "," ";" architectures "${CUDA_ARCHITECTURES}")
set(ENV{CUDAARCHS} "${architectures}")
set(configure ${CMAKE_COMMAND} -S ${src} -B ${build} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
if(CUDA_HOST_COMPILER)
  list(APPEND configure -DCMAKE_CUDA_HOST_COMPILER=${CUDA_HOST_COMPILER})
endif()
if(CATCH2_DIR)
  list(APPEND configure -DCatch2_DIR=${CATCH2_DIR})
endif()
run("configure the downstream project" ${configure})

execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} RESULT_VARIABLE rc OUTPUT_VARIABLE build_log ERROR_VARIABLE build_log)
if(NOT rc EQUAL 0)
  # Which blocks: each target on its own (those that compiled are up to date).
  set(report "")
  foreach(target IN LISTS targets)
    string(REGEX REPLACE "^readme_block_" "" n "${target}")
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} --target ${target}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      string(APPEND report "\n${block_${n}_fence}: this ```cpp block does not compile as written "
        "(generated source: ${src}/block_${n}.cu):\n${out}\n")
    endif()
  endforeach()
  if(report STREQUAL "")
    set(report "\nthe build failed, but every block compiles on its own:\n${build_log}")
  endif()
  message("readme.cpp_snippets:${report}")
  message(FATAL_ERROR "readme.cpp_snippets failed")
endif()
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")

foreach(target IN LISTS targets)
  string(REGEX REPLACE "^readme_block_" "" n "${target}")
  string(APPEND summary "\n  ${block_${n}_fence}: compiles")
endforeach()
list(LENGTH targets compiled)
list(JOIN files_read ", " files_read)
message(STATUS "${compiled} ```cpp blocks compile (configure and build: ${seconds} s), read from ${files_read}:${summary}")
