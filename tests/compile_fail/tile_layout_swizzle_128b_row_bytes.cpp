// expect: coalesce::swizzled_128b: a row must be a multiple of 128 bytes
#include <coalesce/tile_layout.hpp>

static_assert(coalesce::tile_layout<float, 32, 16, coalesce::swizzled_128b>::size > 0);
