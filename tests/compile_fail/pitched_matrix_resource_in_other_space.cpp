// expect: Resource allocates in a different memory space
#include <coalesce/pitched_matrix.hpp>

void misuse() {
  coalesce::pitched_matrix<float, coalesce::host_space, coalesce::line_aligned_rows, coalesce::device_resource> m(4, 4);
}
