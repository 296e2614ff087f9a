// expect: coalesce::soa_vector<T>: field FieldIndex of T is, or holds, an F, which is not trivially copyable .*else store indices or handles instead of objects that own memory
#include <coalesce/soa.hpp>

#include <string>

struct named_particle {
  float x;
  std::string name;
};

void misuse() { coalesce::soa_vector<named_particle, coalesce::host_space> v; }
