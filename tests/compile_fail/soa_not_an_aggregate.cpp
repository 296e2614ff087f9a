// expect: coalesce::soa_vector<T>: T must be an aggregate struct
#include <coalesce/soa.hpp>

class particle {
 public:
  explicit particle(float x) : x_(x) {}

 private:
  float x_;
};

void misuse() { coalesce::soa_vector<particle, coalesce::host_space> v; }
