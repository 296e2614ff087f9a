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
//   auto result = coalesce::stencil<1>(200, coalesce::interior, u, v, jacobi);  // 200 sweeps, u <-> v
//   auto result = coalesce::stencil<1>(100, coalesce::clamp, volume_u, volume_v, laplace);  // volumes too
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
#  include <coalesce/detail/stencil_iterate.hpp>
#  include <coalesce/detail/stencil_launch.hpp>
#  include <coalesce/inputs.hpp>
#  include <coalesce/neighbourhood.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/pitched_volume.hpp>

#  include <cuda/std/span>
#  include <cuda_runtime_api.h>

#  include <cstddef>
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

/// How many sweeps an iterated stencil, coalesce::stencil<R>(steps, ...), fuses into one pass over
/// memory: coalesce::fuse{k}, k >= 1 (1: single sweeps, one pass each). Without it the call
/// chooses k from R, the element size, the shared memory of a block and the registers of a
/// thread's window (docs/stencils.md, "Iterated stencils"); a k beyond what the fused walk holds
/// for R and the element type throws std::invalid_argument.
struct fuse {
  std::size_t sweeps;  ///< k, the sweeps of one pass

  /// k sweeps a pass, from any integer, so that fuse{k} with an int k is no narrowing error (a
  /// negative k becomes a count no walk holds, and is refused).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr explicit fuse(I k) : sweeps(static_cast<std::size_t>(k)) {}
};

/// `steps` Jacobi-style sweeps of f on the device, asynchronously: sweep 1 reads `u` and writes
/// `v`, sweep 2 reads `v` and writes `u`, and so on, each exactly as coalesce::stencil<R>(policy,
/// in, out, f) would compute it, bit for bit, under every policy. Returns the view holding the
/// result: u's after an even number of steps (0 included), v's after an odd one. The other matrix
/// then holds an earlier sweep, not necessarily the one before the last. Under interior the border
/// of both (the elements within R of the edge) is never written, as with single sweeps.
///
/// `u` and `v` are pitched_views or pitched_matrix of device memory, of one element type and one
/// shape, f taking one coalesce::neighbourhood; or two pitched_volume_views or pitched_volumes, f
/// taking one coalesce::volume_neighbourhood. f returns what converts to the element type. Several
/// sweeps are fused into one pass over memory (temporal blocking): on a matrix a block loads its
/// tile and a halo of kR into shared memory, does k sweeps there, and writes the tile; on a volume
/// a block walks z with its k sweeps a few planes apart, each keeping its planes in a ring in
/// shared memory and its thread's column of them in registers. DRAM sees about one read and one
/// write per k sweeps. Elements of other than 4 or 8 bytes, radii whose window does not fit in
/// registers (on a volume: beyond 2), and a single step take single sweeps; so does a volume
/// without coalesce::fuse, for now: the fused walk of volumes in its present form has not run on a
/// GPU, and the form before it measured slower than single sweeps (docs/stencils.md, "Iterated
/// stencils on volumes"). Runs on `stream`; without one, on u's container's stream, else v's, else
/// stream 0.
///
/// Throws std::invalid_argument (before anything is launched, whatever `steps` is) if the shapes
/// differ, u and v overlap, or, under interior, an extent is 2R or less; and for a coalesce::fuse
/// the walk cannot take (on a volume, also one whose rings need more shared memory than the device
/// gives a block). coalesce::cuda_error if a launch fails.
template <int R, class Policy, class U, class V, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
auto stencil(std::size_t steps, const Policy& policy, U&& u, V&& v, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, policy, u, v, f, 0, false, nullptr);
}
/// The same, ordered on `stream`.
template <int R, class Policy, class U, class V, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
auto stencil(std::size_t steps, const Policy& policy, U&& u, V&& v, F f, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, policy, u, v, f, 0, false, &stream);
}
/// The same, fusing `sweeps.sweeps` sweeps a pass.
template <int R, class Policy, class U, class V, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
auto stencil(std::size_t steps, const Policy& policy, U&& u, V&& v, F f, fuse sweeps) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, policy, u, v, f, sweeps.sweeps, true, nullptr);
}
/// The same, fusing `sweeps.sweeps` sweeps a pass, ordered on `stream`.
template <int R, class Policy, class U, class V, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
auto stencil(std::size_t steps, const Policy& policy, U&& u, V&& v, F f, fuse sweeps, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, policy, u, v, f, sweeps.sweeps, true, &stream);
}
/// `steps` sweeps with coalesce::clamp.
template <int R, class U, class V, class F,
          std::enable_if_t<!is_boundary_policy_v<std::remove_cv_t<std::remove_reference_t<U>>>, int> = 0>
auto stencil(std::size_t steps, U&& u, V&& v, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, clamp, u, v, f, 0, false, nullptr);
}
/// `steps` sweeps with coalesce::clamp, ordered on `stream`.
template <int R, class U, class V, class F,
          std::enable_if_t<!is_boundary_policy_v<std::remove_cv_t<std::remove_reference_t<U>>>, int> = 0>
auto stencil(std::size_t steps, U&& u, V&& v, F f, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, clamp, u, v, f, 0, false, &stream);
}
/// `steps` sweeps with coalesce::clamp, fusing `sweeps.sweeps` a pass.
template <int R, class U, class V, class F,
          std::enable_if_t<!is_boundary_policy_v<std::remove_cv_t<std::remove_reference_t<U>>>, int> = 0>
auto stencil(std::size_t steps, U&& u, V&& v, F f, fuse sweeps) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, clamp, u, v, f, sweeps.sweeps, true, nullptr);
}
/// `steps` sweeps with coalesce::clamp, fusing `sweeps.sweeps` a pass, ordered on `stream`.
template <int R, class U, class V, class F,
          std::enable_if_t<!is_boundary_policy_v<std::remove_cv_t<std::remove_reference_t<U>>>, int> = 0>
auto stencil(std::size_t steps, U&& u, V&& v, F f, fuse sweeps, cudaStream_t stream) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::stencil");
  return detail::iterate_checked<R>(steps, clamp, u, v, f, sweeps.sweeps, true, &stream);
}

}  // namespace coalesce

#endif  // __CUDACC__
