# The readme.cmake_snippets test, run with cmake -P: the CMake that README.md's "Install" and the
# guide docs/getting-started.md show is the CMake the package tests build
# (tests/package/consumer_<way>/CMakeLists.txt), so the two cannot drift apart. Every ```cmake
# block of those files carries a marker directly before its fence
# (tests/readme/readme_snippets.cmake reads it):
#   <!-- snippet lines of: <file> -->      every line of the block is a line of <file> (a path from
#                                          the repository's top), and every line of <file> that
#                                          names coalesce is a line of the block
#   <!-- snippet not checked: <reason> -->
# Before a line of text instead of a fence, "lines of" checks that line's code spans that are
# CMake commands, one way (each is a line of <file>): the vendored copy's FetchContent_Declare.
#
# Lines are compared with the blanks around them trimmed, and otherwise as written. That includes
# FetchContent's GIT_REPOSITORY: consumer_fetchcontent/CMakeLists.txt keeps the README's URL, and
# tests/package/run_consumer.cmake replaces it with this repository when the test runs, which must
# be offline (it fails when the URL is not there to replace). The URL itself is checked here: it
# must be the project's HOMEPAGE_URL followed by .git.
#
# Variables: FILES (the Markdown files, comma-separated paths from the repository's top), SOURCE_DIR
# (the repository's top), HOMEPAGE_URL.
cmake_minimum_required(VERSION 3.25)
foreach(var FILES SOURCE_DIR HOMEPAGE_URL)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_cmake_snippets.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "," ";" markdown_files "${FILES}")
set(readme_errors "")

# trimmed_lines(<out> <encoded lines>...): the lines with surrounding blanks trimmed, empty ones left out.
function(trimmed_lines out)
  set(result "")
  foreach(line IN LISTS ARGN)
    string(STRIP "${line}" line)
    if(NOT line STREQUAL "")
      list(APPEND result "${line}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(summary "")
set(checked 0)
foreach(README_NAME IN LISTS markdown_files)
  set(README ${SOURCE_DIR}/${README_NAME})
  if(NOT EXISTS ${README})
    message(FATAL_ERROR "check_cmake_snippets.cmake: ${README_NAME} does not exist")
  endif()
  include(${CMAKE_CURRENT_LIST_DIR}/readme_snippets.cmake)
  if(snippet_count EQUAL 0)
    continue()
  endif()
  foreach(i RANGE 1 ${snippet_count})
    set(kind "${snippet_${i}_kind}")
    set(at ${snippet_${i}_line})
    if(NOT kind STREQUAL "cmake" AND NOT (kind STREQUAL "inline" AND snippet_${i}_entry_count GREATER 0))
      continue()
    endif()

    set(file "")
    set(not_checked "")
    if(snippet_${i}_entry_count GREATER 0)
      foreach(j RANGE 1 ${snippet_${i}_entry_count})
        set(key "${snippet_${i}_entry_${j}_key}")
        if(key STREQUAL "lines of")
          set(file "${snippet_${i}_entry_${j}_value}")
        elseif(key STREQUAL "not checked")
          set(not_checked "${snippet_${i}_entry_${j}_value}")
        elseif(kind STREQUAL "cmake")
          readme_error(${snippet_${i}_entry_${j}_line} "a ```cmake block's marker knows 'lines of' and 'not checked', not '${key}'")
        endif()
      endforeach()
    endif()
    if(NOT not_checked STREQUAL "")
      string(APPEND summary "\n  ${README_NAME}:${at}: not checked: ${not_checked}")
      continue()
    elseif(file STREQUAL "")
      if(kind STREQUAL "cmake")
        readme_error(${at} "this ```cmake block needs a marker before its fence: "
          "<!-- snippet lines of: tests/package/consumer_<way>/CMakeLists.txt --> or <!-- snippet not checked: <why> -->")
      endif()
      continue()
    endif()
    if(NOT EXISTS "${SOURCE_DIR}/${file}")
      readme_error(${snippet_${i}_marker_line} "lines of: ${file} does not exist")
      continue()
    endif()

    # The file's lines, encoded as the README's are, so that the two compare as written.
    file(READ "${SOURCE_DIR}/${file}" text)
    readme_encode(text)
    string(REPLACE "\n" ";" file_lines "${text}")
    trimmed_lines(file_lines ${file_lines})

    if(kind STREQUAL "inline")
      set(snippet_lines "")
      foreach(span IN LISTS snippet_${i}_lines)
        if(span MATCHES "^[A-Za-z_][A-Za-z0-9_]*\\(.*\\)$")  # a CMake command
          list(APPEND snippet_lines "${span}")
        endif()
      endforeach()
      if(NOT snippet_lines)
        readme_error(${at} "the marker above says lines of ${file}, but this line has no code span that is a CMake command")
        continue()
      endif()
    else()
      trimmed_lines(snippet_lines ${snippet_${i}_lines})
    endif()

    foreach(line IN LISTS snippet_lines)
      list(FIND file_lines "${line}" found)
      if(found EQUAL -1)
        readme_decode(line)
        readme_error(${at} "'${line}' is not a line of ${file}")
      endif()
      if(line MATCHES "GIT_REPOSITORY +([^ ]+)" AND NOT CMAKE_MATCH_1 STREQUAL "${HOMEPAGE_URL}.git")
        readme_error(${at} "GIT_REPOSITORY ${CMAKE_MATCH_1} is not the project's URL with .git, ${HOMEPAGE_URL}.git")
      endif()
    endforeach()
    if(kind STREQUAL "cmake")
      foreach(line IN LISTS file_lines)
        list(FIND snippet_lines "${line}" found)
        if(found EQUAL -1 AND line MATCHES "coalesce")
          readme_decode(line)
          readme_error(${at} "${file} has '${line}', which this ```cmake block does not show")
        endif()
      endforeach()
    endif()
    math(EXPR checked "${checked} + 1")
    list(LENGTH snippet_lines count)
    string(APPEND summary "\n  ${README_NAME}:${at}: ${count} line(s), each a line of ${file}")
  endforeach()
endforeach()

if(readme_errors)
  set(report "")
  foreach(error IN LISTS readme_errors)
    readme_decode(error)
    string(APPEND report "\n${error}")
  endforeach()
  message("The CMake snippets of ${FILES} and the package tests' consumers differ:${report}")  # as written
  message(FATAL_ERROR "readme.cmake_snippets failed")
endif()
if(checked EQUAL 0)
  message(FATAL_ERROR "${FILES}: no ```cmake block with a marker to check")
endif()
message(STATUS "${checked} CMake snippet(s) of ${FILES} match the package tests' consumers:${summary}")
