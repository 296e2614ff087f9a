// coalesce: the umbrella header - includes every public concept. Prefer the one you use
// (<coalesce/model.hpp>, ...) to keep compile times down.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/model.hpp>
#include <coalesce/version.hpp>
