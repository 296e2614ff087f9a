// Compiled to SASS by the codegen.for_each_columns test: for_each over a soa_view of {a, b, c}
// must load only the columns f reads and store only those it writes. For e.c = e.a (BabelStream's
// Copy) the chunk loads one 16-byte vector and stores one, and every path (chunks, heads and
// tails, the element-by-element fallback) has as many global loads as stores; for e.c = e.a + e.c
// it loads two columns for each one it stores, as before. No GPU needed.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>

struct Stream3 {
  float a, b, c;
};
COALESCE_FIELDS(Stream3, a, b, c);

struct copy_c_from_a {
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a;
  }
};
struct add_a_into_c {
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a + e.c;
  }
};
struct triad_into_a {  // BabelStream's Triad: a = b + scalar * c
  float scalar;
  template <class E>
  __device__ void operator()(E&& e) const {
    e.a = e.b + scalar * e.c;
  }
};

void launch(coalesce::soa_view<Stream3> v) {
  coalesce::for_each(v, copy_c_from_a{});
  coalesce::for_each(v, add_a_into_c{});
  coalesce::for_each(v, triad_into_a{0.4f});
}
