# Catch2 for coalesce's tests: an installed one wins (2.13 or 3.x: tests/support/coalesce_test.hpp
# speaks both); else a pinned release is downloaded and built with the tests. Where the download
# fails (no network) configuring stops with one message that says what to do, and writes
# COALESCE_CATCH2_UNAVAILABLE_FILE, so that scripts/test.sh can install the system's package
# (where it may) and configure again.
#
#   COALESCE_FETCH_CATCH2  download Catch2 when none is installed (ON)
#   COALESCE_CATCH2_URL    where from: the release's archive on GitHub, or a mirror, or a local
#                          copy of that archive (a path); its SHA-256 is checked either way
include_guard(GLOBAL)

option(COALESCE_FETCH_CATCH2 "Download Catch2 (a pinned release) when no installed Catch2 is found" ON)
set(COALESCE_CATCH2_VERSION 3.7.1)
# The archive GitHub serves for the tag v3.7.1 (the same bytes as Debian's catch2_3.7.1.orig.tar.gz).
set(COALESCE_CATCH2_SHA256 c991b247a1a0d7bb9c39aa35faf0fe9e19764213f28ffba3109388e62ee0269c)
set(COALESCE_CATCH2_URL "https://github.com/catchorg/Catch2/archive/refs/tags/v${COALESCE_CATCH2_VERSION}.tar.gz"
  CACHE STRING "Where to download Catch2 ${COALESCE_CATCH2_VERSION} from (a URL or a local path to the same archive)")
set(COALESCE_CATCH2_UNAVAILABLE_FILE ${CMAKE_BINARY_DIR}/coalesce-catch2-unavailable)

# Sets Catch2_FOUND, and makes Catch2::Catch2 and Catch2_VERSION available, or stops.
macro(coalesce_obtain_catch2)
  file(REMOVE ${COALESCE_CATCH2_UNAVAILABLE_FILE})
  find_package(Catch2 QUIET)
  if(Catch2_FOUND)
    message(STATUS "coalesce: tests use the installed Catch2 ${Catch2_VERSION} (${Catch2_DIR})")
  else()
    _coalesce_fetch_catch2()
  endif()
endmacro()

function(_coalesce_catch2_unavailable why)
  file(WRITE ${COALESCE_CATCH2_UNAVAILABLE_FILE} "${why}\n")
  message(FATAL_ERROR "coalesce: the tests need Catch2. None is installed, and ${why}.\n"
    "Do one of these, then configure again:\n"
    "  - run scripts/test.sh, which installs it from the system's packages where it may (root or sudo);\n"
    "  - install it yourself: apt-get install catch2 (Debian, Ubuntu), dnf install catch2-devel (Fedora), "
    "brew install catch2 (macOS), or build Catch2 3.x and pass -DCatch2_DIR=<its lib/cmake/Catch2>;\n"
    "  - give the Catch2 ${COALESCE_CATCH2_VERSION} release archive from elsewhere: "
    "-DCOALESCE_CATCH2_URL=/path/to/Catch2-${COALESCE_CATCH2_VERSION}.tar.gz;\n"
    "  - or configure without the tests: -DCOALESCE_BUILD_TESTS=OFF.")
endfunction()

function(_coalesce_fetch_catch2)
  if(NOT COALESCE_FETCH_CATCH2)
    _coalesce_catch2_unavailable("downloading it is off (COALESCE_FETCH_CATCH2=OFF)")
  endif()
  # Downloaded here rather than by FetchContent, so that a machine without network gets the
  # message above instead of FetchContent's error in the middle of a download log.
  set(archive ${CMAKE_BINARY_DIR}/_deps/catch2-${COALESCE_CATCH2_VERSION}.tar.gz)
  if(EXISTS "${COALESCE_CATCH2_URL}")
    set(archive "${COALESCE_CATCH2_URL}")
  endif()
  set(have "")
  if(EXISTS "${archive}")
    file(SHA256 "${archive}" have)
  endif()
  if(NOT have STREQUAL COALESCE_CATCH2_SHA256)
    message(STATUS "coalesce: no installed Catch2; downloading Catch2 ${COALESCE_CATCH2_VERSION} from ${COALESCE_CATCH2_URL}")
    # The hash is checked after the download rather than by EXPECTED_HASH, which reports a failed
    # download as a hash mismatch.
    file(DOWNLOAD "${COALESCE_CATCH2_URL}" "${archive}" STATUS status TIMEOUT 120 INACTIVITY_TIMEOUT 30 TLS_VERIFY ON)
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      list(GET status 1 text)
      file(REMOVE "${archive}")
      _coalesce_catch2_unavailable(
        "downloading Catch2 ${COALESCE_CATCH2_VERSION} from ${COALESCE_CATCH2_URL} failed (${text}: no network here?)")
    endif()
    file(SHA256 "${archive}" have)
    if(NOT have STREQUAL COALESCE_CATCH2_SHA256)
      file(REMOVE "${archive}")
      set(why "the archive from ${COALESCE_CATCH2_URL} is not Catch2 ${COALESCE_CATCH2_VERSION}'s")
      _coalesce_catch2_unavailable("${why} (SHA-256 ${have}, expected ${COALESCE_CATCH2_SHA256})")
    endif()
  endif()
  include(FetchContent)
  FetchContent_Declare(Catch2 URL "${archive}" URL_HASH SHA256=${COALESCE_CATCH2_SHA256})
  # Catch2 as a subproject adds no install rules and builds none of its own tests.
  FetchContent_MakeAvailable(Catch2)
  set(Catch2_FOUND TRUE PARENT_SCOPE)
  set(Catch2_VERSION ${COALESCE_CATCH2_VERSION} PARENT_SCOPE)
  message(STATUS "coalesce: tests use Catch2 ${COALESCE_CATCH2_VERSION}, built from ${archive}")
endfunction()
