// coalesce: the library's version, kept in step with project(VERSION) in CMakeLists.txt
// (the build checks that the two agree).
#pragma once

#define COALESCE_VERSION_MAJOR 0
#define COALESCE_VERSION_MINOR 1
#define COALESCE_VERSION_PATCH 0
#define COALESCE_VERSION (COALESCE_VERSION_MAJOR * 10000 + COALESCE_VERSION_MINOR * 100 + COALESCE_VERSION_PATCH)
