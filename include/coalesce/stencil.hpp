// coalesce: stencils on pitched matrices and volumes. out(r, c) = f(n) for every element of the
// output, where n is the radius-R neighbourhood of the input(s) around (r, c) - or around
// (z, y, x), n(dz, dy, dx), on a pitched_volume: finite differences, Jacobi sweeps, image filters,
// wave equations. Reads beyond the edge follow a boundary policy (boundary.hpp).
//
//   coalesce::stencil<1>(in, out, [] __device__(auto n) { return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1)); });
//   coalesce::stencil<2>(coalesce::periodic, coalesce::inputs(u, v), out, [] __device__(auto u, auto v) { ... });
//   coalesce::stencil<1>(volume_in, volume_out, [] __device__(auto n) { return n(-1, 0, 0) + n(1, 0, 0) - 2 * n(0, 0, 0); });
//
// Needs a CUDA compiler (it launches kernels).
#pragma once

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error "coalesce/stencil.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/device_memory.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/error.hpp>
#include <coalesce/inputs.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coalesce {

// The radius-R neighbourhood of one element of one input, as f receives it: n(dr, dc) is the
// input at (r + dr, c + dc), |dr|, |dc| <= R, after the boundary policy. Offsets known at compile
// time cost nothing (the values are registers); n.at<dr, dc>() checks them at compile time,
// n(dr, dc) under COALESCE_DEBUG. An offset computed at run time indexes a local array.
template <class T, int R>
class neighbourhood {
 public:
  using value_type = T;
  static constexpr int radius = R;

  // Over values laid out row-major, `row_stride` apart, `centre` pointing at offset (0, 0).
  COALESCE_HOST_DEVICE constexpr neighbourhood(const T* centre, int row_stride) : centre_(centre), row_stride_(row_stride) {}

  COALESCE_HOST_DEVICE constexpr T operator()(int dr, int dc) const {
    COALESCE_ASSERT(dr >= -R && dr <= R && dc >= -R && dc <= R, "coalesce::neighbourhood: offset beyond the stencil's radius");
    return centre_[dr * row_stride_ + dc];
  }
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

// The same for a volume: n(dz, dy, dx) is the input at (z + dz, y + dy, x + dx), each offset at
// most R, after the boundary policy; n.at<dz, dy, dx>() checks the offsets at compile time.
template <class T, int R>
class volume_neighbourhood {
 public:
  using value_type = T;
  static constexpr int radius = R;

  // Over values laid out plane by plane, `plane_stride` apart, rows `row_stride` apart, `centre`
  // pointing at offset (0, 0, 0).
  COALESCE_HOST_DEVICE constexpr volume_neighbourhood(const T* centre, int plane_stride, int row_stride)
      : centre_(centre), plane_stride_(plane_stride), row_stride_(row_stride) {}

  COALESCE_HOST_DEVICE constexpr T operator()(int dz, int dy, int dx) const {
    COALESCE_ASSERT(dz >= -R && dz <= R && dy >= -R && dy <= R && dx >= -R && dx <= R,
                    "coalesce::volume_neighbourhood: offset beyond the stencil's radius");
    return centre_[dz * plane_stride_ + dy * row_stride_ + dx];
  }
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

// Several inputs of one shape for one stencil (coalesce::inputs, <coalesce/inputs.hpp>): f then
// takes one neighbourhood per input, in order.
template <class... Views>
using stencil_inputs = input_list<Views...>;

namespace detail {

// The band walk: a thread per vector of V = 16 / sizeof(T) outputs (4 floats) of K consecutive
// rows, blocks of 256 threads shaped bx x by (bx vectors across, by bands down). Each thread loads,
// for each input row r0 - R .. r0 + K - 1 + R, the 16-byte vector over its outputs' columns and
// the R elements on either side, all through the read-only path. Two reuses keep DRAM at one read
// of each input element: a thread's K rows share their 2R halo rows in registers, and a block's
// by bands are neighbours in the matrix, so the halo rows one band reads are L1 hits of the band
// next to it rather than L2 traffic. One row-major vector a thread (K = 1, 256 across) leaves
// every halo row to L2 and is slower: the stencils benchmark holds both designs, written by hand,
// as competitors ("float4 chunks" and "float4 bands").
inline constexpr unsigned stencil_block_threads = 256;

// The walk's shape for radius R, vectors of V, inputs Ts: K rows per thread while a thread's
// patches, (K + 2R) x (V + 2R) elements of every input, fit in about 72 registers; blocks 64
// vectors wide for R = 1 and 32 wide (more bands, more vertical reuse) beyond it.
template <int R, int V, class... Ts>
struct band_shape {
  static constexpr std::size_t words_per_row = (((std::size_t(V + 2 * R) * sizeof(Ts) + 3) / 4) + ...);
  static constexpr std::size_t register_budget = 72;
  static constexpr int preferred = R == 1 ? 2 : 4;
  static constexpr int rows_per_thread = std::size_t(preferred + 2 * R) * words_per_row <= register_budget ? preferred
                                         : std::size_t(2 + 2 * R) * words_per_row <= register_budget   ? 2
                                                                                                       : 1;
  static constexpr unsigned block_x = R == 1 ? 64 : 32;
  static constexpr unsigned block_y = stencil_block_threads / block_x;
};

// The element at column `col` of `row` under the policy; `row` is what row_under gave (null for a
// row beyond the edge under constant(v)).
template <class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE T load_element(const T* row, Index col, Index cols, const Policy& policy) {
  const Index c = boundary_index(policy, col, cols);
  if constexpr (is_constant_policy_v<Policy>) {
    if (row == nullptr || c < 0) return static_cast<T>(policy.value);
  }
  return load_chunk<true>(row + c);
}

// Row `r` of `in` (or of plane z of a volume) under the policy, or null for a row beyond the edge
// under constant(v). Under the other policies r is always a row, and no test is compiled: the
// band walk's code is then what it was before load_line was shared with the volume walk (an
// earlier form, which selected null on every policy, measured slower on an H200).
template <class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE const T* row_under(const Policy& policy, const pitched_view<const T>& in, Index r, Index rows) {
  const Index rr = boundary_index(policy, r, rows);
  if constexpr (is_constant_policy_v<Policy>)
    if (rr < 0) return nullptr;
  return in.row(std::size_t(rr));
}
template <class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE const T* row_under(const Policy& policy, const pitched_volume_view<const T>& in, Index z,
                                                        Index y) {
  const Index zz = boundary_index(policy, z, Index(in.depth())), yy = boundary_index(policy, y, Index(in.height()));
  if constexpr (is_constant_policy_v<Policy>)
    if (zz < 0 || yy < 0) return nullptr;
  return in.row(std::size_t(zz), std::size_t(yy));
}

// values[0 .. V - 1] = the elements of `row` at columns c0 .. c0 + V - 1: one vector where the
// row has them all (whole), else one at a time through the policy. `row` is not null.
template <class T, int V, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_vector(T* values, const T* row, Index c0, Index cols, bool whole,
                                                      const Policy& policy) {
  if (whole) {
    const auto v = load_chunk<true>(reinterpret_cast<const vector_chunk<T, V>*>(row + c0));
#pragma unroll
    for (int j = 0; j < V; ++j) values[j] = v.value[j];
  } else {  // the row's last, partial vector
#pragma unroll
    for (int j = 0; j < V; ++j) values[j] = load_element(row, Index(c0 + j), cols, policy);
  }
}

// One row's V + 2R elements around a thread's V outputs at columns c0 .. c0 + V - 1, through the
// policy: the V middle ones as one vector where the row has them all (whole), the R on either
// side one at a time. `row` is null for a row beyond the edge under constant(v).
template <class T, int R, int V, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_line(T (&line)[V + 2 * R], const T* row, Index c0, Index cols, bool whole,
                                                    const Policy& policy) {
  if constexpr (is_constant_policy_v<Policy>) {
    if (row == nullptr) {
#pragma unroll
      for (int e = 0; e < V + 2 * R; ++e) line[e] = static_cast<T>(policy.value);
      return;
    }
  }
  load_vector<T, V>(&line[R], row, c0, cols, whole, policy);
#pragma unroll
  for (int k = 1; k <= R; ++k) {
    line[R - k] = load_element(row, Index(c0 - k), cols, policy);
    line[R + V - 1 + k] = load_element(row, Index(c0 + V - 1 + k), cols, policy);
  }
}

// The (K + 2R) x (V + 2R) input elements around a thread's K x V outputs at rows r0 .. r0 + K - 1,
// columns c0 .. c0 + V - 1, through the policy: each row's V middle elements as one vector where
// the row has them all, the R on either side one at a time. Rows past the last output row (the
// matrix's last band) load what the policy maps them to; no output reads them.
template <class T, int R, int V, int K>
struct input_band {
  static constexpr int width = V + 2 * R;
  T values[K + 2 * R][width];  // values[R + dr][R + j]: the input at (r0 + dr, c0 + j)

  // whole: the thread's V columns are all inside the row (every thread's but a row's last, when
  // cols % V != 0).
  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(const pitched_view<const T>& in, Index r0, Index c0, bool whole,
                                                 const Policy& policy) {
    const Index rows = Index(in.rows()), cols = Index(in.cols());
#pragma unroll
    for (int i = 0; i < K + 2 * R; ++i)
      load_line<T, R, V>(values[i], row_under(policy, in, Index(r0 - R + i), rows), c0, cols, whole, policy);
  }

  // What f sees for output element j of the thread's vector in its k-th row.
  COALESCE_DEVICE COALESCE_FORCEINLINE neighbourhood<T, R> at(int k, int j) const {
    return neighbourhood<T, R>(&values[R + k][R + j], width);
  }
};

template <class P>
inline constexpr bool is_interior_v = std::is_same_v<P, interior_t>;

// Whether f takes one neighbourhood per input and returns what the output holds. Checked in
// device code: on the host, nvcc hides a device lambda's call operator.
template <template <class, int> class N, class F, int R, class Out, class... Ts>
COALESCE_HOST_DEVICE constexpr bool stencil_callable_with() {
  constexpr bool callable = std::is_invocable_v<const F&, N<Ts, R>...>;
  static_assert(callable,
                "coalesce::stencil: f cannot be called with one coalesce::neighbourhood<T, R> (of a matrix) or "
                "coalesce::volume_neighbourhood<T, R> (of a volume) per input, in the order of coalesce::inputs; "
                "declare its parameters auto");
  if constexpr (callable) {
    constexpr bool converts = std::is_convertible_v<std::invoke_result_t<const F&, N<Ts, R>...>, Out>;
    static_assert(converts, "coalesce::stencil: what f returns does not convert to the output's element type");
    return converts;
  }
  return false;
}

template <class F, int R, class Out, class... Ts>
COALESCE_HOST_DEVICE constexpr bool stencil_callable() {
  return stencil_callable_with<neighbourhood, F, R, Out, Ts...>();
}

// A thread's V outputs at row[c0 ..], output j being value_of(j): stored as one vector where
// `whole`, else element by element inside the row (under interior, inside its interior columns).
template <int R, int V, class Policy, class Out, class Index, class ValueOf>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_outputs(Out* row, Index c0, Index cols, bool whole, const ValueOf& value_of) {
  Out result[V];
#pragma unroll
  for (int j = 0; j < V; ++j) result[j] = value_of(j);
  if (whole) {
    vector_chunk<Out, V> v;
#pragma unroll
    for (int j = 0; j < V; ++j) v.value[j] = result[j];
    store_chunk(reinterpret_cast<vector_chunk<Out, V>*>(row + c0), v);
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      bool inside = c0 + j < cols;
      if constexpr (is_interior_v<Policy>) inside = inside && interior_contains(Index(R), Index(c0 + j), cols);
      if (inside) row[c0 + j] = result[j];
    }
  }
}

// A thread's outputs in K consecutive rows from `first`, those inside [0, rows) (under interior,
// its interior rows): row_of(r) is output row r, value_of(k, j) output j of the thread's vector
// in its k-th row.
template <int R, int V, int K, class Policy, class Index, class RowOf, class ValueOf>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_rows(Index first, Index rows, Index c0, Index cols, bool whole, const RowOf& row_of,
                                                     const ValueOf& value_of) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Index r = first + k;
    if (r >= rows) break;
    if constexpr (is_interior_v<Policy>)
      if (!interior_contains(Index(R), r, rows)) continue;
    store_outputs<R, V, Policy>(row_of(r), c0, cols, whole, [&](int j) { return value_of(k, j); });
  }
}

// The band walk (see stencil_block_threads): every input of the same element size, 16-byte
// aligned rows, R <= V. Thread (x, y) of block (bx, by) takes vector bx * blockDim.x + x of every
// row of band by * blockDim.y + y, striding down where the matrix has more bands than the grid
// (the grid is as wide as the rows' vectors: no loop across, whose state would cost registers).
// Positions are in Index: int where every count fits in 31 bits, so that the boundary arithmetic
// is 32-bit.
template <int R, int V, int K, class Index, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_bands(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                     const pitched_view<Out>& out, const F& f, Index vectors_per_row,
                                                     bool vector_stores, std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const Index rows = Index(out.rows()), cols = Index(out.cols());
    const Index bands = (rows + K - 1) / K;
    const auto one_band = [&](Index r0, Index c0, bool whole_vector) {
      if constexpr (is_interior_v<Policy>)
        if (r0 + K <= Index(R) || r0 + Index(R) >= rows) return;  // no interior row in the band
      cuda::std::tuple<input_band<Ts, R, V, K>...> patches;
      (cuda::std::get<I>(patches).load(cuda::std::get<I>(in), r0, c0, whole_vector, policy), ...);
      bool whole = whole_vector && vector_stores;
      if constexpr (is_interior_v<Policy>) whole = whole && c0 >= R && c0 + V + R <= cols;
      store_rows<R, V, K, Policy>(
          r0, rows, c0, cols, whole, [&](Index r) { return out.row(std::size_t(r)); },
          [&](int k, int j) { return static_cast<Out>(f(cuda::std::get<I>(patches).at(k, j)...)); });
    };
    const Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
    if (v >= vectors_per_row) return;
    const Index c0 = v * V;
    const Index first = Index(blockIdx.y) * Index(blockDim.y) + Index(threadIdx.y), step = Index(gridDim.y) * Index(blockDim.y);
    const bool whole_vector = c0 + V <= cols;
    for (Index b = first; b < bands; b += step) one_band(b * K, c0, whole_vector);
  }
}

template <int R, int V, int K, class Index, class Policy, class Out, class F, class... Ts>
__global__ void __launch_bounds__(stencil_block_threads)
    stencil_band_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in, pitched_view<Out> out, F f,
                        Index vectors_per_row, bool vector_stores) {
  walk_bands<R, V, K>(policy, in, out, f, vectors_per_row, vector_stores, std::index_sequence_for<Ts...>{});
}

// The element walk, for what the band walk cannot take (elements of other sizes, rows not
// 16-byte aligned, a radius wider than a thread's vector): a thread per output, 128 x 4 threads per
// block, each neighbour read through the read-only path (nvcc drops the reads f never uses).
template <class T, int R>
struct gathered {
  T values[2 * R + 1][2 * R + 1];
  COALESCE_DEVICE COALESCE_FORCEINLINE neighbourhood<T, R> centre() const { return neighbourhood<T, R>(&values[R][R], 2 * R + 1); }
};

template <int R, class T, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE void gather(gathered<T, R>& g, const pitched_view<const T>& in, long long r, long long c,
                                                 const Policy& policy) {
  const long long rows = (long long)in.rows(), cols = (long long)in.cols();
#pragma unroll
  for (int dr = -R; dr <= R; ++dr) {
    const T* row = row_under(policy, in, r + dr, rows);
#pragma unroll
    for (int dc = -R; dc <= R; ++dc) g.values[R + dr][R + dc] = load_element(row, c + dc, cols, policy);
  }
}

template <int R, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_elements(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in,
                                                        const pitched_view<Out>& out, const F& f, std::index_sequence<I...>) {
  if constexpr (stencil_callable<F, R, Out, Ts...>()) {
    const long long rows = (long long)out.rows(), cols = (long long)out.cols();
    for (long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y; r < rows; r += (long long)gridDim.x * blockDim.y) {
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, r, rows)) continue;
      for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
        if constexpr (is_interior_v<Policy>)
          if (!interior_contains(R, c, cols)) continue;
        cuda::std::tuple<gathered<Ts, R>...> values;
        (gather<R>(cuda::std::get<I>(values), cuda::std::get<I>(in), r, c, policy), ...);
        out(std::size_t(r), std::size_t(c)) = static_cast<Out>(f(cuda::std::get<I>(values).centre()...));
      }
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void stencil_element_kernel(Policy policy, cuda::std::tuple<pitched_view<const Ts>...> in, pitched_view<Out> out, F f) {
  walk_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

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
  COALESCE_DEVICE COALESCE_FORCEINLINE static void load_centre(T* values, const pitched_volume_view<const T>& in, Index z,
                                                               Index y, Index c0, bool whole, const Policy& policy) {
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
  COALESCE_DEVICE COALESCE_FORCEINLINE void start(const pitched_volume_view<const T>& in, Index z, Index y0, Index c0, bool whole,
                                                  const Policy& policy) {
#pragma unroll
    for (int k = 0; k < KY; ++k)
#pragma unroll
      for (int i = 1; i < planes; ++i) load_centre(queue[k][i], in, Index(z - R - 1 + i), Index(y0 + k), c0, whole, policy);
  }

  // Moves the walk to plane z: the queues shift by one plane and take plane z + R's vectors, and
  // the neighbourhoods are gathered (only what f reads survives compilation).
  template <class Index, class Policy>
  COALESCE_DEVICE COALESCE_FORCEINLINE void advance(const pitched_volume_view<const T>& in, Index z, Index y0, Index c0, bool whole,
                                                    const Policy& policy) {
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
        load_line<T, R, V>(values[p][h], row_under(policy, in, Index(z - R + p), Index(y0 - R + h)), c0, cols, whole, policy);
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

template <int R, int V, int KY, bool WholeVector, class Index, class Policy, class Out, class F, class... Ts, std::size_t... I>
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_queues(const Policy& policy, const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
                                                      const pitched_volume_view<Out>& out, const F& f, Index vectors_per_row,
                                                      bool vector_stores, Index planes_per_block, std::index_sequence<I...>) {
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
    stencil_queue_kernel(Policy policy, cuda::std::tuple<pitched_volume_view<const Ts>...> in, pitched_volume_view<Out> out, F f,
                         Index vectors_per_row, bool vector_stores, Index planes_per_block) {
  // A thread's vector is whole in every row or in none: two copies of the walk, so that the
  // partial vector's element-by-element loads are not in the whole one's loop. There each costs
  // an issued (predicated-off) instruction: the 25-point star on 512^3 floats ran at 30% of
  // cudaMemcpy with them, 52% without, on an H200.
  const Index v = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
  if ((v + 1) * V <= Index(out.width()))
    walk_queues<R, V, KY, true>(policy, in, out, f, vectors_per_row, vector_stores, planes_per_block, std::index_sequence_for<Ts...>{});
  else
    walk_queues<R, V, KY, false>(policy, in, out, f, vectors_per_row, vector_stores, planes_per_block, std::index_sequence_for<Ts...>{});
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
COALESCE_DEVICE COALESCE_FORCEINLINE void gather(gathered_volume<T, R>& g, const pitched_volume_view<const T>& in, long long z,
                                                 long long y, long long x, const Policy& policy) {
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
COALESCE_DEVICE COALESCE_FORCEINLINE void walk_volume_elements(const Policy& policy,
                                                               const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
                                                               const pitched_volume_view<Out>& out, const F& f,
                                                               std::index_sequence<I...>) {
  if constexpr (stencil_callable_with<volume_neighbourhood, F, R, Out, Ts...>()) {
    const long long depth = (long long)out.depth(), rows = (long long)out.height(), cols = (long long)out.width();
    for (long long zy = (long long)blockIdx.x * blockDim.y + threadIdx.y; zy < depth * rows; zy += (long long)gridDim.x * blockDim.y) {
      const long long z = zy / rows, y = zy % rows;
      if constexpr (is_interior_v<Policy>)
        if (!interior_contains(R, z, depth) || !interior_contains(R, y, rows)) continue;
      for (long long x = threadIdx.x; x < cols; x += blockDim.x) {
        if constexpr (is_interior_v<Policy>)
          if (!interior_contains(R, x, cols)) continue;
        cuda::std::tuple<gathered_volume<Ts, R>...> values;
        (gather<R>(cuda::std::get<I>(values), cuda::std::get<I>(in), z, y, x, policy), ...);
        out(std::size_t(z), std::size_t(y), std::size_t(x)) = static_cast<Out>(f(cuda::std::get<I>(values).centre()...));
      }
    }
  }
}

template <int R, class Policy, class Out, class F, class... Ts>
__global__ void stencil_volume_element_kernel(Policy policy, cuda::std::tuple<pitched_volume_view<const Ts>...> in,
                                              pitched_volume_view<Out> out, F f) {
  walk_volume_elements<R>(policy, in, out, f, std::index_sequence_for<Ts...>{});
}

template <class T>
bool rows_aligned(const pitched_view<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0 && v.pitch_bytes() % alignment == 0;
}

// The elements of `a` and `b` overlap in memory (their spans of rows do).
template <class A, class B>
bool rows_overlap(const pitched_view<A>& a, const pitched_view<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto begin = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto end = [](const auto& v) {
    return reinterpret_cast<std::uintptr_t>(v.data()) + (v.rows() - 1) * v.pitch_bytes() + v.cols() * sizeof(*v.data());
  };
  return begin(a) < end(b) && begin(b) < end(a);
}

template <class T>
bool rows_aligned(const pitched_volume_view<T>& v, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % alignment == 0 && v.pitch_bytes() % alignment == 0 &&
         v.slice_pitch_bytes() % alignment == 0;
}

template <class A, class B>
bool rows_overlap(const pitched_volume_view<A>& a, const pitched_volume_view<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto begin = [](const auto& v) { return reinterpret_cast<std::uintptr_t>(v.data()); };
  const auto end = [](const auto& v) {
    return reinterpret_cast<std::uintptr_t>(v.data()) + (v.depth() - 1) * v.slice_pitch_bytes() +
           (v.height() - 1) * v.pitch_bytes() + v.width() * sizeof(*v.data());
  };
  return begin(a) < end(b) && begin(b) < end(a);
}

template <class T>
std::array<std::size_t, 2> extents_of(const pitched_view<T>& v) {
  return {v.rows(), v.cols()};
}
template <class T>
std::array<std::size_t, 3> extents_of(const pitched_volume_view<T>& v) {
  return {v.depth(), v.height(), v.width()};
}
template <std::size_t N>
std::string shape_text(const std::array<std::size_t, N>& extents) {
  std::string text = std::to_string(extents[0]);
  for (std::size_t i = 1; i < N; ++i) text += " x " + std::to_string(extents[i]);
  return text;
}

// The checks every stencil launch makes, for matrices and volumes alike: one shape for all, no
// input overlapping the output, device memory, no earlier error. False when there is nothing to
// compute (an empty output; under interior, no element whose neighbourhood is inside).
template <int R, class Policy, class Inputs, class OutView>
bool stencil_operands_ready(const Inputs& in, const OutView& out) {
  constexpr const char* what = "coalesce::stencil";
  const auto shape = extents_of(out);
  bool shapes_agree = true, overlap = false;
  std::string shapes;
  const auto check = [&](const auto& v) {
    shapes_agree = shapes_agree && extents_of(v) == shape;
    overlap = overlap || rows_overlap(v, out);
    shapes += shape_text(extents_of(v)) + ", ";
  };
  cuda::std::apply([&](const auto&... v) { (check(v), ...); }, in);
  if (!shapes_agree)
    throw std::invalid_argument(std::string(what) + ": the inputs are " + shapes + "the output " + shape_text(shape) +
                                "; a stencil needs one shape for all");
  if (overlap)
    throw std::invalid_argument(std::string(what) +
                                ": an input overlaps the output, so neighbours would be read after they were written; "
                                "write into another matrix or volume (swap the two each step)");
  if (out.empty()) return false;
  if constexpr (is_interior_v<Policy>) {
    // No element is interior: the call would write nothing at all, which is never what a caller
    // of a stencil means (a 1 x n matrix as a 1D array, a volume one plane thick).
    for (const std::size_t extent : shape)
      if (extent <= 2 * std::size_t(R))
        throw std::invalid_argument(std::string(what) + "<" + std::to_string(R) + "> under coalesce::interior: the output is " +
                                    shape_text(shape) + " elements, and no element has its whole radius-" + std::to_string(R) +
                                    " neighbourhood inside (that takes more than " + std::to_string(2 * R) +
                                    " along every axis), so nothing would be written; use coalesce::clamp, periodic or "
                                    "constant(v) on a shape this small");
  }
  cuda::std::apply([&](const auto&... v) { (require_device_memory(v.data(), "coalesce::stencil (input)"), ...); }, in);
  require_device_memory(out.data(), "coalesce::stencil (output)");
  throw_if_earlier_error(what);
  return true;
}

// The vector (elements a thread loads and stores as one access) of the band and 2.5D walks, or 0
// where they cannot take the inputs: every input of one element size of 1, 2, 4 or 8 bytes, and a
// radius no wider than the vector.
template <int R, class... Ts>
constexpr int vector_walk_width() {
  using T0 = std::tuple_element_t<0, std::tuple<Ts...>>;
  constexpr bool same_size = ((sizeof(Ts) == sizeof(T0)) && ...);
  return same_size && is_access_width(sizeof(T0)) && std::size_t(R) <= 16 / sizeof(T0) ? int(16 / sizeof(T0)) : 0;
}

// Every input's rows start on 16-byte boundaries.
template <class Inputs>
bool inputs_aligned(const Inputs& in) {
  bool aligned = true;
  cuda::std::apply([&](const auto&... v) { aligned = (rows_aligned(v, 16) && ...); }, in);
  return aligned;
}

// Whether positions can be 32-bit: each count, and a step of a grid's threads past it, below 2^31.
inline bool positions_fit_int(std::initializer_list<std::size_t> counts) {
  constexpr std::size_t limit = std::size_t(0x7fffffff) - std::size_t(0x7fffffff) / 4;
  for (const std::size_t count : counts)
    if (count >= limit) return false;
  return true;
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<pitched_view<const Ts>...>& in, pitched_view<Out> out,
                    const F& f, cudaStream_t stream) {
  if (!stencil_operands_ready<R, Policy>(in, out)) return;
  constexpr int V = vector_walk_width<R, Ts...>();
  if constexpr (V > 0) {
    if (inputs_aligned(in)) {
      using shape = band_shape<R, V, Ts...>;
      constexpr int K = shape::rows_per_thread;
      const std::size_t vectors_per_row = (out.cols() + V - 1) / V;
      const std::size_t bands = (out.rows() + K - 1) / K;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      const dim3 block(shape::block_x, shape::block_y);
      // (x: a row of 2^36 vectors, the most that x could not cover, is no matrix in device memory.)
      const dim3 grid(unsigned((vectors_per_row + block.x - 1) / block.x),
                      unsigned(std::min<std::size_t>((bands + block.y - 1) / block.y, 65535)));
      const auto launch = [&](auto index) {
        using Index = decltype(index);
        stencil_band_kernel<R, V, K, Index, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f,
                                                                                            Index(vectors_per_row), vector_stores);
      };
      if (positions_fit_int({vectors_per_row, out.rows() + K + R, out.cols() + V + R})) launch(int{});
      else launch((long long){});
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  const dim3 block(128, 4);
  const unsigned grid = one_wave_grid<stencil_element_kernel<R, Policy, Out, F, Ts...>>(block.x * block.y, (out.rows() + 3) / 4);
  stencil_element_kernel<R, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <int R, class Policy, class Out, class F, class... Ts>
void launch_stencil(const Policy& policy, const cuda::std::tuple<pitched_volume_view<const Ts>...>& in,
                    pitched_volume_view<Out> out, const F& f, cudaStream_t stream) {
  if (!stencil_operands_ready<R, Policy>(in, out)) return;
  constexpr int V = vector_walk_width<R, Ts...>();
  if constexpr (V > 0) {
    if (inputs_aligned(in)) {
      using shape = queue_shape;
      constexpr int KY = shape::rows_per_thread;
      const std::size_t vectors_per_row = (out.width() + V - 1) / V;
      const std::size_t row_groups = (out.height() + KY - 1) / KY;
      const std::size_t chunks = (out.depth() + shape::planes_per_block - 1) / shape::planes_per_block;
      const bool vector_stores = rows_aligned(out, alignof(vector_chunk<Out, V>));
      const dim3 block(shape::block_x, shape::block_y);
      const dim3 grid(unsigned((vectors_per_row + block.x - 1) / block.x),
                      unsigned(std::min<std::size_t>((row_groups + block.y - 1) / block.y, 65535)),
                      unsigned(std::min<std::size_t>(chunks, 65535)));
      const auto launch = [&](auto index) {
        using Index = decltype(index);
        stencil_queue_kernel<R, V, KY, Index, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(
            policy, in, out, f, Index(vectors_per_row), vector_stores, Index(shape::planes_per_block));
      };
      if (positions_fit_int({vectors_per_row, out.depth() + shape::planes_per_block + R, out.height() + KY + R, out.width() + V + R}))
        launch(int{});
      else
        launch((long long){});
      throw_if_launch_failed("coalesce::stencil kernel launch");
      return;
    }
  }
  const dim3 block(128, 4);
  const unsigned grid = one_wave_grid<stencil_volume_element_kernel<R, Policy, Out, F, Ts...>>(
      block.x * block.y, (out.depth() * out.height() + 3) / 4);
  stencil_volume_element_kernel<R, Policy, Out, F, Ts...><<<grid, block, 0, stream>>>(policy, in, out, f);
  throw_if_launch_failed("coalesce::stencil kernel launch");
}

template <class T>
inline constexpr bool is_device_pitched_view_v = false;
template <class T>
inline constexpr bool is_device_pitched_view_v<pitched_view<T, device_space>> = true;

template <class T>
struct stencil_output_of {  // refused by stencil's checks
  static constexpr bool known = false;
};
template <class T>
inline constexpr bool is_device_pitched_view_v<pitched_volume_view<T, device_space>> = true;

// What stencil needs of its output, for a view and for a container (the container brings its
// stream), of a matrix or a volume.
template <class View, bool Volume>
struct view_output {
  static constexpr bool known = true;
  static constexpr bool is_container = false;
  static constexpr bool writable = !std::is_const_v<typename View::element_type>;
  static constexpr bool device = std::is_same_v<typename View::memory_space, device_space>;
  static constexpr bool volume = Volume;
  static View view(const View& v) { return v; }
  static cudaStream_t stream(const View&, cudaStream_t otherwise) { return otherwise; }
};
template <class Container, class View, bool Volume>
struct container_output {
  static constexpr bool known = true;
  static constexpr bool is_container = true;
  static constexpr bool writable = true;
  static constexpr bool device = std::is_same_v<typename View::memory_space, device_space>;
  static constexpr bool volume = Volume;
  static View view(Container& c) { return c.view(); }
  static cudaStream_t stream(const Container& c, cudaStream_t) { return c.stream(); }
};
template <class T, class S>
struct stencil_output_of<pitched_view<T, S>> : view_output<pitched_view<T, S>, false> {};
template <class T, class S, class P, class R>
struct stencil_output_of<pitched_matrix<T, S, P, R>> : container_output<pitched_matrix<T, S, P, R>, pitched_view<T, S>, false> {};
template <class T, class S>
struct stencil_output_of<pitched_volume_view<T, S>> : view_output<pitched_volume_view<T, S>, true> {};
template <class T, class S, class P, class R>
struct stencil_output_of<pitched_volume<T, S, P, R>>
    : container_output<pitched_volume<T, S, P, R>, pitched_volume_view<T, S>, true> {};

template <class... Views>
constexpr bool inputs_on_device(const stencil_inputs<Views...>*) {
  return (is_device_pitched_view_v<Views> && ...);
}

template <class T>
inline constexpr bool is_volume_view_v = false;
template <class T, class S>
inline constexpr bool is_volume_view_v<pitched_volume_view<T, S>> = true;

template <bool Volume, class... Views>
constexpr bool inputs_of_rank(const stencil_inputs<Views...>*) {
  return ((is_volume_view_v<Views> == Volume) && ...);
}

template <std::size_t... I, class... Views>
cuda::std::tuple<Views...> as_tuple(const value_pack_of<std::index_sequence<I...>, Views...>& views) {
  return cuda::std::tuple<Views...>(slot<I>(views)...);
}

template <int R, class Policy, class Out, class F, class... Views>
void stencil_checked(const Policy& policy, const stencil_inputs<Views...>& in, Out& out, const F& f, const cudaStream_t* stream) {
  static_assert(is_boundary_policy_v<Policy>,
                "coalesce::stencil: the first argument must be a boundary policy: coalesce::clamp, coalesce::periodic, "
                "coalesce::interior or coalesce::constant(value)");
  static_assert(R >= 1 && R <= 8, "coalesce::stencil<R>: the radius R must be 1 to 8");
  using output = stencil_output_of<std::remove_const_t<Out>>;
  static_assert(output::known,
                "coalesce::stencil: the output must be a coalesce::pitched_view, pitched_matrix, pitched_volume_view or "
                "pitched_volume");
  constexpr bool on_device = inputs_on_device(static_cast<const stencil_inputs<Views...>*>(nullptr));
  static_assert(on_device,
                "coalesce::stencil: every input must be a pitched_view, pitched_matrix, pitched_volume_view or "
                "pitched_volume of device memory (a host_space one cannot be read by the GPU: copy it into a device one)");
  if constexpr (output::known && on_device) {
    constexpr bool same_rank =
        inputs_of_rank<output::volume>(static_cast<const stencil_inputs<Views...>*>(nullptr));
    static_assert(same_rank,
                  "coalesce::stencil: the inputs and the output must all be matrices (pitched_view, pitched_matrix) or "
                  "all volumes (pitched_volume_view, pitched_volume)");
    constexpr bool writable = output::writable && !(std::is_const_v<Out> && output::is_container);
    static_assert(writable, "coalesce::stencil: the output is read-only (a view of const T or a const container)");
    static_assert(output::device,
                  "coalesce::stencil: the output is in host_space, which the GPU cannot write; use a device matrix");
    if constexpr (same_rank && writable && output::device && is_boundary_policy_v<Policy> && R >= 1 && R <= 8) {
      const cudaStream_t s = stream ? *stream : output::stream(out, in.has_stream ? in.stream : cudaStream_t{});
      launch_stencil<R>(policy, as_tuple(in.views), output::view(out), f, s);
    }
  }
}

template <class In>
auto as_stencil_inputs(const In& in) {
  return inputs(in);
}
template <class... Views>
const stencil_inputs<Views...>& as_stencil_inputs(const stencil_inputs<Views...>& in) {
  return in;
}

}  // namespace detail

// out(r, c) = f(n...) on the device for every element of `out`, asynchronously: n is the radius-R
// neighbourhood of each input around (r, c), reads beyond the edge following `policy`
// (coalesce::clamp, periodic, constant(v), interior). `in` is a pitched_view or pitched_matrix of
// device memory, or several of one shape as coalesce::inputs(u, v) (f then takes one
// neighbourhood per input); `out` a pitched_view or pitched_matrix of the same shape, of any
// element type f's result converts to. Volumes work the same way: pitched_volume_views or
// pitched_volumes in and out, f taking coalesce::volume_neighbourhood, n(dz, dy, dx). Runs on
// `stream`; without one, on the output container's stream, else the first input container's,
// else stream 0.
//
// Each thread computes one 16-byte vector of outputs (4 floats) in each of K consecutive rows
// (K = 2 for R = 1, 4 beyond, fewer for several or wide inputs), from the 16-byte vectors of
// those rows and R above and below, and the R elements on either side, all read through the
// read-only path; each vector is stored as one access. A block's threads cover neighbouring
// bands, so the rows two bands share are read from DRAM once and found in L1 the second time. On
// a volume a thread walks z through 32 planes, one vector of outputs of one row in each (the 2.5D
// scheme of Micikevicius' 3D finite-difference kernels): a queue in registers holds its column's
// vectors of planes z - R .. z + R, so each plane costs one new load along z, and the plane's own
// rows come from L1 as in the 2D walk. f may read any offset; the walk is fast for star shapes
// (off the plane, only n(dz, 0, 0)) and loads other off-plane neighbours one by one
// (docs/algorithms.md). Elements that are not 1, 2, 4 or 8 bytes (or inputs of
// different sizes, rows not 16-byte aligned, R wider than a thread's vector) take a walk of one
// element per thread, correct and coalesced but slower.
//
// Throws std::invalid_argument if the shapes differ, an input overlaps the output (in place is
// not possible: neighbours would be read after being written), or, under interior, an extent of
// the output is 2R or less (no element would be written); coalesce::cuda_error if the launch
// fails. All before anything is launched.
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f) {
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, nullptr);
}
template <int R, class Policy, class In, class Out, class F, std::enable_if_t<is_boundary_policy_v<Policy>, int> = 0>
void stencil(const Policy& policy, const In& in, Out&& out, F f, cudaStream_t stream) {
  detail::stencil_checked<R>(policy, detail::as_stencil_inputs(in), out, f, &stream);
}
// The same with coalesce::clamp.
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f) {
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, nullptr);
}
template <int R, class In, class Out, class F, std::enable_if_t<!is_boundary_policy_v<In>, int> = 0>
void stencil(const In& in, Out&& out, F f, cudaStream_t stream) {
  detail::stencil_checked<R>(clamp, detail::as_stencil_inputs(in), out, f, &stream);
}

}  // namespace coalesce

#endif  // __CUDACC__
