// expect: coalesce::transform: a view is of host memory
#include <coalesce/algorithm.hpp>
#include <coalesce/inputs.hpp>
#include <cuda/std/span>

struct Point {
  float x, y;
};
COALESCE_FIELDS(Point, x, y)

struct sum {
  __device__ float operator()(float a, coalesce::soa_reference_t<const Point> p) const { return a + p.x; }
};

void misuse(cuda::std::span<const float> a, coalesce::soa_view<Point, coalesce::host_space> points,
            cuda::std::span<float> out) {
  coalesce::transform(coalesce::inputs(a, points), out, sum{});
}
