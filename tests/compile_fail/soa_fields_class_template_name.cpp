// expect: COALESCE_FIELDS\(Type, \.\.\.\): Type names a class template; name the fields of all its specializations with COALESCE_TEMPLATE_FIELDS
#include <coalesce/soa.hpp>

template <class T>
struct Vec3 {
  T x, y, z;
};
COALESCE_FIELDS(Vec3, x, y, z)
