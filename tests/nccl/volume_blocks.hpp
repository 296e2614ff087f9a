// Blocks of a volume for the halo tests: a block's shape along its split, every element's value
// from its global coordinates, and a check of every element of a block read back.
#pragma once

#include <coalesce/nccl.hpp>

#include "coalesce_test.hpp"

#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace coalesce_test {

using coalesce::volume_axis;

// The value of global element (z, y, x): each its own for fewer than 100 rows of 1000 columns, and
// exact in a float below 160 planes, so a misplaced element shows.
inline float value_at(std::size_t z, std::size_t y, std::size_t x) { return float(z * 100000 + y * 1000 + x); }

inline const char* name_of(volume_axis axis) {
  return axis == volume_axis::z ? "z" : axis == volume_axis::y ? "y" : "x";
}

// A block's shape: `own` layers along `axis` plus `halo` either side, `others` along the other two.
struct volume_shape {
  volume_axis axis;
  std::size_t own, halo;
  std::array<std::size_t, 3> extents;  // depth, height, width, halos included

  volume_shape(volume_axis a, std::size_t own_layers, std::size_t halo_layers, std::size_t depth, std::size_t height,
               std::size_t width)
      : axis(a), own(own_layers), halo(halo_layers), extents{depth, height, width} {
    extents[std::size_t(a)] = own + 2 * halo;
  }
  std::size_t along(const std::array<std::size_t, 3>& p) const { return p[std::size_t(axis)]; }
  std::size_t size() const { return extents[0] * extents[1] * extents[2]; }
  template <class F>
  void for_each(F f) const {
    for (std::size_t z = 0; z < extents[0]; ++z)
      for (std::size_t y = 0; y < extents[1]; ++y)
        for (std::size_t x = 0; x < extents[2]; ++x)
          f(std::array<std::size_t, 3>{z, y, x}, (z * extents[1] + y) * extents[2] + x);
  }
};

// The global coordinates of block position p, for a block whose own layers start at global layer `first`.
inline std::array<std::size_t, 3> global_of(const volume_shape& s, std::array<std::size_t, 3> p, std::size_t first) {
  p[std::size_t(s.axis)] = p[std::size_t(s.axis)] - s.halo + first;
  return p;
}

// Own layers hold their global values, halos -1.
inline std::vector<float> volume_values(const volume_shape& s, std::size_t first) {
  std::vector<float> host(s.size(), -1.0f);
  s.for_each([&](std::array<std::size_t, 3> p, std::size_t i) {
    const std::size_t layer = s.along(p);
    if (layer >= s.halo && layer < s.halo + s.own) {
      const auto g = global_of(s, p, first);
      host[i] = value_at(g[0], g[1], g[2]);
    }
  });
  return host;
}

// The value at p of block r of a domain split into two blocks along s.axis (rank 0 first, not
// periodic) after their exchange: own layers and the inner halo hold their global values, the
// outer halo stays -1.
inline float after_exchange_of_two(const volume_shape& s, int r, std::array<std::size_t, 3> p) {
  const std::size_t layer = s.along(p);
  const bool own = layer >= s.halo && layer < s.halo + s.own;
  const bool from_other = (r == 0 && layer >= s.halo + s.own) || (r == 1 && layer < s.halo);
  if (!own && !from_other) return -1.0f;
  const auto g = global_of(s, p, std::size_t(r) * s.own);
  return value_at(g[0], g[1], g[2]);
}

// Every element of `got` against expected(p); `who` says whose block. One assertion, naming the
// first element that differs.
template <class Expected>
void check_volume(const std::vector<float>& got, const volume_shape& s, const Expected& expected,
                  const std::string& who) {
  std::size_t wrong = 0;
  std::ostringstream first;
  s.for_each([&](std::array<std::size_t, 3> p, std::size_t i) {
    if (got[i] == expected(p)) return;
    if (wrong++ == 0)
      first << "element (" << p[0] << ", " << p[1] << ", " << p[2] << "): " << got[i] << ", expected " << expected(p);
  });
  INFO(who << ", split along " << name_of(s.axis) << ": " << wrong << " element(s) wrong; the first at "
           << first.str());
  CHECK(wrong == 0);
}

}  // namespace coalesce_test
