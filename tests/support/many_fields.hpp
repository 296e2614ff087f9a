// Records as high-energy physics codes have them, for tests/host/soa_many_fields.cpp and
// tests/device/many_fields.cu: one of 64 fields and one of 32 (of eight types in turn), and a
// track whose momentum is a class like Eigen::Vector3d, bitwise copyable by specialization of
// coalesce::is_bitwise_copyable.
#pragma once

#include <coalesce/soa.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce_test {

// The type of field k of the records below: eight types in turn, of sizes 8, 4, 4, 8, 2, 1, 8, 4,
// so that a column taken for its neighbour has the wrong type or the wrong values.
template <std::size_t K>
using many_field_type = std::conditional_t<
    K % 8 == 0, double,
    std::conditional_t<
        K % 8 == 1, float,
        std::conditional_t<
            K % 8 == 2, std::int32_t,
            std::conditional_t<
                K % 8 == 3, std::uint64_t,
                std::conditional_t<K % 8 == 4, std::int16_t,
                                   std::conditional_t<K % 8 == 5, std::uint8_t,
                                                      std::conditional_t<K % 8 == 6, std::int64_t, float>>>>>>>;

// The value field k of element i holds, (i % 400) * 64 + k in field k's type: the fields of one
// element all differ (k < 64, so the 1-byte ones too), and every value is exact in every type of
// two bytes or more (below 2^15).
template <std::size_t K>
COALESCE_HOST_DEVICE many_field_type<K> many_field_value(std::size_t i) {
  return static_cast<many_field_type<K>>((i % 400) * 64 + K);
}

}  // namespace coalesce_test

// Eight fields named p0 ... p7 of the types above, in order (the record's field k is group k / 8,
// member k % 8), and their names, and each one set or compared by name: the tests fill and read
// records by name, so what they expect does not come from coalesce's reflection.
#define COALESCE_TEST_EIGHT_FIELDS(p) \
  double p##0;                        \
  float p##1;                         \
  std::int32_t p##2;                  \
  std::uint64_t p##3;                 \
  std::int16_t p##4;                  \
  std::uint8_t p##5;                  \
  std::int64_t p##6;                  \
  float p##7;
#define COALESCE_TEST_EIGHT_NAMES(p) p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7
#define COALESCE_TEST_SET_ONE(e, name, i, k) e.name = coalesce_test::many_field_value<k>(i);
#define COALESCE_TEST_SET_EIGHT(e, p, i, group)    \
  COALESCE_TEST_SET_ONE(e, p##0, i, group * 8 + 0) \
  COALESCE_TEST_SET_ONE(e, p##1, i, group * 8 + 1) \
  COALESCE_TEST_SET_ONE(e, p##2, i, group * 8 + 2) \
  COALESCE_TEST_SET_ONE(e, p##3, i, group * 8 + 3) \
  COALESCE_TEST_SET_ONE(e, p##4, i, group * 8 + 4) \
  COALESCE_TEST_SET_ONE(e, p##5, i, group * 8 + 5) \
  COALESCE_TEST_SET_ONE(e, p##6, i, group * 8 + 6) \
  COALESCE_TEST_SET_ONE(e, p##7, i, group * 8 + 7)
#define COALESCE_TEST_SAME_EIGHT(a, b, p)                                                              \
  (a.p##0 == b.p##0 && a.p##1 == b.p##1 && a.p##2 == b.p##2 && a.p##3 == b.p##3 && a.p##4 == b.p##4 && \
   a.p##5 == b.p##5 && a.p##6 == b.p##6 && a.p##7 == b.p##7)

// 64 fields: a0 ... a7, b0 ... b7, ..., h0 ... h7.
struct event64 {
  COALESCE_TEST_EIGHT_FIELDS(a)
  COALESCE_TEST_EIGHT_FIELDS(b)
  COALESCE_TEST_EIGHT_FIELDS(c)
  COALESCE_TEST_EIGHT_FIELDS(d)
  COALESCE_TEST_EIGHT_FIELDS(e)
  COALESCE_TEST_EIGHT_FIELDS(f)
  COALESCE_TEST_EIGHT_FIELDS(g)
  COALESCE_TEST_EIGHT_FIELDS(h)
};
COALESCE_FIELDS(event64, COALESCE_TEST_EIGHT_NAMES(a), COALESCE_TEST_EIGHT_NAMES(b), COALESCE_TEST_EIGHT_NAMES(c),
                COALESCE_TEST_EIGHT_NAMES(d), COALESCE_TEST_EIGHT_NAMES(e), COALESCE_TEST_EIGHT_NAMES(f),
                COALESCE_TEST_EIGHT_NAMES(g), COALESCE_TEST_EIGHT_NAMES(h))

// Element i of a record of 64 fields, set field by field.
inline event64 make_event64(std::size_t i) {
  event64 e{};
  COALESCE_TEST_SET_EIGHT(e, a, i, 0)
  COALESCE_TEST_SET_EIGHT(e, b, i, 1)
  COALESCE_TEST_SET_EIGHT(e, c, i, 2)
  COALESCE_TEST_SET_EIGHT(e, d, i, 3)
  COALESCE_TEST_SET_EIGHT(e, e, i, 4)
  COALESCE_TEST_SET_EIGHT(e, f, i, 5)
  COALESCE_TEST_SET_EIGHT(e, g, i, 6)
  COALESCE_TEST_SET_EIGHT(e, h, i, 7)
  return e;
}
inline bool same_event64(const event64& x, const event64& y) {
  return COALESCE_TEST_SAME_EIGHT(x, y, a) && COALESCE_TEST_SAME_EIGHT(x, y, b) && COALESCE_TEST_SAME_EIGHT(x, y, c) &&
         COALESCE_TEST_SAME_EIGHT(x, y, d) && COALESCE_TEST_SAME_EIGHT(x, y, e) && COALESCE_TEST_SAME_EIGHT(x, y, f) &&
         COALESCE_TEST_SAME_EIGHT(x, y, g) && COALESCE_TEST_SAME_EIGHT(x, y, h);
}

// 32 fields, without COALESCE_FIELDS: positional access only.
struct event32 {
  COALESCE_TEST_EIGHT_FIELDS(a)
  COALESCE_TEST_EIGHT_FIELDS(b)
  COALESCE_TEST_EIGHT_FIELDS(c)
  COALESCE_TEST_EIGHT_FIELDS(d)
};
inline event32 make_event32(std::size_t i) {
  event32 e{};
  COALESCE_TEST_SET_EIGHT(e, a, i, 0)
  COALESCE_TEST_SET_EIGHT(e, b, i, 1)
  COALESCE_TEST_SET_EIGHT(e, c, i, 2)
  COALESCE_TEST_SET_EIGHT(e, d, i, 3)
  return e;
}
inline bool same_event32(const event32& x, const event32& y) {
  return COALESCE_TEST_SAME_EIGHT(x, y, a) && COALESCE_TEST_SAME_EIGHT(x, y, b) && COALESCE_TEST_SAME_EIGHT(x, y, c) &&
         COALESCE_TEST_SAME_EIGHT(x, y, d);
}

// Like Eigen::Vector3d: three doubles behind a user-written default constructor (which leaves
// them uninitialized, as Eigen's does), copy constructor and copy assignment, all __host__
// __device__. Not trivially copyable, and not an aggregate; a copy of its bytes is a copy of it.
class vector3d {
 public:
  COALESCE_HOST_DEVICE vector3d() {}
  COALESCE_HOST_DEVICE vector3d(double x, double y, double z) : c_{x, y, z} {}
  COALESCE_HOST_DEVICE vector3d(const vector3d& other) : c_{other.c_[0], other.c_[1], other.c_[2]} {}
  COALESCE_HOST_DEVICE vector3d& operator=(const vector3d& other) {
    for (int k = 0; k < 3; ++k) c_[k] = other.c_[k];
    return *this;
  }
  COALESCE_HOST_DEVICE double operator[](int k) const { return c_[k]; }

 private:
  double c_[3];
};
template <>
struct coalesce::is_bitwise_copyable<vector3d> : std::true_type {};

inline bool same_vector3d(const vector3d& a, const vector3d& b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

// A track of an event: the momentum is one column of vector3d (24 bytes an element).
struct track {
  float charge;
  vector3d momentum;
  std::int32_t hits;
};
COALESCE_FIELDS(track, charge, momentum, hits)

inline track make_track(std::size_t i) {
  const double d = double(i);
  return {i % 2 == 0 ? 1.0f : -1.0f, vector3d(d + 0.5, -d, 2.0 * d + 0.25), std::int32_t(i % 1000)};
}
inline bool same_track(const track& a, const track& b) {
  return a.charge == b.charge && same_vector3d(a.momentum, b.momentum) && a.hits == b.hits;
}
