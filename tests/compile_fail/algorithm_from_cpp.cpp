// expect: coalesce/algorithm.hpp launches kernels: include it from a \.cu file \(or a source with LANGUAGE CUDA\), compiled by nvcc
#include <coalesce/algorithm.hpp>
