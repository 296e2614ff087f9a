# The coalesce_compile_cost target, run with cmake -P: how long `nvcc -c` takes on each unit of
# UNITS (best of 3, to shed the noise of a busy machine) and its ratio to the first unit, the
# baseline. Prints a table and writes it to REPORT.txt and REPORT.csv. A report, not a check:
# compile time depends on the machine, so no ratio fails; a unit that does not compile does.
# Variables: NVCC, INCLUDE_DIRS and UNITS (|-separated; UNITS baseline first), WORK_DIR, REPORT.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/CoalesceText.cmake)  # pad()
foreach(var NVCC INCLUDE_DIRS UNITS WORK_DIR REPORT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_cost.cmake: ${var} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR})
set(flags -std=c++17 -O3 -arch=sm_90)
string(REPLACE "|" ";" include_list "${INCLUDE_DIRS}")
foreach(dir IN LISTS include_list)
  list(APPEND flags -I${dir})
endforeach()

# Microseconds of the fastest of three compiles of `source`.
function(best_compile_micros source out_var)
  get_filename_component(name ${source} NAME)
  set(best "")
  foreach(attempt 1 2 3)
    string(TIMESTAMP start "%s%f")
    execute_process(COMMAND ${NVCC} ${flags} -c ${source} -o ${WORK_DIR}/${name}.o
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    string(TIMESTAMP stop "%s%f")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "nvcc -c ${source} failed:\n${err}")
    endif()
    math(EXPR micros "${stop} - ${start}")
    if(best STREQUAL "" OR micros LESS best)
      set(best ${micros})
    endif()
  endforeach()
  set(${out_var} ${best} PARENT_SCOPE)
endfunction()

# `numerator / denominator` rounded to `digits` decimals, as text ("1.47").
function(decimal numerator denominator digits out_var)
  string(REPEAT "0" ${digits} zeros)
  set(scale 1${zeros})
  math(EXPR scaled "(${numerator} * ${scale} + ${denominator} / 2) / ${denominator}")
  math(EXPR whole "${scaled} / ${scale}")
  math(EXPR fraction "${scaled} % ${scale} + ${scale}")  # leading 1 keeps the fraction's zeros
  string(SUBSTRING ${fraction} 1 -1 fraction)
  set(${out_var} "${whole}.${fraction}" PARENT_SCOPE)
endfunction()


string(REPLACE "|" ";" units "${UNITS}")
list(GET units 0 baseline)
get_filename_component(baseline_name ${baseline} NAME)
best_compile_micros(${baseline} baseline_micros)

pad("unit" 26 table)
string(APPEND table "best of 3 (s)   ratio to ${baseline_name}\n")
set(csv "unit,best_seconds,ratio_to_baseline\n")
foreach(unit IN LISTS units)
  get_filename_component(name ${unit} NAME)
  if(unit STREQUAL baseline)
    set(micros ${baseline_micros})
  else()
    best_compile_micros(${unit} micros)
  endif()
  decimal(${micros} 1000000 2 seconds)
  decimal(${micros} ${baseline_micros} 2 ratio)
  pad("${name}" 26 name_cell)
  pad("${seconds}" 16 seconds_cell)
  string(APPEND table "${name_cell}${seconds_cell}${ratio}\n")
  string(APPEND csv "${name},${seconds},${ratio}\n")
endforeach()

list(JOIN flags " " command_line)
message("nvcc -c ${command_line}\n${table}")
file(WRITE ${REPORT}.txt "${table}")
file(WRITE ${REPORT}.csv "${csv}")
message("written: ${REPORT}.txt, ${REPORT}.csv")
