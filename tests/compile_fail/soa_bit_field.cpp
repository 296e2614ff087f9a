// expect: coalesce::soa_vector<T>: T's fields do not fill it as their types say: T has a bit-field
#include <coalesce/soa.hpp>

struct flags {
  unsigned visible : 1;
  unsigned selected : 1;
  float weight;
};

void misuse() { coalesce::soa_vector<flags, coalesce::host_space> v; }
