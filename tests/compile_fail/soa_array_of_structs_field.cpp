// expect: coalesce::soa_vector<T>: T has an array of structs as a field
#include <coalesce/soa.hpp>

#include <vector_types.h>

// pos[k] with a k known only at run time cannot pick among per-element proxies of three columns.
struct Cloud {
  float3 points[4];
  float weight;
};

void misuse() { coalesce::soa_vector<Cloud, coalesce::host_space> v; }
