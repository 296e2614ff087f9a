// coalesce: the library's version, kept in step with project(VERSION) in CMakeLists.txt
// (the build checks that the two agree).
#pragma once
/// @file

/// The major version: raised by a release that breaks the API (the package's version file accepts
/// a find_package request of the same major version only).
#define COALESCE_VERSION_MAJOR 0
/// The minor version: raised by a release that adds to the API.
#define COALESCE_VERSION_MINOR 1
/// The patch version: raised by a release that only fixes.
#define COALESCE_VERSION_PATCH 0
/// The whole version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100), for
/// `#if COALESCE_VERSION >= 200` in code that needs a feature of a given release.
#define COALESCE_VERSION (COALESCE_VERSION_MAJOR * 10000 + COALESCE_VERSION_MINOR * 100 + COALESCE_VERSION_PATCH)
