// expect: coalesce::aligned_ptr<T, Alignment>: Alignment must be a power of two no smaller than alignof\(T\)
#include <coalesce/aligned.hpp>

void misuse(double* p) { coalesce::aligned_ptr<double, 4> q(p); }
