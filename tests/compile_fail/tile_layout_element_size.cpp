// expect: coalesce::tile_layout<T>: sizeof\(T\) must be 1, 2, 4, 8 or 16 bytes
#include <coalesce/tile_layout.hpp>

struct rgb {
  float r, g, b;
};

static_assert(coalesce::tile_layout<rgb, 32, 32>::size > 0);
