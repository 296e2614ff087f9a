// expect: coalesce::make_cell_list: position\(p\) must return cuda::std::array<Real, Dims> for a uniform_grid<Dims, Real>
#include <coalesce/cell_list.hpp>

struct Atom {
  float x, y, z;
};
COALESCE_FIELDS(Atom, x, y, z);

struct as_float3 {
  template <class P>
  __host__ __device__ float3 operator()(const P& p) const {
    return make_float3(p.x, p.y, p.z);
  }
};

void misuse(coalesce::soa_vector<Atom>& atoms, const coalesce::uniform_grid<3>& grid) {
  const auto cells = coalesce::make_cell_list(atoms, grid, as_float3{});
  (void)cells;
}
