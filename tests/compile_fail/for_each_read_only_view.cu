// expect: coalesce::for_each: the view must be writable
#include <coalesce/algorithm.hpp>

struct Point {
  float x, y;
};

struct nudge {
  __device__ void operator()(coalesce::soa_reference_t<const Point>) const {}
};

void misuse(coalesce::soa_view<const Point> points) { coalesce::for_each(points, nudge{}); }
