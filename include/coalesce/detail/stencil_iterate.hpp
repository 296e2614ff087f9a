// coalesce::detail: iterated stencils on matrices - the checks, the choice of k (sweeps fused per
// pass over memory), the plan of passes, and their launches: the fused walk
// (stencil_fused_walk.hpp) or, where it does not apply, single sweeps ping-ponging. Users never
// include this header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/stencil_fused_walk.hpp>
#include <coalesce/detail/stencil_fusion.hpp>
#include <coalesce/detail/stencil_launch.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Refuses a coalesce::fuse{k} the fused walk cannot take for radius R and elements of type T:
// k = 0, or more than fused_geometry::most_sweeps (1 where the walk does not take T or R).
template <int R, class T>
void check_fuse_request(std::size_t requested) {
  using g = fused_geometry<R, sizeof(T)>;
  if (requested == 0)
    throw std::invalid_argument("coalesce::stencil: coalesce::fuse{0} fuses no sweep; fuse{1} asks for single sweeps");
  if (requested > std::size_t(g::most_sweeps()))
    throw std::invalid_argument(
        "coalesce::stencil<" + std::to_string(R) + ">: coalesce::fuse{" + std::to_string(requested) +
        "} asks for more sweeps a pass than the fused walk holds for this radius and element size (" +
        (g::supported ? "at most " + std::to_string(g::most_sweeps())
                      : std::string("it takes elements of 4 or 8 bytes and a radius whose window fits in registers: "
                                    "1, single sweeps")) +
        ")");
}

// The sweeps one pass fuses for a call of `steps` sweeps of radius R on elements of type T on the
// current device: `requested` (coalesce::fuse{k}, checked by check_fuse_request) where fuse_given,
// else the automatic choice; 1 means single sweeps (the band walk). 1 as well for a single step,
// and where the device cannot give a block the walk's shared memory.
template <int R, class T>
std::size_t iterated_sweeps_per_pass(std::size_t steps, std::size_t requested, bool fuse_given) {
  using g = fused_geometry<R, sizeof(T)>;
  if constexpr (!g::supported) {
    return 1;
  } else {
    std::size_t k = fuse_given ? requested : std::size_t(automatic_fused_sweeps<R, sizeof(T)>());
    if (steps < 2) k = 1;
    if (k > 1 && opt_in_shared_bytes(current_device()) < g::shared_bytes) k = 1;
    return k;
  }
}

// Lets `Kernel` have `bytes` of dynamic shared memory, beyond the 48 KiB every block may have.
template <auto Kernel>
void allow_shared_bytes(std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  throw_on_error(::cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
                 "coalesce::stencil: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

// One pass of `pass.sweeps` fused sweeps from `in` (time pass.t0) into `out`; the kernel has been
// allowed its shared memory (allow_shared_bytes).
template <int R, class Index, class Policy, class T, class F>
void launch_fused_pass(const Policy& policy, pitched_view<const T> in, pitched_view<T> out, const fused_pass<T>& pass,
                       const F& f, cudaStream_t stream) {
  using g = fused_geometry<R, sizeof(T)>;
  constexpr auto kernel = stencil_fused_kernel<R, T, Index, Policy, F>;
  const std::size_t tile_rows = std::size_t(g::tile_rows(pass.sweeps)),
                    tile_cols = std::size_t(g::tile_cols(pass.sweeps));
  const dim3 block(fused_threads_x, fused_threads_y);
  const dim3 grid(unsigned((out.cols() + tile_cols - 1) / tile_cols),
                  unsigned(std::min<std::size_t>((out.rows() + tile_rows - 1) / tile_rows, 65535)));
  kernel<<<grid, block, g::shared_bytes, stream>>>(policy, in, out, pass, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

// `steps` sweeps of f from u, ping-ponging with v; returns the view holding the result (u's for an
// even number of steps, v's for an odd one). `requested` is coalesce::fuse's k where fuse_given.
template <int R, class Policy, class T, class F>
pitched_view<T> iterate_stencil(std::size_t steps, const Policy& policy, pitched_view<T> u, pitched_view<T> v,
                                const F& f, std::size_t requested, bool fuse_given, cudaStream_t stream) {
  static_assert(!std::is_const_v<T>,
                "coalesce::stencil: an iterated stencil writes both matrices; neither may be const");
  // The single sweep's checks, whatever `steps` is: one shape, no overlap, device memory, an
  // interior under interior. Nothing is launched before they pass.
  const bool work = stencil_operands_ready<R, Policy>(cuda::std::tuple<pitched_view<const T>>(u), v);
  if (fuse_given) check_fuse_request<R, T>(requested);
  const pitched_view<T> result = steps % 2 == 0 ? u : v;
  if (!work || steps == 0) return result;
  const std::size_t k = iterated_sweeps_per_pass<R, T>(steps, requested, fuse_given);

  const fused_pass_plan plan = plan_fused_passes(steps, k);
  using g = fused_geometry<R, sizeof(T)>;
  if constexpr (g::supported) {
    if (k > 1 && plan.longest() > 1) {
      fused_pass<T> pass;
      pass.border[0] = u;
      pass.border[1] = v;
      const bool narrow =
          positions_fit_int({u.rows() + std::size_t(g::region_rows), u.cols() + std::size_t(g::region_cols)});
      if (narrow) allow_shared_bytes<stencil_fused_kernel<R, T, int, Policy, F>>(g::shared_bytes);
      else allow_shared_bytes<stencil_fused_kernel<R, T, long long, Policy, F>>(g::shared_bytes);
      pitched_view<T> a = u, b = v;
      for (std::size_t p = 0; p < plan.passes; ++p) {
        pass.sweeps = int(plan.sweeps_of(p));
        if (narrow) launch_fused_pass<R, int>(policy, pitched_view<const T>(a), b, pass, f, stream);
        else launch_fused_pass<R, long long>(policy, pitched_view<const T>(a), b, pass, f, stream);
        pass.t0 += (unsigned long long)pass.sweeps;
        std::swap(a, b);
      }
      return result;
    }
  }
  // Single sweeps, the band walk: u -> v -> u ... (plan.longest() is 1 where k or steps are).
  pitched_view<T> a = u, b = v;
  for (std::size_t s = 0; s < steps; ++s) {
    launch_stencil<R>(policy, cuda::std::tuple<pitched_view<const T>>(a), b, f, stream);
    std::swap(a, b);
  }
  return result;
}

// What an iterated stencil needs of its two matrices: views or containers of device memory, of
// one element type, both writable. Each requirement is one static_assert, and what follows a
// failed one is not compiled, so that a misuse is one error (tests/compile_fail/stencil_steps_*).
template <int R, class Policy, class U, class V, class F>
auto iterate_checked(std::size_t steps, const Policy& policy, U& u, V& v, const F& f, std::size_t requested,
                     bool fuse_given, const cudaStream_t* stream) {
  static_assert(R >= 1 && R <= 8, "coalesce::stencil<R>: the radius R must be 1 to 8");
  using u_output = stencil_output_of<std::remove_const_t<U>>;
  using v_output = stencil_output_of<std::remove_const_t<V>>;
  constexpr bool known = u_output::known && v_output::known;
  static_assert(known, "coalesce::stencil: an iterated stencil takes two matrices, each a coalesce::pitched_view or "
                       "pitched_matrix");
  if constexpr (known && R >= 1 && R <= 8) {
    constexpr bool matrices = u_output::rank == 2 && v_output::rank == 2;
    static_assert(matrices, "coalesce::stencil: an iterated stencil takes two matrices, each a coalesce::pitched_view "
                            "or pitched_matrix");
    if constexpr (matrices) {
      using u_view = decltype(u_output::view(u));
      using v_view = decltype(v_output::view(v));
      constexpr bool same_type = std::is_same_v<std::remove_const_t<typename u_view::element_type>,
                                                std::remove_const_t<typename v_view::element_type>> &&
                                 std::is_same_v<typename u_view::memory_space, typename v_view::memory_space>;
      static_assert(same_type,
                    "coalesce::stencil: an iterated stencil's two matrices must hold one element type, in one memory "
                    "space");
      constexpr bool device = u_output::device;
      static_assert(!same_type || device,
                    "coalesce::stencil: an iterated stencil's matrices must be in device memory (a host_space one "
                    "cannot be read by the GPU: copy it into a device one)");
      constexpr bool writable = u_output::writable && v_output::writable &&
                                !(std::is_const_v<U> && u_output::is_container) &&
                                !(std::is_const_v<V> && v_output::is_container);
      static_assert(!(same_type && device) || writable,
                    "coalesce::stencil: an iterated stencil writes both matrices; neither may be read-only (a view of "
                    "const T or a const container)");
      if constexpr (same_type && device && writable) {
        const cudaStream_t s = stream ? *stream : u_output::stream(u, v_output::stream(v, cudaStream_t{}));
        return iterate_stencil<R>(steps, policy, u_output::view(u), v_output::view(v), f, requested, fuse_given, s);
      } else {
        return u_view{};
      }
    } else {
      return 0;
    }
  } else {
    return 0;
  }
}

}  // namespace coalesce::detail
