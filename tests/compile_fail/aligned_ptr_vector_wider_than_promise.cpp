// expect: coalesce::aligned_ptr::load<N>: N elements are wider than the pointer's alignment promises
#include <coalesce/aligned.hpp>

float misuse(float* p) { return coalesce::aligned_ptr<float, 8>(p).load<4>(0)[0]; }
