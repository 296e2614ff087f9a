// expect: aligned_rows<N>>: N must be a multiple of alignof\(T\)
#include <coalesce/pitched_matrix.hpp>

struct alignas(32) wide_element {
  double v[4];
};

void misuse() { coalesce::pitched_matrix<wide_element, coalesce::host_space, coalesce::aligned_rows<16>> m(4, 4); }
