# Runs one downstream consumer end to end, as a user's project: lay it out (the README's
# CMakeLists.txt from consumer_<MODE>/ and consumer.cu as main.cu), configure, build, run.
#   -DMODE=find_package|add_subdirectory|fetchcontent|fetchcontent_source_dir
#   -DCOALESCE_SOURCE_DIR, -DCOALESCE_BUILD_DIR (what find_package installs), -DWORK_DIR,
#   -DSKIP_FILE, -DGENERATOR, -DCXX_COMPILER, -DCUDA_COMPILER, -DCUDA_HOST_COMPILER (may be empty),
#   -DCUDA_ARCHITECTURES (comma-separated), -DREQUIRE_GPU: the paths and settings of the build
#   that runs the tests (tests/package/CMakeLists.txt).
# To skip, the script writes SKIP_FILE with the reason and stops; the test's sh turns it into 77.
cmake_minimum_required(VERSION 3.25)

set(here ${CMAKE_CURRENT_LIST_DIR})
set(src ${WORK_DIR}/src)      # the consumer's source tree
set(build ${WORK_DIR}/build)  # and its build tree

# run(<step> <command>...): fails the test, with the command's output, unless it exits 0.
function(run step)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package.${MODE}: ${step} failed (${rc}, ${seconds} s):\n${out}\n${err}")
  endif()
  message(STATUS "${step}: ok (${seconds} s)")
endfunction()

# skip(<reason>): marks the test skipped; the caller then return()s, which ends the script. The
# line "SKIPPED: <reason>" is what the summary after ctest's (cmake/CoalesceSkipReasons.cmake) quotes.
function(skip reason)
  file(WRITE ${SKIP_FILE} "${reason}\n")
  string(REGEX REPLACE "[\r\n]+" " " line "${reason}")  # one line
  message("SKIPPED: ${line}")
endfunction()

# Also removes the previous run's SKIP_FILE, which lives in WORK_DIR. The vendored copies below
# are symbolic links, and file(REMOVE_RECURSE) removes a link, never what it points to.
file(REMOVE_RECURSE ${WORK_DIR})

# --- the consumer's project: the README's CMakeLists.txt next to main.cu ----------------------
file(COPY ${here}/consumer_${MODE}/CMakeLists.txt DESTINATION ${src})
file(COPY_FILE ${here}/consumer.cu ${src}/main.cu)

if(MODE STREQUAL "find_package")
  set(prefix ${WORK_DIR}/prefix)
  run("install to a temporary prefix" ${CMAKE_COMMAND} --install ${COALESCE_BUILD_DIR} --prefix ${prefix})
  foreach(f include/coalesce/coalesce.hpp include/coalesce/config.hpp share/cmake/coalesce/coalesceConfig.cmake
            share/cmake/coalesce/coalesceConfigVersion.cmake)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "package.${MODE}: ${f} was not installed")
    endif()
  endforeach()
  # The version file must refuse another major version (SameMajorVersion).
  file(WRITE ${WORK_DIR}/wrong_major/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\nproject(wrong_major LANGUAGES NONE)\nfind_package(coalesce 1.0 CONFIG REQUIRED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/wrong_major -B ${WORK_DIR}/wrong_major/build
                          -DCMAKE_PREFIX_PATH=${prefix}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "coalesce")
    message(FATAL_ERROR "package.${MODE}: find_package(coalesce 1.0) should have failed against 0.x:\n${err}")
  endif()
  set(extra -DCMAKE_PREFIX_PATH=${prefix})

elseif(MODE STREQUAL "add_subdirectory" OR MODE STREQUAL "fetchcontent_source_dir")
  # A vendored copy in third_party/coalesce: a link to this source tree rather than a copy of it,
  # which could hold build directories (this test's among them).
  file(MAKE_DIRECTORY ${src}/third_party)
  file(CREATE_LINK ${COALESCE_SOURCE_DIR} ${src}/third_party/coalesce SYMBOLIC)

elseif(MODE STREQUAL "fetchcontent")
  # The README fetches main from GitHub; offline, this test fetches main from the source tree's
  # own repository. That needs git, a repository whose top level is the source tree (not one that
  # merely contains it), and a branch named main; without them the test is skipped, not passed.
  find_package(Git QUIET)
  if(NOT Git_FOUND)
    skip("git was not found: FetchContent cannot clone")
    return()
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${COALESCE_SOURCE_DIR} rev-parse --show-toplevel
                  RESULT_VARIABLE rc OUTPUT_VARIABLE top ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${COALESCE_SOURCE_DIR}" source_real)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    skip("${COALESCE_SOURCE_DIR} is not a git repository, nothing to clone: ${err}")
    return()
  elseif(NOT top STREQUAL source_real)
    skip("${COALESCE_SOURCE_DIR} is not a git repository of its own (it lies in ${top}): nothing to clone")
    return()
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${COALESCE_SOURCE_DIR} rev-parse --verify --quiet refs/heads/main^{commit}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE main_commit OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    skip("${COALESCE_SOURCE_DIR} has no branch named main for GIT_TAG main")
    return()
  endif()
  # A clone holds commits only: say so when the working tree is not main as committed.
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${COALESCE_SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${COALESCE_SOURCE_DIR} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes)
  if(NOT head STREQUAL main_commit OR NOT changes STREQUAL "")
    message(STATUS "note: this tests main as committed (${main_commit}), not the working tree")
  endif()

  set(readme_url https://github.com/coalesce-cuda/coalesce.git)
  file(READ ${src}/CMakeLists.txt project)
  string(FIND "${project}" "GIT_REPOSITORY ${readme_url}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "package.${MODE}: consumer_fetchcontent/CMakeLists.txt no longer names ${readme_url}")
  endif()
  string(REPLACE "${readme_url}" "${COALESCE_SOURCE_DIR}" project "${project}")
  file(WRITE ${src}/CMakeLists.txt "${project}")

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()

# --- configure, build, run -----------------------------------------------------------------
# The architectures of the build that runs the tests, so the consumer runs on the same GPU; through
# CUDAARCHS because a list does not survive a -D in a list of arguments.
string(REPLACE "," ";" architectures "${CUDA_ARCHITECTURES}")
set(ENV{CUDAARCHS} "${architectures}")
set(configure ${CMAKE_COMMAND} -S ${src} -B ${build} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
  # coalesce's headers must not warn in a user's build either. Given here, so that the consumer's
  # CMakeLists.txt stays the README's; it adds no flag the code needs (--extended-lambda comes
  # from coalesce::coalesce).
  -DCMAKE_CUDA_FLAGS=-Werror=all-warnings)
if(CUDA_HOST_COMPILER)
  list(APPEND configure -DCMAKE_CUDA_HOST_COMPILER=${CUDA_HOST_COMPILER})
endif()
run("configure the consumer" ${configure} ${extra})

if(NOT MODE STREQUAL "find_package")
  # coalesce is a subproject here: its tests, examples, benchmarks and install rules must default
  # to off (PROJECT_IS_TOP_LEVEL), so a user's configure looks for no Catch2 and builds none of them.
  file(STRINGS ${build}/CMakeCache.txt options
       REGEX "^(COALESCE_BUILD_TESTS|COALESCE_BUILD_EXAMPLES|COALESCE_BUILD_BENCHMARKS|COALESCE_INSTALL|Catch2_DIR):")
  list(LENGTH options count)
  if(NOT count EQUAL 4 OR NOT options MATCHES "^([A-Z_]+:BOOL=OFF;?)+$")
    list(JOIN options "\n" options)
    message(FATAL_ERROR "package.${MODE}: coalesce as a subproject must leave its tests, examples, "
      "benchmarks and install off and not look for Catch2; the consumer's cache says:\n${options}")
  endif()
endif()

if(MODE STREQUAL "fetchcontent")
  # The clone is main of this repository, not something else that answered to the URL.
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${build}/_deps/coalesce-src rev-parse HEAD
                  OUTPUT_VARIABLE fetched OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT fetched STREQUAL main_commit)
    message(FATAL_ERROR "package.${MODE}: FetchContent checked out '${fetched}', main is ${main_commit}")
  endif()
  message(STATUS "FetchContent cloned main: ${fetched}")
endif()

run("build the consumer" ${CMAKE_COMMAND} --build ${build})

# Exit 77: built, but no usable GPU to run it on.
execute_process(COMMAND ${build}/my_app RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 77)
  string(STRIP "${out}" out)
  set(required_by_env "$ENV{COALESCE_REQUIRE_GPU}")  # as the device tests read it: set, not "" or "0"
  if(REQUIRE_GPU OR (NOT required_by_env STREQUAL "" AND NOT required_by_env STREQUAL "0"))
    message(FATAL_ERROR "package.${MODE}: a GPU is required (COALESCE_REQUIRE_GPU) but the consumer says: ${out}")
  endif()
  skip("${out}")
  return()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "package.${MODE}: run the consumer failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "run the consumer: ok\n${out}")
