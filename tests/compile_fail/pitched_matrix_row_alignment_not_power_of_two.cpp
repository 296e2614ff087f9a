// expect: coalesce::aligned_rows<Bytes>: Bytes must be a power of two
#include <coalesce/pitched_matrix.hpp>

void misuse() { coalesce::pitched_matrix<float, coalesce::host_space, coalesce::aligned_rows<100>> m(4, 4); }
