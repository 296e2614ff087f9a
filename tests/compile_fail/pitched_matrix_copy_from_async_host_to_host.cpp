// expect: coalesce::pitched_matrix::copy_from_async: both matrices are in host_space, and a copy between them is a memcpy on the calling thread; use copy_from
#include <coalesce/pitched_matrix.hpp>

using pinned_matrix =
    coalesce::pitched_matrix<float, coalesce::host_space, coalesce::line_aligned_rows, coalesce::pinned_resource>;

void misuse(pinned_matrix& to, const pinned_matrix& from) { to.copy_from_async(from); }
