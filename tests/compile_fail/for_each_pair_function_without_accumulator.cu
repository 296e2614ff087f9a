// expect: coalesce::for_each_pair: f must be callable as f\(p_i, p_j, a\), p_i and p_j two particles \(const T&\) and a the accumulator of p_i \(an A&, A the element type of out\): declare f as
#include <coalesce/for_each_pair.hpp>

struct Body {
  float x, y, z, m;
};
COALESCE_FIELDS(Body, x, y, z, m);

struct Potential {
  float phi;
};
COALESCE_FIELDS(Potential, phi);

void misuse(const coalesce::soa_vector<Body>& bodies, coalesce::soa_vector<Potential>& potential) {
  // f written as a pair's contribution, returned, instead of added into the accumulator
  coalesce::for_each_pair(bodies, potential, [] __device__(const auto& p_i, const auto& p_j) {
    const float dx = p_j.x - p_i.x, dy = p_j.y - p_i.y, dz = p_j.z - p_i.z;
    return -p_j.m * rsqrtf(dx * dx + dy * dy + dz * dz);
  });
}
