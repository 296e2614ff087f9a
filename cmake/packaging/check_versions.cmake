# The version in every place that states it must agree: project(VERSION) in CMakeLists.txt, the
# macros of <coalesce/version.hpp>, the Conan recipe, the vcpkg manifest and the Spack package. A
# release bumps them all; this script (the ctest package.versions) fails, naming each file and what
# it says, when one was left behind, and when vcpkg.json is not valid JSON.
#   cmake -DSOURCE_DIR=<tree> -P cmake/packaging/check_versions.cmake
# Each file can be given on its own (-DCONAN_RECIPE=..., -DVCPKG_MANIFEST=..., -DSPACK_PACKAGE=...),
# so that the script can be pointed at a changed copy to see it fail.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
set(packaging ${SOURCE_DIR}/cmake/packaging)
foreach(pair
    "CMAKE_LISTS;${SOURCE_DIR}/CMakeLists.txt"
    "VERSION_HEADER;${SOURCE_DIR}/include/coalesce/version.hpp"
    "CONAN_RECIPE;${packaging}/conan/conanfile.py"
    "VCPKG_MANIFEST;${packaging}/vcpkg/ports/coalesce/vcpkg.json"
    "SPACK_PACKAGE;${packaging}/spack/spack_repo/coalesce/packages/coalesce/package.py")
  list(GET pair 0 var)
  list(GET pair 1 default)
  if(NOT DEFINED ${var})
    set(${var} ${default})
  endif()
  if(NOT EXISTS ${${var}})
    message(FATAL_ERROR "package.versions: ${${var}} does not exist")
  endif()
endforeach()

set(problems "")
# found(<where> <version>): records one place's version; an empty version is a problem of its own.
function(found where version)
  if(version STREQUAL "")
    set(problems "${problems}\n  ${where}: no version found" PARENT_SCOPE)
  endif()
  set_property(GLOBAL APPEND PROPERTY coalesce_versions "${where}=${version}")
endfunction()

# CMakeLists.txt: project(coalesce VERSION x.y.z ...).
file(READ ${CMAKE_LISTS} text)
set(v "")
if(text MATCHES "project\\([ \t\r\n]*coalesce[ \t\r\n]+VERSION[ \t\r\n]+([0-9]+\\.[0-9]+\\.[0-9]+)")
  set(v ${CMAKE_MATCH_1})
endif()
found("${CMAKE_LISTS} (project VERSION)" "${v}")
set(expected ${v})

# version.hpp: the three macros.
file(READ ${VERSION_HEADER} text)
set(parts "")
foreach(part MAJOR MINOR PATCH)
  if(text MATCHES "#define COALESCE_VERSION_${part} ([0-9]+)")
    list(APPEND parts ${CMAKE_MATCH_1})
  endif()
endforeach()
set(v "")
list(LENGTH parts n)
if(n EQUAL 3)
  list(JOIN parts "." v)
endif()
found("${VERSION_HEADER} (COALESCE_VERSION_MAJOR/MINOR/PATCH)" "${v}")

# conanfile.py: the class attribute version = "x.y.z".
file(READ ${CONAN_RECIPE} text)
set(v "")
if(text MATCHES "\n[ \t]+version[ \t]*=[ \t]*\"([^\"]*)\"")
  set(v ${CMAKE_MATCH_1})
endif()
found("${CONAN_RECIPE} (version)" "${v}")

# vcpkg.json: must parse; its name is coalesce and its version one of vcpkg's version fields.
file(READ ${VCPKG_MANIFEST} text)
string(JSON name ERROR_VARIABLE error GET "${text}" name)
if(error)
  string(APPEND problems "\n  ${VCPKG_MANIFEST}: not valid JSON, or no name (${error})")
elseif(NOT name STREQUAL "coalesce")
  string(APPEND problems "\n  ${VCPKG_MANIFEST}: name is \"${name}\", not \"coalesce\"")
endif()
set(v "")
if(NOT error)
  foreach(key version version-semver version-string version-date)
    string(JSON value ERROR_VARIABLE missing GET "${text}" ${key})
    if(NOT missing)
      set(v ${value})
      break()
    endif()
  endforeach()
  string(JSON port_version ERROR_VARIABLE missing GET "${text}" port-version)
  if(NOT missing AND NOT port_version EQUAL 0)
    # A port-version counts changes to the port at one version; the project's version is the
    # version field's. Said, not refused: vcpkg allows it.
    message(STATUS "package.versions: ${VCPKG_MANIFEST} has port-version ${port_version}")
  endif()
endif()
found("${VCPKG_MANIFEST} (version)" "${v}")

# package.py: the highest numbered version("x.y.z", ...) directive (branches such as "main" are
# not numbers and do not count).
file(READ ${SPACK_PACKAGE} text)
string(REGEX MATCHALL "\n[ \t]+version\\([ \t]*\"[0-9][0-9.]*\"" directives "${text}")
set(v "")
foreach(d IN LISTS directives)
  string(REGEX REPLACE ".*\"([0-9.]+)\"" "\\1" number "${d}")
  if(v STREQUAL "" OR number VERSION_GREATER v)
    set(v ${number})
  endif()
endforeach()
found("${SPACK_PACKAGE} (highest numbered version())" "${v}")

get_property(versions GLOBAL PROPERTY coalesce_versions)
set(table "")
foreach(entry IN LISTS versions)
  string(REGEX MATCH "^(.*)=([^=]*)$" _ "${entry}")
  string(APPEND table "\n  ${CMAKE_MATCH_2}  ${CMAKE_MATCH_1}")
  if(NOT CMAKE_MATCH_2 STREQUAL "" AND NOT CMAKE_MATCH_2 STREQUAL expected)
    string(APPEND problems "\n  ${CMAKE_MATCH_1} says ${CMAKE_MATCH_2}, CMakeLists.txt says ${expected}")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "package.versions: the version is not the same everywhere:${problems}\nAll of them:${table}")
endif()
message(STATUS "package.versions: ${expected} everywhere:${table}")
