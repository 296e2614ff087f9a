// expect: coalesce::swizzled: a row must be a power of two
#include <coalesce/tile_layout.hpp>

static_assert(coalesce::tile_layout<float, 32, 48, coalesce::swizzled>::size > 0);
