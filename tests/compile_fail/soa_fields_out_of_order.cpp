// expect: COALESCE_FIELDS\(point, \.\.\.\): name every field of point, in declaration order
#include <coalesce/soa.hpp>

struct point {
  float x, y;
};
COALESCE_FIELDS(point, y, x);
