// expect: COALESCE_FIELDS\(sim::Body, \.\.\.\): name every field of sim::Body, in declaration order
#include <coalesce/soa.hpp>

namespace sim {
struct Body {
  double mass;
  float x, y;
};
}  // namespace sim

COALESCE_FIELDS(sim::Body, mass, x);
