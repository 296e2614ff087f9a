// coalesce::detail: the stencil walks of a volume - the 2.5D walk along z with a queue of planes
// in registers, and the element walk for what it cannot take. Users never include this header;
// <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/stencil_matrix_walk.hpp>
#include <coalesce/detail/stencil_rows.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/tuple>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// --- volumes -----------------------------------------------------------------------------------

// The 2.5D walk of a volume, the scheme of Micikevicius' 3D finite-difference kernels: a thread
// takes one vector of outputs in each of KY consecutive rows and walks z through a block's chunk
// of planes. Along z each of its output columns keeps a queue in registers, the vectors of planes
// z - R .. z + R, so each step loads one new vector per row from the volume instead of 2R + 1.
// In the plane itself it loads rows y0 - R .. y0 + KY - 1 + R, a block's rows finding the lines
// its neighbours loaded in L1. Off the plane, f reading n(dz, 0, 0) reads the queue; anything else
// there (n(1, 1, 0) of a 19-point stencil) is loaded where it lies: correct for any shape, and
// dead code for the star shapes of finite differences, which is what this walk is fast at.
template <class T, int R, int V, int KY>
struct input_queue {
  static constexpr int width = V + 2 * R, height = KY + 2 * R, planes = 2 * R + 1;
  T queue[KY][planes][V];           // queue[k][R + dz][j]: the input at (z + dz, y0 + k, c0 + j)
  T values[planes][height][width];  // the neighbourhoods at plane z: the input at (z + dz, y0 - R + h, c0 - R + e)

  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE static void load_centre(T* values, const pitched_volume_view<const T>& in,
                                                               Index z, Index y, Index c0, bool whole,
                                                               const Policy& policy) {
    const T* row = row_under(policy, in, z, y);
    if constexpr (is_constant_policy_v<Policy>) {
      if (row == nullptr) {
#pragma unroll
        for (int j = 0; j < V; ++j) values[j] = static_cast<T>(policy.value);
        return;
      }
    }
    load_vector<T, V>(values, row, c0, Index(in.width()), whole, policy);
  }

  // Fills the queues for a walk whose first plane is z: planes z - R .. z + R - 1 (advance loads
  // the last).
  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void start(const pitched_volume_view<const T>& in, Index z, Index y0, Index c0,
                                                  bool whole, const Policy& policy) {
#pragma unroll
    for (int k = 0; k < KY; ++k)
#pragma unroll
      for (int i = 1; i < planes; ++i)
        load_centre(queue[k][i], in, Index(z - R - 1 + i), Index(y0 + k), c0, whole, policy);
  }

  // Moves the walk to plane z: the queues shift by one plane and take plane z + R's vectors, and
  // the neighbourhoods are gathered (only what f reads survives compilation).
  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void advance(const pitched_volume_view<const T>& in, Index z, Index y0, Index c0,
                                                    bool whole, const Policy& policy) {
    const Index cols = Index(in.width());
#pragma unroll
    for (int k = 0; k < KY; ++k) {
#pragma unroll
      for (int i = 0; i + 1 < planes; ++i)
#pragma unroll
        for (int j = 0; j < V; ++j) queue[k][i][j] = queue[k][i + 1][j];
      load_centre(queue[k][planes - 1], in, Index(z + R), Index(y0 + k), c0, whole, policy);
    }
#pragma unroll
    for (int p = 0; p < planes; ++p)
#pragma unroll
      for (int h = 0; h < height; ++h) {
        load_line<T, R, V>(values[p][h], row_under(policy, in, Index(z - R + p), Index(y0 - R + h)), c0, cols, whole,
                           policy);
        if (h >= R && h < R + KY) {  // an output row: its centre vector is in the queue (the load above is dead)
#pragma unroll
          for (int j = 0; j < V; ++j) values[p][h][R + j] = queue[h - R][p][j];
        }
      }
  }

  // What f sees for output element j of the thread's vector in its k-th row.
  COALESCE_DEVICE COALESCE_FORCEINLINE volume_neighbourhood<T, R> at(int k, int j) const {
    return volume_neighbourhood<T, R>(&values[R][R + k][R + j], height * width, width);
  }
};

// The 2.5D walk's shape: one row a thread (two rows, sharing their plane rows, measured slower:
// the second row's queues cost the occupancy that hides the loads' latency), blocks 64 vectors
// wide and 4 rows down, each block walking 32 planes.
struct queue_shape {
  static constexpr int rows_per_thread = 1;
  static constexpr unsigned block_x = 64;
  static constexpr unsigned block_y = stencil_block_threads / block_x;
  static constexpr int planes_per_block = 32;
};

template <int R, int V, int KY, bool WholeVector, class Index, class Policy, class Out, class F, class... Ts,
          std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_queues(const Policy& policy,
                                                      const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
                                                      const pitched_volume_view<Out>& out, const F& f,
                                                      Index vectors_per_row, bool vector_stores, Index planes_per_block,
                                                      std::index_sequence<I...>) {
  if constexpr (stencil_callable_with<volume_neighbourhood, F, R, Out, Ts...>()) {
    const Index depth = Index(out.depth()), rows = Index(out.height()), cols = Index(out.width());
    const Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
    if (v >= vectors_per_row) return;
    const Index c0 = v * V;
    constexpr bool whole_vector = WholeVector;
    bool whole = whole_vector && vector_stores;
    if constexpr (is_interior_v<Policy>) whole = whole && c0 >= R && c0 + V + R <= cols;
    // Under interior, the planes and rows whose neighbourhoods are inside.
    const Index z_first = is_interior_v<Policy> ? Index(R) : Index(0);
    const Index z_last = is_interior_v<Policy> ? depth - Index(R) : depth;  // exclusive
    for (Index y0 = (Index(blockIdx.y) * Index(blockDim.y) + Index(threadIdx.y)) * KY; y0 < rows;
         y0 += Index(gridDim.y) * Index(blockDim.y) * KY) {
      if constexpr (is_interior_v<Policy>)
        if (y0 + KY <= Index(R) || y0 + Index(R) >= rows) continue;  // no interior row
      for (Index chunk = Index(blockIdx.z); chunk * planes_per_block < depth; chunk += Index(gridDim.z)) {
        const Index chunk_begin = chunk * planes_per_block, chunk_end = chunk_begin + planes_per_block;
        const Index z_begin = chunk_begin > z_first ? chunk_begin : z_first;
        const Index z_end = chunk_end < z_last ? chunk_end : z_last;
        if (z_begin >= z_end) continue;
        cuda::std::tuple<input_queue<Ts, R, V, KY>...> queues;
        (cuda::std::get<I>(queues).start(cuda::std::get<I>(in), z_begin, y0, c0, whole_vector, policy), ...);
        for (Index z = z_begin; z < z_end; ++z) {
          (cuda::std::get<I>(queues).advance(cuda::std::get<I>(in), z, y0, c0, whole_vector, policy), ...);
          store_rows<R, V, KY, Policy>(
              y0, rows, c0, cols, whole, [&](Index y) { return out.row(std::size_t(z), std::size_t(y)); },
              [&](int k, int j) { return static_cast<Out>(f(cuda::std::get<I>(queues).at(k, j)...)); });
        }
      }
    }
  }
}

template <int R, int V, int KY, class Index, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(stencil_block_threads)
    stencil_queue_kernel(Policy policy, cuda::std::tuple<pitched_volume_view<const Ts>...> in,
                         pitched_volume_view<Out> out, F f, Index vectors_per_row, bool vector_stores,
                         Index planes_per_block) {
  // A thread's vector is whole in every row or in none: two copies of the walk, so that the
  // partial vector's element-by-element loads are not in the whole one's loop. There each costs
  // an issued (predicated-off) instruction: the 25-point star on 512^3 floats ran at 30% of
  // cudaMemcpy with them, 52% without, on an H200. The price: a warp holding a row's partial
  // vector walks its chunk twice, once for each copy, which only widths off a multiple of V pay.
  // A third copy for the threads whose side columns lie inside the row (loaded as vectors, no
  // clamp) made every row's first and last warp pay it, and took the star from 0.539 to 0.889 ms
  // on an H100 (docs/bench/star-h100/star-plane-second.txt).
  const Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
  if ((v + 1) * V <= Index(out.width()))
    walk_queues<R, V, KY, true>(policy, in, out, f, vectors_per_row, vector_stores, planes_per_block,
                                std::index_sequence_for<Ts...>{});
  else
    walk_queues<R, V, KY, false>(policy, in, out, f, vectors_per_row, vector_stores, planes_per_block,
                                 std::index_sequence_for<Ts...>{});
}

// The element walk of a volume, for what the 2.5D walk cannot take: a thread per output, 128 x 4
// threads a block over the volume's rows, each neighbour read through the read-only path.
template <class T, int R>
struct gathered_volume {
  T values[2 * R + 1][2 * R + 1][2 * R + 1];
  COALESCE_DEVICE COALESCE_FORCEINLINE volume_neighbourhood<T, R> centre() const {
    return volume_neighbourhood<T, R>(&values[R][R][R], (2 * R + 1) * (2 * R + 1), 2 * R + 1);
  }
};

template <int R, class T, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void gather(gathered_volume<T, R>& g, const pitched_volume_view<const T>& in,
                                                 long long z, long long y, long long x, const Policy& policy) {
  const long long cols = (long long)in.width();
#pragma unroll
  for (int dz = -R; dz <= R; ++dz)
#pragma unroll
    for (int dy = -R; dy <= R; ++dy) {
      const T* row = row_under(policy, in, z + dz, y + dy);
#pragma unroll
      for (int dx = -R; dx <= R; ++dx) g.values[R + dz][R + dy][R + dx] = load_element(row, x + dx, cols, policy);
    }
}

template <int R, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_volume_elements(
    const Policy& policy, const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
    const pitched_volume_view<Out>& out, const F& f, std::index_sequence<I...>) {
  if constexpr (stencil_callable_with<volume_neighbourhood, F, R, Out, Ts...>()) {
    const long long depth = (long long)out.depth(), rows = (long long)out.height(), cols = (long long)out.width();
    for (long long zy = (long long)blockIdx.x * blockDim.y + threadIdx.y; zy < depth * rows;
         zy += (long long)gridDim.x * blockDim.y) {
      const long long z = zy / rows, y = zy % rows;
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, z, depth) || !interior_contains(R, y, rows)) continue;
      for (long long x = threadIdx.x; x < cols; x += blockDim.x) {
        if constexpr (is_interior_v<Policy>)
          if (!interior_contains(R, x, cols)) continue;
        cuda::std::tuple<gathered_volume<Ts, R>...> values;
        (gather<R>(cuda::std::get<I>(values), cuda::std::get<I>(in), z, y, x, policy), ...);
        out(std::size_t(z), std::size_t(y), std::size_t(x)) =
            static_cast<Out>(f(cuda::std::get<I>(values).centre()...));
      }
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void stencil_volume_element_kernel(Policy policy, cuda::std::tuple<pitched_volume_view<const Ts>...> in,
                                              pitched_volume_view<Out> out, F f) {
  walk_volume_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

}  // namespace coalesce::detail
