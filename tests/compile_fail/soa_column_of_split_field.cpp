// expect: coalesce::soa_view::column: this field of T is a struct, a vector type or an array, stored as one column per leaf
#include <coalesce/soa.hpp>

#include <vector_types.h>

struct Body {
  float3 pos;
  float mass;
};

float* misuse(coalesce::soa_vector<Body, coalesce::host_space>& bodies) { return bodies.view().column<&Body::pos>(); }
