// expect: COALESCE_FIELDS\(sim::Particle, \.\.\.\): coalesce cannot find this declaration; write it in the namespace of sim::Particle, or at global scope
#include <coalesce/soa.hpp>

namespace sim {
struct Particle {
  float x, y;
};
}  // namespace sim

namespace app {
COALESCE_FIELDS(sim::Particle, x, y)
}  // namespace app
