// coalesce: the umbrella header - includes every public concept that plain C++ can compile.
// Prefer the one you use (<coalesce/pitched_matrix.hpp>, ...) to keep compile times down; the
// CUDA-only headers (<coalesce/algorithm.hpp>) are included separately.
#pragma once
/// @file

/// \namespace coalesce
/// Every public name of coalesce (coalesce::detail is internal).

#include <coalesce/aligned.hpp>
#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/memory_space.hpp>
#include <coalesce/model.hpp>
#include <coalesce/model_svg.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/tile_layout.hpp>
#include <coalesce/version.hpp>
#include <coalesce/view_adapter.hpp>
