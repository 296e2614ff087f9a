// coalesce: for_each_pair, the all-pairs interaction of particle codes (direct-sum gravity,
// Coulomb, a pair potential), written as the plain one-thread-per-body loop and run as the tiled
// shared-memory kernel of GPU Gems 3, ch. 31. For every particle i: an accumulator a = A{}, then
// f(p_i, p_j, a) for every j != i, then out[i] = a.
//
//   coalesce::for_each_pair(bodies, accel, [=] __device__(const auto& p_i, const auto& p_j, auto& a) {
//     const float dx = p_j.x - p_i.x, dy = p_j.y - p_i.y, dz = p_j.z - p_i.z;
//     const float inv_r = rsqrtf(eps2 + dx * dx + dy * dy + dz * dz);
//     const float s = p_j.m * inv_r * inv_r * inv_r;
//     a.x += dx * s, a.y += dy * s, a.z += dz * s;
//   });
//
// One thread per i, its particle read once, coalesced, into registers. The block takes the
// particles j a tile of one per thread at a time (512, detail/pair_tiles.hpp): each thread loads
// one j of every column, coalesced, into shared memory, one array per leaf, and every thread runs
// f over the whole tile, all on the same j, so shared reads are broadcasts (no bank conflict) and
// 4 j's of a float column are one 16-byte read. p_j is a plain T built from those reads, so the
// leaves f never reads are never read from shared memory. Only the tile holding the block's own
// particles tests j != i; the others run with no test per pair.
//
// Moves: each particle once into its own thread, and every particle into every block's shared
// memory, n^2 / 512 particle reads from L2 in all (every column of T: a soa_view of a struct of
// only the fields f reads, over the same columns, moves less); out is written once and never
// read. Work: n (n - 1) calls of f, O(n^2), so the kernel is bound by f's arithmetic, not by
// memory. The grid is one thread per particle: 64 K bodies take a quarter of an H200's thread
// slots, and keep its arithmetic as busy as the hand-written tiled kernel does. The j of one i
// are not split over blocks, which would need a way to combine two accumulators.
//
// Measured on an NVIDIA H200, CUDA 13.0 (tests/device/for_each_pair.cu, full scope), softened
// gravity on float bodies: 64 K in 2.77 ms, 512 K in 168.7 ms; 1.55x and 1.45x a plain
// one-thread-per-body kernel, 1.02x and 0.99x a hand-written float4 tiled kernel, each of those
// at its best block size. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/for_each_pair.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/device_memory.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/pair_tiles.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <stdexcept>
#  include <string>
#  include <type_traits>

namespace coalesce {

/// For every particle i of `particles`, on `stream`: `A a{}` (value-initialized), then
/// f(p_i, p_j, a) for every particle j != i (never j == i), then out[i] = a.
///
/// p_i and p_j are `const T&`, copies of the two particles in registers: take them as
/// `const auto&` and read their fields by name (p_j.x, p_j.pos.x for a nested field). `a` is an
/// `A&`, A the element type of `out` (a struct of COALESCE_FIELDS, or one coalesce reflects):
/// take it as `auto&` and add into it. `f` is called n * (n - 1) times, the j of one i in an order
/// that is unspecified: floating-point sums may differ in their last bits from a serial loop over
/// j (integer sums do not).
///
/// Preconditions: out.size() == particles.size(); out does not overlap the particles; `f` does
/// not write the particles (through what it captures: p_i and p_j are copies). `f` may read what
/// it captures. Nothing else is touched: out is written, element by element, once each, and not
/// read. Throws std::invalid_argument if the sizes differ or (under COALESCE_DEBUG) a view is not
/// of device memory, coalesce::cuda_error if the launch fails (or, attributed to the caller, if an
/// earlier error was pending). Asynchronous on `stream`.
template <class T, class A, class F>
void for_each_pair(soa_view<T, device_space> particles, soa_view<A, device_space> out, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_pair");
  using particle = std::remove_const_t<T>;
  static_assert(!std::is_const_v<A>,
                "coalesce::for_each_pair: out must be writable: pass a soa_view<A> (soa_vector::view()), not a "
                "soa_view<const A>");
  static_assert(detail::pair_threads_v<particle> != 0,
                "coalesce::for_each_pair: T's leaves take more than 1536 bytes, so a tile of 32 particles does not fit "
                "48 KiB of shared memory; pass a view of a struct of only the fields f reads");
  constexpr const char* what = "coalesce::for_each_pair";
  if (out.size() != particles.size())
    throw std::invalid_argument(std::string(what) + ": out has " + std::to_string(out.size()) + " elements for " +
                                std::to_string(particles.size()) + " particles; it must have one per particle");
  if (particles.empty()) return;
  detail::require_device_memory(particles.columns()[0], what);
  detail::require_device_memory(out.columns()[0], what);
  detail::throw_if_earlier_error(what);
  if constexpr (!std::is_const_v<A> && detail::pair_threads_v<particle> != 0) {  // else the messages above only
    constexpr unsigned threads = detail::pair_threads_v<particle>;
    const std::size_t blocks = (particles.size() + threads - 1) / threads;
    detail::pair_tiles_kernel<particle, A, F><<<detail::grid_for_all(blocks), threads, 0, stream>>>(
        soa_view<const particle, device_space>(particles), out, f);
    detail::throw_if_launch_failed("coalesce::for_each_pair kernel launch");
  }
}

/// for_each_pair of a device soa_vector into a device soa_vector, on the particles' stream. out
/// must be ordered on that stream: the two containers' streams must be the same
/// (std::invalid_argument otherwise; pass views and a stream to order them yourself).
template <class T, class R1, class A, class R2, class F>
void for_each_pair(const soa_vector<T, device_space, R1>& particles, soa_vector<A, device_space, R2>& out, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::for_each_pair");
  if (particles.stream() != out.stream())
    throw std::invalid_argument(
        "coalesce::for_each_pair: the particles and out are on different streams; pass their views and the stream "
        "to run on, once out's stream is ordered before it");
  for_each_pair(particles.const_view(), out.view(), f, particles.stream());
}

}  // namespace coalesce

#endif  // __CUDACC__
