// coalesce::detail: how the stencil walks read an input's rows through a boundary policy (a
// row's vector and the R elements on either side) and store a thread's vector of outputs. Users
// never include this header; <coalesce/stencil.hpp> does. Needs a CUDA compiler.
#pragma once

#include <coalesce/boundary.hpp>
#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/neighbourhood.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cuda/std/tuple>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

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
COALESCE_DEVICE COALESCE_FORCEINLINE const T* row_under(const Policy& policy, const pitched_view<const T>& in, Index r,
                                                        Index rows) {
  const Index rr = boundary_index(policy, r, rows);
  if constexpr (is_constant_policy_v<Policy>)
    if (rr < 0) return nullptr;
  return in.row(std::size_t(rr));
}
template <class T, class Index, class Policy>
COALESCE_DEVICE COALESCE_FORCEINLINE const T* row_under(const Policy& policy, const pitched_volume_view<const T>& in,
                                                        Index z, Index y) {
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
COALESCE_DEVICE COALESCE_FORCEINLINE void load_line(T (&line)[V + 2 * R], const T* row, Index c0, Index cols,
                                                    bool whole, const Policy& policy) {
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
COALESCE_DEVICE COALESCE_FORCEINLINE void store_outputs(Out* row, Index c0, Index cols, bool whole,
                                                        const ValueOf& value_of) {
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
COALESCE_DEVICE COALESCE_FORCEINLINE void store_rows(Index first, Index rows, Index c0, Index cols, bool whole,
                                                     const RowOf& row_of, const ValueOf& value_of) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Index r = first + k;
    if (r >= rows) break;
    if constexpr (is_interior_v<Policy>)
      if (!interior_contains(Index(R), r, rows)) continue;
    store_outputs<R, V, Policy>(row_of(r), c0, cols, whole, [&](int j) { return value_of(k, j); });
  }
}

}  // namespace coalesce::detail
