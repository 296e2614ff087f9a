// expect: coalesce::soa_vector<T>: T has a reference or const field
#include <coalesce/soa.hpp>

struct view_of_float {
  float& value;
  int index;
};

void misuse() { coalesce::soa_vector<view_of_float, coalesce::host_space> v; }
