// expect: coalesce::for_each_neighbor: f must be callable as f\(p_i, p_j, a\)
#include <coalesce/for_each_neighbor.hpp>

#include <cuda/std/array>

struct Atom {
  float x, y, z;
};
COALESCE_FIELDS(Atom, x, y, z);
struct Count {
  unsigned n;
};
COALESCE_FIELDS(Count, n);

struct position_of {
  template <class P>
  __host__ __device__ cuda::std::array<float, 3> operator()(const P& p) const {
    return {p.x, p.y, p.z};
  }
};

void misuse(coalesce::soa_vector<Atom>& atoms, coalesce::soa_vector<Count>& counts,
            const coalesce::uniform_grid<3>& grid) {
  const auto cells = coalesce::make_cell_list(atoms, grid, position_of{});
  // f returns a pair's contribution instead of adding it into an accumulator.
  coalesce::for_each_neighbor(atoms, cells, 1.0f, counts, [] __device__(const auto&, const auto&) { return 1u; });
}
