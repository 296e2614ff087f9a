// expect: coalesce scans: op is a pointer to a function, which device code cannot call
#include <coalesce/scan.hpp>

int larger(int a, int b) { return a > b ? a : b; }

void misuse(cuda::std::span<const int> in, cuda::std::span<int> out) { coalesce::inclusive_scan(in, out, larger); }
