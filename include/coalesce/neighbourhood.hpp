// coalesce: what a stencil's f receives - the radius-R neighbourhood of one element of one input,
// of a matrix (neighbourhood, n(dr, dc)), a volume (volume_neighbourhood, n(dz, dy, dx)) or a
// line (line_neighbourhood, n(d): a span or a column). Values in registers, read by offset.
// Host-capable; included by <coalesce/stencil.hpp>.
#pragma once
/// @file

#include <coalesce/config.hpp>

namespace coalesce {

/// The radius-R neighbourhood of one element of one input, as f receives it: n(dr, dc) is the
/// input at (r + dr, c + dc), |dr|, |dc| <= R, after the boundary policy. Offsets known at compile
/// time cost nothing (the values are registers); n.at<dr, dc>() checks them at compile time,
/// n(dr, dc) under COALESCE_DEBUG. An offset computed at run time indexes a local array.
template <class T, int R>
class neighbourhood {
 public:
  using value_type = T;             ///< the input's element type
  static constexpr int radius = R;  ///< the largest offset along each axis

  /// Over values laid out row-major, `row_stride` apart, `centre` pointing at offset (0, 0).
  COALESCE_HOST_DEVICE constexpr neighbourhood(const T* centre, int row_stride)
      : centre_(centre), row_stride_(row_stride) {}

  /// The input at offset (dr, dc) from the centre. Precondition: |dr|, |dc| <= R (checked under
  /// COALESCE_DEBUG).
  COALESCE_HOST_DEVICE constexpr T operator()(int dr, int dc) const {
    COALESCE_ASSERT(dr >= -R && dr <= R && dc >= -R && dc <= R,
                    "coalesce::neighbourhood: offset beyond the stencil's radius");
    return centre_[dr * row_stride_ + dc];
  }
  /// The input at offset (DR, DC), the offsets checked against R at compile time.
  template <int DR, int DC>
  COALESCE_HOST_DEVICE constexpr T at() const {
    static_assert(DR >= -R && DR <= R && DC >= -R && DC <= R,
                  "coalesce::neighbourhood::at<dr, dc>: the offset is beyond the stencil's radius R; raise R in "
                  "coalesce::stencil<R>");
    return centre_[DR * row_stride_ + DC];
  }

 private:
  const T* centre_;
  int row_stride_;
};

/// The same for a volume: n(dz, dy, dx) is the input at (z + dz, y + dy, x + dx), each offset at
/// most R, after the boundary policy; n.at<dz, dy, dx>() checks the offsets at compile time.
template <class T, int R>
class volume_neighbourhood {
 public:
  using value_type = T;             ///< the input's element type
  static constexpr int radius = R;  ///< the largest offset along each axis

  /// Over values laid out plane by plane, `plane_stride` apart, rows `row_stride` apart, `centre`
  /// pointing at offset (0, 0, 0).
  COALESCE_HOST_DEVICE constexpr volume_neighbourhood(const T* centre, int plane_stride, int row_stride)
      : centre_(centre), plane_stride_(plane_stride), row_stride_(row_stride) {}

  /// The input at offset (dz, dy, dx) from the centre. Precondition: each offset at most R in
  /// magnitude (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE constexpr T operator()(int dz, int dy, int dx) const {
    COALESCE_ASSERT(dz >= -R && dz <= R && dy >= -R && dy <= R && dx >= -R && dx <= R,
                    "coalesce::volume_neighbourhood: offset beyond the stencil's radius");
    return centre_[dz * plane_stride_ + dy * row_stride_ + dx];
  }
  /// The input at offset (DZ, DY, DX), the offsets checked against R at compile time.
  template <int DZ, int DY, int DX>
  COALESCE_HOST_DEVICE constexpr T at() const {
    static_assert(DZ >= -R && DZ <= R && DY >= -R && DY <= R && DX >= -R && DX <= R,
                  "coalesce::volume_neighbourhood::at<dz, dy, dx>: the offset is beyond the stencil's radius R; "
                  "raise R in coalesce::stencil<R>");
    return centre_[DZ * plane_stride_ + DY * row_stride_ + DX];
  }

 private:
  const T* centre_;
  int plane_stride_;
  int row_stride_;
};

/// The same for a one-dimensional input (a span, a column of a soa_view): n(d) is the input at
/// i + d, |d| <= R, after the boundary policy; n.at<d>() checks the offset at compile time.
template <class T, int R>
class line_neighbourhood {
 public:
  using value_type = T;             ///< the input's element type
  static constexpr int radius = R;  ///< the largest offset

  /// Over consecutive values, `centre` pointing at offset 0.
  COALESCE_HOST_DEVICE constexpr explicit line_neighbourhood(const T* centre) : centre_(centre) {}

  /// The input at offset d from the centre. Precondition: |d| <= R (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE constexpr T operator()(int d) const {
    COALESCE_ASSERT(d >= -R && d <= R, "coalesce::line_neighbourhood: offset beyond the stencil's radius");
    return centre_[d];
  }
  /// The input at offset D, the offset checked against R at compile time.
  template <int D>
  COALESCE_HOST_DEVICE constexpr T at() const {
    static_assert(D >= -R && D <= R,
                  "coalesce::line_neighbourhood::at<d>: the offset is beyond the stencil's radius R; raise R in "
                  "coalesce::stencil<R>");
    return centre_[D];
  }

 private:
  const T* centre_;
};

}  // namespace coalesce
