// coalesce: stencils on pitched matrices, volumes and lines. out(r, c) = f(n) for every element
// of the output, where n is the radius-R neighbourhood of the input(s) around (r, c) - or around
// (z, y, x), n(dz, dy, dx), on a pitched_volume, or i, n(d), on a cuda::std::span: finite
// differences, Jacobi sweeps, image filters, wave equations. Reads beyond the edge follow a
// boundary policy (boundary.hpp); f's neighbourhoods are in <coalesce/neighbourhood.hpp>.
//
//   coalesce::stencil<1>(in, out, [] __device__(auto n) { return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1)); });
//   coalesce::stencil<2>(coalesce::periodic, coalesce::inputs(u, v), out, [] __device__(auto u, auto v) { ... });
//   coalesce::stencil<1>(volume_in, volume_out, [] __device__(auto n) { return n(-1, 0, 0) + n(1, 0, 0) - 2 * n(0, 0, 0); });
//   coalesce::stencil<1>(span_in, span_out, [] __device__(auto n) { return n(-1) - 2 * n(0) + n(1); });
//
// Needs a CUDA compiler (it launches kernels).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/stencil.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/boundary.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/stencil_launch.hpp>
#  include <coalesce/inputs.hpp>
#  include <coalesce/neighbourhood.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/pitched_volume.hpp>

#  include <cuda/std/span>
#  include <cuda_runtime_api.h>

#  include <type_traits>

namespace coalesce {

/// out(r, c) = f(n...) on the device for every element of `out`, asynchronously: n is the radius-R
/// neighbourhood of each input around (r, c), reads beyond the edge following `policy`
/// (coalesce::clamp, periodic, constant(v), interior). `in` is a pitched_view or pitched_matrix of
/// device memory, or several of one shape as coalesce::inputs(u, v) (f then takes one
/// neighbourhood per input); `out` a pitched_view or pitched_matrix of the same shape, of any
/// element type f's result converts to. Volumes work the same way: pitched_volume_views or
/// pitched_volumes in and out, f taking coalesce::volume_neighbourhood, n(dz, dy, dx); so do lines:
/// cuda::std::spans of device memory in and out (a soa_view's column is
/// coalesce::column_span<&T::x>(view)), f taking coalesce::line_neighbourhood, n(d). Runs on
/// `stream`; without one, on the output container's stream, else the first input container's,
/// else stream 0.
///
/// Each thread computes one 16-byte vector of outputs (4 floats) in each of K consecutive rows
/// (K = 2 for R = 1, 4 beyond, fewer for several or wide inputs), from the 16-byte vectors of
/// those rows and R above and below, and the R elements on either side, all read through the
/// read-only path; each vector is stored as one access. A block's threads cover neighbouring
/// bands, so the rows two bands share are read from DRAM once and found in L1 the second time. On
/// a volume a thread walks z through 32 planes, one vector of outputs of one row in each (the 2.5D
/// scheme of Micikevicius' 3D finite-difference kernels): a queue in registers holds its column's
/// vectors of planes z - R .. z + R, so each plane costs one new load along z, and the plane's own
/// rows come from L1 as in the 2D walk. On a line a thread loads one 16-byte vector and the R
/// elements on either side (its neighbours' vectors, found in L1). f may read any offset; the walk is fast for star shapes
/// (off the plane, only n(dz, 0, 0)) and loads other off-plane neighbours one by one
/// (docs/stencils.md). Elements that are not 1, 2, 4 or 8 bytes (or inputs of
/// different sizes, rows not 16-byte aligned, R wider than a thread's vector) take a walk of one
/// element per thread, correct and coalesced but slower.
///
/// Throws std::invalid_argument if the shapes differ, an input overlaps the output (in place is
/// not possible: neighbours would be read after being written), or, under interior, an extent of
/// the output is 2R or less (no element would be written); coalesce::cuda_error if the launch
/// fails. All before anything is launched.
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, nullptr);
}
/// The same, ordered on `stream`.
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, &stream);
}
/// The same with coalesce::clamp.
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, nullptr);
}
/// The same with coalesce::clamp, ordered on `stream`.
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, &stream);
}

}  // namespace coalesce

#endif  // __CUDACC__
