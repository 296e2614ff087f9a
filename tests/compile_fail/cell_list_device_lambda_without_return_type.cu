// expect: coalesce::make_cell_list: the host cannot see what a __device__ lambda returns
#include <coalesce/cell_list.hpp>

#include <cuda/std/array>

struct Atom {
  float x, y, z;
};
COALESCE_FIELDS(Atom, x, y, z);

void misuse(coalesce::soa_vector<Atom>& atoms, const coalesce::uniform_grid<3>& grid) {
  // No trailing return type: the host sees no cuda::std::array to check.
  const auto cells = coalesce::make_cell_list(atoms, grid, [] __device__(auto p) {
    return cuda::std::array<float, 3>{p.x, p.y, p.z};
  });
  (void)cells;
}
