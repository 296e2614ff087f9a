// expect: coalesce::soa_vector<T>: every field of T must be trivially copyable
#include <coalesce/soa.hpp>

#include <string>

struct named_particle {
  float x;
  std::string name;
};

void misuse() { coalesce::soa_vector<named_particle, coalesce::host_space> v; }
