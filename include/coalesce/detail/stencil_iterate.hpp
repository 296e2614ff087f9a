// coalesce::detail: iterated stencils on matrices and volumes - the checks, the choice of k (sweeps
// fused per pass over memory), the plan of passes, and their launches: the fused walks
// (stencil_fused_walk.hpp, stencil_fused_volume_walk.hpp) or, where they do not apply, single
// sweeps ping-ponging. Users never include this header; <coalesce/stencil.hpp> does. Needs a
// CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/stencil_fused_volume_walk.hpp>
#include <coalesce/detail/stencil_fused_walk.hpp>
#include <coalesce/detail/stencil_fusion.hpp>
#include <coalesce/detail/stencil_launch.hpp>
#include <coalesce/detail/stencil_volume_fusion.hpp>
#include <coalesce/error.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Refuses a coalesce::fuse{k} the fused walk (Geometry: fused_geometry of a matrix or
// fused_volume_geometry of a volume) cannot take for radius R: k = 0, or more than
// Geometry::most_sweeps (1 where the walk does not take the element type or the radius).
template <class Geometry, int R>
void check_fuse_request(std::size_t requested, const char* takes) {
  using g = Geometry;
  if (requested == 0)
    throw std::invalid_argument("coalesce::stencil: coalesce::fuse{0} fuses no sweep; fuse{1} asks for single sweeps");
  if (requested > std::size_t(g::most_sweeps()))
    throw std::invalid_argument(
        "coalesce::stencil<" + std::to_string(R) + ">: coalesce::fuse{" + std::to_string(requested) +
        "} asks for more sweeps a pass than the fused walk holds for this radius and element size (" +
        (g::supported ? "at most " + std::to_string(g::most_sweeps()) : std::string(takes) + ": 1, single sweeps") +
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

// `steps` single sweeps (the band walk of a matrix, the 2.5D walk of a volume): u -> v -> u ...
template <int R, class Policy, template <class, class> class View, class T, class Space, class F>
void single_sweeps(std::size_t steps, const Policy& policy, View<T, Space> u, View<T, Space> v, const F& f,
                   cudaStream_t stream) {
  for (std::size_t s = 0; s < steps; ++s) {
    launch_stencil<R>(policy, cuda::std::tuple<View<const T, Space>>(u), v, f, stream);
    std::swap(u, v);
  }
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
  if (fuse_given)
    check_fuse_request<fused_geometry<R, sizeof(T)>, R>(
        requested, "it takes elements of 4 or 8 bytes and a radius whose window fits in registers");
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
  single_sweeps<R>(steps, policy, u, v, f, stream);  // plan.longest() is 1 where k or steps are
  return result;
}

// The sweeps one pass fuses for a call of `steps` sweeps of radius R on a volume of T on the
// current device: `requested` (coalesce::fuse{k}) where fuse_given, else 1 (single sweeps, the
// 2.5D walk) while fused_volume_walk_by_default is false, and then the automatic choice for the
// device's shared memory; 1 for a single step. A requested k whose rings do not fit the device's
// shared memory is refused.
template <int R, class T>
std::size_t iterated_volume_sweeps_per_pass(std::size_t steps, std::size_t requested, bool fuse_given) {
  using g = fused_volume_geometry<R, sizeof(T)>;
  if constexpr (!g::supported) {
    return 1;
  } else {
    const std::size_t limit = opt_in_shared_bytes(current_device());
    std::size_t k = fuse_given                     ? requested
                    : fused_volume_walk_by_default ? std::size_t(automatic_fused_volume_sweeps<R, sizeof(T)>(limit))
                                                   : 1;
    if (steps < 2) k = 1;
    if (k > 1 && g::shared_bytes(int(k)) > limit)
      throw std::invalid_argument("coalesce::stencil<" + std::to_string(R) + ">: coalesce::fuse{" + std::to_string(k) +
                                  "} on a volume needs " + std::to_string(g::shared_bytes(int(k)) / 1024) +
                                  " KiB of shared memory a block; this device gives " + std::to_string(limit / 1024) +
                                  " KiB");
    return k;
  }
}

// Calls visit(std::integral_constant<int, K>{}) for the k of a fused volume pass: K is the
// kernel's, each sweep's queue of registers needing it at compile time.
template <int R, class T, class Visit>
void with_volume_sweeps(int k, const Visit& visit) {
  using g = fused_volume_geometry<R, sizeof(T)>;
  static_assert(g::most_sweeps() <= 4, "with_volume_sweeps: add the cases for more sweeps a pass");
  switch (k) {
    case 2: visit(std::integral_constant<int, 2>{}); break;
    case 3:
      if constexpr (g::most_sweeps() >= 3) visit(std::integral_constant<int, 3>{});
      break;
    case 4:
      if constexpr (g::most_sweeps() >= 4) visit(std::integral_constant<int, 4>{});
      break;
    default: break;
  }
}

// One pass of K fused sweeps on a volume; the kernel has been allowed its shared memory.
template <int R, int K, class Index, class Policy, class T, class F>
void launch_fused_volume_pass(const Policy& policy, pitched_volume_view<const T> in, pitched_volume_view<T> out,
                              const fused_volume_pass<T>& pass, const F& f, cudaStream_t stream) {
  using g = fused_volume_geometry<R, sizeof(T)>;
  constexpr auto kernel = stencil_fused_volume_kernel<R, K, T, Index, Policy, F>;
  const std::size_t tile_rows = std::size_t(g::tile_rows(K)), tile_cols = std::size_t(g::tile_cols(K)),
                    planes = std::size_t(pass.planes_per_block);
  const dim3 block(fused_volume_threads_x, fused_volume_threads_y);
  const dim3 grid(unsigned((out.width() + tile_cols - 1) / tile_cols),
                  unsigned(std::min<std::size_t>((out.height() + tile_rows - 1) / tile_rows, 65535)),
                  unsigned(std::min<std::size_t>((out.depth() + planes - 1) / planes, 65535)));
  kernel<<<grid, block, g::shared_bytes(K), stream>>>(policy, in, out, pass, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

// The planes a block of the fused volume walk takes along z: fused_volume_planes_per_block, or
// fewer where the volume's tiles would otherwise give fewer than about four blocks for each a
// device holds at once (two a multiprocessor), down to 16.
template <int R, class T>
int fused_volume_chunk_planes(std::size_t depth, std::size_t height, std::size_t width, int k) {
  using g = fused_volume_geometry<R, sizeof(T)>;
  const std::size_t tiles = ((height + std::size_t(g::tile_rows(k)) - 1) / std::size_t(g::tile_rows(k))) *
                            ((width + std::size_t(g::tile_cols(k)) - 1) / std::size_t(g::tile_cols(k)));
  const std::size_t wanted = 4 * 2 * std::size_t(multiprocessor_count(current_device()));
  const std::size_t chunks = (wanted + tiles - 1) / tiles;
  const std::size_t planes = (depth + chunks - 1) / chunks;
  return int(std::clamp<std::size_t>(planes, 16, std::size_t(fused_volume_planes_per_block)));
}

// `steps` sweeps of f on a volume, as iterate_stencil does on a matrix.
template <int R, class Policy, class T, class F>
pitched_volume_view<T> iterate_stencil(std::size_t steps, const Policy& policy, pitched_volume_view<T> u,
                                       pitched_volume_view<T> v, const F& f, std::size_t requested, bool fuse_given,
                                       cudaStream_t stream) {
  static_assert(!std::is_const_v<T>,
                "coalesce::stencil: an iterated stencil writes both volumes; neither may be const");
  const bool work = stencil_operands_ready<R, Policy>(cuda::std::tuple<pitched_volume_view<const T>>(u), v);
  using g = fused_volume_geometry<R, sizeof(T)>;
  if (fuse_given)
    check_fuse_request<g, R>(requested, "on a volume it takes elements of 4 or 8 bytes and radius 1 or 2");
  const pitched_volume_view<T> result = steps % 2 == 0 ? u : v;
  if (!work || steps == 0) return result;
  const std::size_t k = iterated_volume_sweeps_per_pass<R, T>(steps, requested, fuse_given);

  const fused_pass_plan plan = plan_fused_passes(steps, k);
  if constexpr (g::supported) {
    if (k > 1 && plan.longest() > 1) {
      fused_volume_pass<T> pass;
      pass.border[0] = u;
      pass.border[1] = v;
      pass.planes_per_block = fused_volume_chunk_planes<R, T>(u.depth(), u.height(), u.width(), int(plan.longest()));
      const bool narrow =
          positions_fit_int({u.depth() + std::size_t(plan.longest() * (2 * R + 1)) + std::size_t(pass.planes_per_block),
                             u.height() + std::size_t(g::region_rows), u.width() + std::size_t(g::region_cols)});
      // The kernels of the passes' lengths (plan.sweeps and plan.longest()), allowed their shared
      // memory; a pass of one sweep is a single sweep.
      for (const std::size_t sweeps : {plan.sweeps, plan.longest()})
        with_volume_sweeps<R, T>(int(sweeps), [&](auto K) {
          constexpr int k_ = decltype(K)::value;
          if (narrow) allow_shared_bytes<stencil_fused_volume_kernel<R, k_, T, int, Policy, F>>(g::shared_bytes(k_));
          else allow_shared_bytes<stencil_fused_volume_kernel<R, k_, T, long long, Policy, F>>(g::shared_bytes(k_));
        });
      pitched_volume_view<T> a = u, b = v;
      for (std::size_t p = 0; p < plan.passes; ++p) {
        pass.sweeps = int(plan.sweeps_of(p));
        if (pass.sweeps == 1) {
          single_sweeps<R>(1, policy, a, b, f, stream);
        } else {
          with_volume_sweeps<R, T>(pass.sweeps, [&](auto K) {
            constexpr int k_ = decltype(K)::value;
            const pitched_volume_view<const T> from(a);
            if (narrow) launch_fused_volume_pass<R, k_, int>(policy, from, b, pass, f, stream);
            else launch_fused_volume_pass<R, k_, long long>(policy, from, b, pass, f, stream);
          });
        }
        pass.t0 += (unsigned long long)pass.sweeps;
        std::swap(a, b);
      }
      return result;
    }
  }
  single_sweeps<R>(steps, policy, u, v, f, stream);
  return result;
}

// What an iterated stencil needs of its two operands: two matrices or two volumes, views or
// containers of device memory, of one element type, both writable. Each requirement is one
// static_assert, and what follows a failed one is not compiled, so that a misuse is one error
// (tests/compile_fail/stencil_steps_*).
template <int R, class Policy, class U, class V, class F>
auto iterate_checked(std::size_t steps, const Policy& policy, U& u, V& v, const F& f, std::size_t requested,
                     bool fuse_given, const cudaStream_t* stream) {
  static_assert(R >= 1 && R <= 8, "coalesce::stencil<R>: the radius R must be 1 to 8");
  using u_output = stencil_output_of<std::remove_const_t<U>>;
  using v_output = stencil_output_of<std::remove_const_t<V>>;
  constexpr bool known = u_output::known && v_output::known;
  static_assert(known, "coalesce::stencil: an iterated stencil takes two matrices or two volumes, each a "
                       "coalesce::pitched_view or pitched_matrix, pitched_volume_view or pitched_volume");
  if constexpr (known && R >= 1 && R <= 8) {
    constexpr bool grids = u_output::rank == v_output::rank && (u_output::rank == 2 || u_output::rank == 3);
    static_assert(grids, "coalesce::stencil: an iterated stencil takes two matrices, coalesce::pitched_view or "
                         "pitched_matrix, or two volumes, pitched_volume_view or pitched_volume; not lines, nor a "
                         "matrix with a volume");
    if constexpr (grids) {
      using u_view = decltype(u_output::view(u));
      using v_view = decltype(v_output::view(v));
      constexpr bool same_type = std::is_same_v<std::remove_const_t<typename u_view::element_type>,
                                                std::remove_const_t<typename v_view::element_type>> &&
                                 std::is_same_v<typename u_view::memory_space, typename v_view::memory_space>;
      static_assert(same_type, "coalesce::stencil: an iterated stencil's two operands must hold one element type, "
                               "in one memory space");
      constexpr bool device = u_output::device;
      static_assert(!same_type || device,
                    "coalesce::stencil: an iterated stencil's operands must be in device memory (a host_space one "
                    "cannot be read by the GPU: copy it into a device one)");
      constexpr bool writable = u_output::writable && v_output::writable &&
                                !(std::is_const_v<U> && u_output::is_container) &&
                                !(std::is_const_v<V> && v_output::is_container);
      static_assert(!(same_type && device) || writable,
                    "coalesce::stencil: an iterated stencil writes both operands; neither may be read-only (a view "
                    "of const T or a const container)");
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
