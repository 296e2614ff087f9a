// expect: COALESCE_FIELDS\(wide, \.\.\.\): more than 24 names; coalesce reflects at most 24 fields
#include <coalesce/soa.hpp>

struct wide {
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24;
};
COALESCE_FIELDS(wide, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20,
                f21, f22, f23, f24)
