// coalesce::detail: what for_each and transform walk. Each kind of view (soa_view, pitched_view,
// cuda::std::span) becomes columns - addresses, alignment, chunk width - through walk_of, and
// the checks on the views an algorithm is handed live here too. Users never include this
// header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/device_memory.hpp>
#include <coalesce/detail/record_columns.hpp>
#include <coalesce/detail/soa_walk.hpp>
#include <coalesce/detail/strided_column.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/detail/view_declarations.hpp>  // pitched_view and cuda::std::span, declared
#include <coalesce/layout_view.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The columns and the shape of the walk over each kind of view.
template <class T>
struct walk_of {
  static constexpr bool supported = false;
  static constexpr bool is_contiguous_range = false;
};
template <class T>
struct walk_of<soa_view<T, device_space>> {
  static constexpr bool supported = true;
  static constexpr bool is_contiguous_range = false;
  static soa_columns<T> columns(const soa_view<T>& v) { return {v}; }
  static std::size_t rows(const soa_view<T>&) { return 1; }
  static std::size_t cols(const soa_view<T>& v) { return v.size(); }
  static std::size_t walk_cols(const soa_view<T>& v) { return v.size(); }
};
// Tiles (layout::aosoa<Lanes>) and splits (layout::split<Hot, Cold>): walked as columns are, a
// chunk within a tile's run of each leaf (a split's cold records: a value at a time).
template <class T, class Layout>
struct walk_of<layout_view<T, Layout, device_space>> {
  using view = layout_view<T, Layout, device_space>;
  static constexpr bool supported = true;
  static constexpr bool is_contiguous_range = false;
  static soa_columns<T, view> columns(const view& v) { return {v}; }
  static std::size_t rows(const view&) { return 1; }
  static std::size_t cols(const view& v) { return v.size(); }
  static std::size_t walk_cols(const view& v) { return v.size(); }
};
// Records (layout::aos): a column of structs whose element f gets as the proxy. for_each stages
// them through shared memory instead (for_each_records, in algorithm.hpp).
template <class T>
struct walk_of<layout_view<T, layout::aos, device_space>> {
  using view = layout_view<T, layout::aos, device_space>;
  static constexpr bool supported = true;
  static constexpr bool is_contiguous_range = false;
  static record_columns<T> columns(const view& v) { return {{v.data(), 0}}; }
  static std::size_t rows(const view&) { return 1; }
  static std::size_t cols(const view& v) { return v.size(); }
  static std::size_t walk_cols(const view& v) { return v.size(); }
};
template <class T, std::size_t Extent>
struct walk_of<cuda::std::span<T, Extent>> {
  static constexpr bool supported = true;
  static constexpr bool is_contiguous_range = true;
  static strided_column<T> columns(const cuda::std::span<T, Extent>& s) { return {s.data(), 0}; }
  static std::size_t rows(const cuda::std::span<T, Extent>&) { return 1; }
  static std::size_t cols(const cuda::std::span<T, Extent>& s) { return s.size(); }
  static std::size_t walk_cols(const cuda::std::span<T, Extent>& s) { return s.size(); }
};
template <class T>
struct walk_of<pitched_view<T, device_space>> {
  static constexpr bool supported = true;
  static constexpr bool is_contiguous_range = false;
  static strided_column<T> columns(const pitched_view<T>& v) {
    if (!v.is_mdspan_compatible())
      throw std::invalid_argument("coalesce::transform: a pitched_view's pitch (" + std::to_string(v.pitch_bytes()) +
                                  " bytes) must be a multiple of the element size");
    return {v.data(), v.pitch_bytes() / sizeof(T), v.cols()};
  }
  static std::size_t rows(const pitched_view<T>& v) { return v.rows(); }
  static std::size_t cols(const pitched_view<T>& v) { return v.cols(); }
  // The columns to walk: on to the end of the row's last 128-byte line when the view owns the
  // padding there (padding is loaded; f never sees it, and unchanged, it is never stored).
  // Measured on an NVIDIA H200, CUDA 13.0, in-place update of a 200000 x 1000 float matrix with
  // 4096-byte rows, as a share of cudaMemcpy: walking only the 1000 elements 0.70-0.73 (a
  // hand-written float4 kernel too: 0.72; ncu shows DRAM throughput at 60% of peak against 77%,
  // and 1.24 more DRAM sector reads per row than the L2 asked for); walking whole rows, with the
  // same bytes stored, 1.00-1.01.
  static std::size_t walk_cols(const pitched_view<T>& v) {
    constexpr std::size_t unit = 128;
    if (v.pitch_bytes() % unit != 0 || v.cols() == 0) return v.cols();
    const auto first = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t end = first + v.cols() * sizeof(T);
    const std::size_t bytes = std::size_t((end + unit - 1) / unit * unit - first);
    return bytes <= v.owned_row_bytes() && bytes % sizeof(T) == 0 ? bytes / sizeof(T) : v.cols();
  }
};

template <class View>
inline constexpr bool is_walkable_v = walk_of<View>::supported;

template <class View>
inline constexpr bool is_pitched_view_v = false;
template <class T, class Space>
inline constexpr bool is_pitched_view_v<pitched_view<T, Space>> = true;

// Adapts f(element) to the row walk's f(r, c).
template <class T, class F>
struct apply_at {
  pitched_view<T> view;
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE void operator()(std::size_t r, std::size_t c) const { f(view(r, c)); }
};

template <class View>
inline constexpr bool is_soa_view_v = false;
template <class T, class Space>
inline constexpr bool is_soa_view_v<soa_view<T, Space>> = true;

// The memory space of a view of any kind, for the checks below: a span's type cannot tell
// (COALESCE_DEBUG asks the driver instead), so it counts as device memory here.
template <class View>
struct view_space {
  static constexpr bool known = false;
};
template <class T, class Space>
struct view_space<soa_view<T, Space>> {
  static constexpr bool known = true;
  using type = Space;
};
template <class T, class Space>
struct view_space<pitched_view<T, Space>> {
  static constexpr bool known = true;
  using type = Space;
};
template <class T, class Layout, class Space>
struct view_space<layout_view<T, Layout, Space>> {
  static constexpr bool known = true;
  using type = Space;
};
template <class T, std::size_t Extent>
struct view_space<cuda::std::span<T, Extent>> {
  static constexpr bool known = true;
  using type = device_space;
};

// A cuda::std::mdspan that reached an algorithm unadapted: its adapter lives with the mdspan
// interop in <coalesce/pitched_matrix.hpp>, which <coalesce/algorithm.hpp> leaves out (libcu++'s
// mdspan costs an nvcc compile more than all of the algorithms).
template <class V, class = void>
struct looks_like_mdspan : std::false_type {};
template <class V>
struct looks_like_mdspan<V, std::void_t<typename V::mapping_type, typename V::accessor_type, typename V::extents_type>>
    : std::true_type {};

// The first check on the views an algorithm is handed.
template <class... Views>
constexpr bool mdspans_adapted() {
  constexpr bool unadapted = (looks_like_mdspan<Views>::value || ...);
  static_assert(!unadapted, "coalesce: to pass a cuda::std::mdspan to for_each, transform or for_each_index, include "
                            "<coalesce/view_adapter.hpp> (or <coalesce/pitched_matrix.hpp>), which adapts it");
  return !unadapted;
}

// The checks on the views handed to for_each and transform, in order: each failed one is the
// only error the user reads (the algorithm's body is compiled only when all pass).
template <class View>
constexpr bool for_each_view_ok_checked() {
  constexpr bool known = view_space<View>::known;
  static_assert(known,
                "coalesce::for_each: the first argument must be a soa_view, a pitched_view, a cuda::std::span or "
                "mdspan of device memory, a device soa_vector, pitched_matrix or pitched_volume that is not const "
                "(for_each writes it), or a type with a coalesce::view_adapter");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device,
                  "coalesce::for_each: the view is of host memory (a soa_vector or pitched_matrix in host_space); the "
                  "GPU cannot read it: copy it into a device container and pass that one's view()");
    constexpr bool writable = !std::is_const_v<typename View::element_type>;
    static_assert(!device || writable,
                  "coalesce::for_each: the view must be writable (soa_view<T>, not soa_view<const T>); to only read "
                  "the elements, use coalesce::transform into an output");
    return device && writable;
  }
  return false;
}

template <class View>
constexpr bool for_each_view_ok() {
  if constexpr (mdspans_adapted<View>()) {
    return for_each_view_ok_checked<View>();
  } else {
    return false;
  }
}

// The one-dimensional views, whose for_each_index calls f(i).
template <class View>
inline constexpr bool is_index_range_v = false;
template <class T, class Space>
inline constexpr bool is_index_range_v<soa_view<T, Space>> = true;
template <class T, std::size_t Extent>
inline constexpr bool is_index_range_v<cuda::std::span<T, Extent>> = true;
template <class T, class Layout, class Space>
inline constexpr bool is_index_range_v<layout_view<T, Layout, Space>> = true;

// Views of records (layout::aos), which for_each stages through shared memory.
template <class View>
inline constexpr bool is_record_view_v = false;
template <class T, class Space>
inline constexpr bool is_record_view_v<layout_view<T, layout::aos, Space>> = true;

template <class View>
constexpr bool for_each_index_view_ok_checked() {
  constexpr bool known = is_pitched_view_v<View> || is_index_range_v<View>;
  static_assert(known,
                "coalesce::for_each_index: the view must be a pitched_view or pitched_volume_view (f(r, c), f(z, y, "
                "x)), or a soa_view or cuda::std::span (f(i)), of device memory; a container works too");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device,
                  "coalesce::for_each_index: the view is of host memory (a host_space container's view); the GPU "
                  "cannot read it: copy it into a device container and pass that one or its view()");
    return device;
  }
  return false;
}

template <class View>
constexpr bool for_each_index_view_ok() {
  if constexpr (mdspans_adapted<View>()) {
    return for_each_index_view_ok_checked<View>();
  } else {
    return false;
  }
}

template <class In, class Out>
constexpr bool transform_views_ok_checked() {
  constexpr bool known = view_space<In>::known && view_space<Out>::known;
  static_assert(known,
                "coalesce::transform: the input and the output must each be a soa_view, a pitched_view, a "
                "cuda::std::span or mdspan of device memory, or a type with a coalesce::view_adapter; a device "
                "soa_vector, coalesce::vector or pitched_matrix is taken as the input, and, not const, as the output");
  if constexpr (known) {
    constexpr bool device = std::is_same_v<typename view_space<In>::type, device_space> &&
                            std::is_same_v<typename view_space<Out>::type, device_space>;
    static_assert(device,
                  "coalesce::transform: a view is of host memory (a soa_vector or pitched_matrix in host_space); the "
                  "GPU cannot read it: copy it into a device container and pass that one's view()");
    constexpr bool writable = !std::is_const_v<typename Out::element_type>;
    static_assert(!device || writable, "coalesce::transform: the output view must be writable");
    return device && writable;
  }
  return false;
}

template <class In, class Out>
constexpr bool transform_views_ok() {
  if constexpr (mdspans_adapted<In, Out>()) {
    return transform_views_ok_checked<In, Out>();
  } else {
    return false;
  }
}

template <class T>
soa_view<const T> as_const_view(const soa_view<T>& v) {
  return v;
}
template <class T>
pitched_view<const T> as_const_view(const pitched_view<T>& v) {
  return v;
}
template <class T, class Layout>
layout_view<const T, Layout> as_const_view(const layout_view<T, Layout>& v) {
  return v;
}

// Under COALESCE_DEBUG, every column a walk touches must be memory the GPU reads (see
// detail/device_memory.hpp); the view types already rule out host containers.
template <class Columns>
void require_device_columns(const Columns& columns, std::size_t rows, std::size_t cols, const char* what) {
  if constexpr (COALESCE_DEBUG) {
    columns.visit_ranges(rows, cols, [&](const void* first, const void*) { require_device_memory(first, what); });
  } else {
    (void)columns, (void)rows, (void)cols, (void)what;
  }
}
template <class T, std::size_t Extent>
cuda::std::span<const T, Extent> as_const_view(const cuda::std::span<T, Extent>& v) {
  return v;
}

template <class First, class... Rest>
const First& first_of(const First& first, const Rest&...) {
  return first;
}

// Walks `columns` in chunks of N where every column allows it at the same element, else element
// by element (each read as its alignment allows: still coalesced, no vectors).
template <unsigned N, class Work, class... Columns>
void launch_columns(std::size_t rows, std::size_t cols, const Work& work, cudaStream_t stream, const char* what,
                    const Columns&... columns) {
  const std::size_t head = first_of(columns...).template head<N>();
  if (head < N && (columns.template aligned_at<N>(head, rows) && ...))
    launch_chunk_walk<N>(chunk_grid<N>{rows, cols, head < cols ? head : cols}, work, stream, what);
  else launch_element_walk(rows, cols, work, stream, what);
}

template <class Columns, class F>
void update_columns(const Columns& columns, std::size_t rows, std::size_t cols, const F& f, cudaStream_t stream) {
  launch_columns<Columns::chunk_elements>(rows, cols, update_in_place<Columns, F>{columns, f}, stream,
                                          "coalesce::for_each kernel launch", columns);
}

template <class In, class Out, class F>
void map_columns_into(const In& in, const Out& out, std::size_t rows, std::size_t cols, const F& f,
                      cudaStream_t stream) {
  constexpr unsigned n = In::chunk_elements < Out::chunk_elements ? In::chunk_elements : Out::chunk_elements;
  constexpr const char* what = "coalesce::transform kernel launch";
  const overlap met = columns_overlap(in, out, rows, cols);
  if (met == overlap::partial)
    throw std::invalid_argument(
        "coalesce::transform: an input overlaps the output without being the same elements (in place), so what an "
        "element reads would depend on the order the threads run in; write to other memory");
  if (met == overlap::in_place)
    launch_columns<n>(rows, cols, map_columns<In, Out, F, false>{in, out, f}, stream, what, in, out);
  else launch_columns<n>(rows, cols, map_columns<In, Out, F, true>{in, out, f}, stream, what, in, out);
}

}  // namespace coalesce::detail
