// expect: coalesce::soa_vector<T>: field FieldIndex of T is, or holds, an F, which is not trivially copyable .*specialize coalesce::is_bitwise_copyable<F> as std::true_type
#include <coalesce/soa.hpp>

// Like Eigen::Vector3d: a user-written copy constructor makes it not trivially copyable, though a
// copy of its bytes copies it; without coalesce::is_bitwise_copyable<vector3d>, it is refused
// (and the compiler names the field's index, 1, and vector3d with the message).
class vector3d {
 public:
  vector3d() {}
  vector3d(const vector3d& other) : c_{other.c_[0], other.c_[1], other.c_[2]} {}
  vector3d& operator=(const vector3d& other) {
    for (int k = 0; k < 3; ++k) c_[k] = other.c_[k];
    return *this;
  }

 private:
  double c_[3];
};

struct track {
  float charge;
  vector3d momentum;
};
COALESCE_FIELDS(track, charge, momentum)

void misuse() { coalesce::soa_vector<track, coalesce::host_space> v; }
