// The eight-column struct of coalesce's mixed-type tests and benchmark: float, double, int and
// short fields, twice, so that column widths of 2, 4 and 8 bytes share one walk.
#pragma once

#include <cstdint>

struct Mixed {
  float a;
  double b;
  std::int32_t c;
  std::int16_t d;
  float e;
  double f;
  std::int32_t g;
  std::int16_t h;
};
