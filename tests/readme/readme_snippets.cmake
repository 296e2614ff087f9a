# Reads the snippets of one Markdown file, README.md or a guide in docs/, for the readme tests
# (included by check_cpp_snippets.cmake and check_cmake_snippets.cmake once per file, with README
# set to the file's path and README_NAME to the name its messages give it, such as
# docs/layouts.md; README.md without one).
#
# A snippet is a fenced block (```cpp, ```cmake, ...), or the code spans of one line. A snippet
# may carry a marker: an HTML comment, which GitHub does not render, directly before it (on the
# line above the fence), whose text starts with "snippet" and goes on with entries "key: value",
# one a line, either on the comment's first line or on lines of their own:
#   <!-- snippet lines of: tests/package/consumer_find_package/CMakeLists.txt -->
#   <!-- snippet
#   before: #include <vector>
#   from `advance<<<`: void run(unsigned blocks)
#   -->
# A line that starts with white space continues the entry above it (joined with a newline). The
# keys are each test's business; this file only splits them. A marker that is followed by a line
# that is neither a fence nor text with code spans is an error, as is a fence that never closes.
#
# Sets:
#   snippet_count
#   snippet_<i>_kind          the fence's language (cpp, cmake, sh, {toctree} for a MyST directive,
#                             or "" for a bare fence), or "inline" for the code spans of a line
#                             that follows a marker
#   snippet_<i>_line          the file's line of the opening fence (of the line, for inline)
#   snippet_<i>_lines         the block's lines, or the line's code spans, as a list of encoded
#                             strings: readme_decode() gives a line back as written
#   snippet_<i>_marker_line   README line where the marker starts, "" without a marker
#   snippet_<i>_entry_count   the marker's entries, and for each j of them:
#   snippet_<i>_entry_<j>_key, _value, _line   (value decoded, line of the entry in the file)
#   readme_errors             "<name>:<line>: <what is wrong>" messages, a list of encoded strings;
#                             the messages of files read before are kept
#
# CMake lists split on ';' and group on '[' ']', both common in C++: every line is kept with
# those three characters replaced by control characters until readme_decode().
cmake_minimum_required(VERSION 3.25)

string(ASCII 1 readme_semicolon)
string(ASCII 2 readme_open_bracket)
string(ASCII 3 readme_close_bracket)

# readme_encode(<var>): the inverse of readme_decode, carriage returns dropped.
function(readme_encode var)
  set(text "${${var}}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE ";" "${readme_semicolon}" text "${text}")
  string(REPLACE "[" "${readme_open_bracket}" text "${text}")
  string(REPLACE "]" "${readme_close_bracket}" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# readme_require(<script> <variable>...): fails unless every variable is set and not empty.
function(readme_require script)
  foreach(var IN LISTS ARGN)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
      message(FATAL_ERROR "${script}: ${var} is not set")
    endif()
  endforeach()
endfunction()

function(readme_decode var)
  set(text "${${var}}")
  string(REPLACE "${readme_semicolon}" ";" text "${text}")
  string(REPLACE "${readme_open_bracket}" "[" text "${text}")
  string(REPLACE "${readme_close_bracket}" "]" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# readme_error(<line> <message>...): records a problem found at line <line> of the file being
# read (README_NAME, or README.md). A function,
# not a macro, which would expand a ${...} in the message; ARGV<n>, not ARGN, which would drop
# the message's semicolons.
function(readme_error line)
  if(README_NAME)
    set(text "${README_NAME}:${line}: ")
  else()
    set(text "README.md:${line}: ")
  endif()
  math(EXPR last "${ARGC} - 1")
  foreach(n RANGE 1 ${last})
    string(APPEND text "${ARGV${n}}")
  endforeach()
  string(REPLACE ";" "${readme_semicolon}" text "${text}")
  list(APPEND readme_errors "${text}")
  set(readme_errors "${readme_errors}" PARENT_SCOPE)
endfunction()

readme_require(readme_snippets.cmake README)
file(READ "${README}" readme_text)
readme_encode(readme_text)
# An empty line must stay an element of its own: no line is left empty.
string(REPLACE "\n" " ;" readme_lines "${readme_text}")

set(snippet_count 0)
if(NOT DEFINED readme_errors)
  set(readme_errors "")
endif()
set(line_number 0)
set(state text)          # text, marker or fence
set(marker_start "")     # where the marker being read (or last read) starts
set(marker_end -1)       # the line where it ended: it belongs to the snippet on the next line
set(marker_entries "")   # its entries so far, each "<line>:<key>:<value>", encoded

foreach(raw IN LISTS readme_lines)
  math(EXPR line_number "${line_number} + 1")
  string(REGEX REPLACE " $" "" line "${raw}")

  if(state STREQUAL "fence")
    if(line MATCHES "^```[ \t]*$")
      set(state text)
    else()
      list(APPEND snippet_${snippet_count}_lines "${line}")
    endif()
    continue()
  endif()

  if(state STREQUAL "marker")
    set(content "${line}")
  elseif(line MATCHES "^<!-- snippet(.*)$")
    set(state marker)
    set(marker_start ${line_number})
    set(marker_entries "")
    set(content "${CMAKE_MATCH_1}")
  else()
    set(content "")
  endif()

  if(state STREQUAL "marker")
    set(closes FALSE)
    if(content MATCHES "^(.*)-->[ \t]*$")
      set(content "${CMAKE_MATCH_1}")
      set(closes TRUE)
    endif()
    string(STRIP "${content}" stripped)
    if(NOT stripped STREQUAL "")
      if(content MATCHES "^[ \t]" AND marker_entries AND NOT line_number EQUAL marker_start)
        # A continuation line: appended to the last entry.
        list(POP_BACK marker_entries last)
        list(APPEND marker_entries "${last}\n${stripped}")
      elseif(stripped MATCHES "^(from `[^`]+`|[a-z][a-z ]*[a-z]): *(.*)$")
        list(APPEND marker_entries "${line_number}:${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
      else()
        readme_error(${line_number} "a snippet marker's entry must read 'key: value', not '${stripped}'")
      endif()
    endif()
    if(closes)
      set(state text)
      set(marker_end ${line_number})
    endif()
    continue()
  endif()

  # Text. A snippet starts at a fence, or at a line after a marker.
  set(has_marker FALSE)
  math(EXPR previous "${line_number} - 1")
  if(marker_end EQUAL previous)
    set(has_marker TRUE)
  endif()
  set(kind "")
  if(line MATCHES "^```[ \t]*([^` \t]*)")  # ```cpp, or a MyST directive such as ```{toctree}
    set(kind "${CMAKE_MATCH_1}")
    set(state fence)
  elseif(has_marker)
    string(REGEX MATCHALL "`[^`]+`" spans "${line}")
    if(spans)
      set(kind inline)
    else()
      readme_error(${marker_start} "this snippet marker is not directly followed by a fence or by a line with code spans")
      continue()
    endif()
  else()
    continue()
  endif()

  math(EXPR snippet_count "${snippet_count} + 1")
  set(i ${snippet_count})
  set(snippet_${i}_kind "${kind}")
  set(snippet_${i}_line ${line_number})
  set(snippet_${i}_lines "")
  set(snippet_${i}_marker_line "")
  set(snippet_${i}_entry_count 0)
  if(kind STREQUAL "inline")
    foreach(span IN LISTS spans)
      string(REGEX REPLACE "^`(.*)`$" "\\1" span "${span}")
      list(APPEND snippet_${i}_lines "${span}")
    endforeach()
  endif()
  if(has_marker)
    set(snippet_${i}_marker_line ${marker_start})
    set(j 0)
    foreach(entry IN LISTS marker_entries)
      math(EXPR j "${j} + 1")
      string(REGEX MATCH "^([0-9]+):(from `[^`]+`|[^:]+):(.*)$" entry_parts "${entry}")
      set(snippet_${i}_entry_${j}_line ${CMAKE_MATCH_1})
      set(snippet_${i}_entry_${j}_key "${CMAKE_MATCH_2}")
      set(value "${CMAKE_MATCH_3}")
      readme_decode(value)
      readme_decode(snippet_${i}_entry_${j}_key)
      set(snippet_${i}_entry_${j}_value "${value}")
    endforeach()
    set(snippet_${i}_entry_count ${j})
  endif()
endforeach()

if(state STREQUAL "fence")
  readme_error(${snippet_${snippet_count}_line} "this fence never closes")
elseif(state STREQUAL "marker")
  readme_error(${marker_start} "this snippet marker never closes (-->)")
endif()
