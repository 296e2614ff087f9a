// Compiled to SASS by the codegen.split_walk test: for_each over a layout::split whose hot fields
// are a body's six floats must touch memory exactly as the same update over columns of those six
// floats alone: the cold record (a double, two ints, two floats) is never loaded or stored, and the
// hot columns move in the same 16-byte vectors. The twins are the chunk walk's and the element
// walk's kernels of split_drift and columns_drift, whose bodies are the same. No GPU needed.
#include <coalesce/algorithm.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/soa.hpp>

#include <cstdint>

struct Body {
  float x, y, z, vx, vy, vz;
  double charge;
  std::uint32_t id, species;
  float mass, radius;
};
COALESCE_FIELDS(Body, x, y, z, vx, vy, vz, charge, id, species, mass, radius);
struct Hot {
  float x, y, z, vx, vy, vz;
};
COALESCE_FIELDS(Hot, x, y, z, vx, vy, vz);

using hot_fields = coalesce::layout::fields<&Body::x, &Body::y, &Body::z, &Body::vx, &Body::vy, &Body::vz>;
using split = coalesce::layout_view<Body, coalesce::layout::split<hot_fields>>;

struct split_drift {
  float dt;
  template <class P>
  __device__ void operator()(P&& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};
// The same body under another name, so that its kernels are the twins.
struct columns_drift : split_drift {};

void launch(split bodies, coalesce::soa_view<Hot> columns, float dt) {
  coalesce::for_each(bodies, split_drift{dt});
  coalesce::for_each(columns, columns_drift{dt});
}
