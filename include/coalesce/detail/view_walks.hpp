// coalesce::detail: what for_each and transform walk. Each kind of view (soa_view, pitched_view,
// cuda::std::span) becomes columns - addresses, alignment, chunk width - through walk_of, and
// the checks on the views an algorithm is handed live here too. Users never include this
// header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/device_memory.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/detail/view_declarations.hpp>  // pitched_view and cuda::std::span, declared
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

// The columns of a soa_view<T> (T or const T), loaded chunk by chunk into registers: one per
// leaf of T ("field" below is a leaf, a column).
template <class T>
struct soa_columns {
  using value_type = std::remove_const_t<T>;
  static constexpr std::size_t fields = leaf_count_v<value_type>;
  using field_indices = std::make_index_sequence<fields>;
  // Each leaf is its own column: a struct's padding is in no column, so nothing to keep.
  static constexpr bool keeps_padding = false;

  template <std::size_t... I>
  static constexpr unsigned fewest_chunk_elements(std::index_sequence<I...>) {
    unsigned n = 16;
    ((n = chunk_elements_for(sizeof(leaf_type_t<value_type, I>)) < n ? chunk_elements_for(sizeof(leaf_type_t<value_type, I>)) : n), ...);
    return n;
  }
  // 16-byte accesses to the widest column (a float column moves 4 elements a chunk, a double
  // column 2, a float3 column 4 in three accesses); narrower columns move fewer bytes per access,
  // each as wide as its chunk's size allows, still one contiguous span per warp.
  static constexpr unsigned chunk_elements = fewest_chunk_elements(field_indices{});

  // A column whose chunk is more than one access (4 twelve-byte float3s: three 16-byte words)
  // would have lanes 48 bytes apart, every instruction touching 32 sectors and stores writing
  // partial ones: on an NVIDIA H200, CUDA 13.0, pos += vel * dt over float3 columns ran at 0.815
  // of the same update over float columns that way, with DRAM bytes at the ideal. So such
  // columns are staged through shared memory a warp at a time: the warp's chunks are one
  // contiguous span of the column, which its lanes copy with consecutive 16-byte words, and each
  // lane then reads its chunk there (16-byte accesses 48 bytes apart: no bank conflict). Only
  // chunks of whole 16-byte words are staged (a 24-byte double3 alone, or two 20-byte values, are
  // read directly, in the widest access their alignment allows). Up to 40 KiB of staging per
  // block; a struct with more such columns reads them directly.
  template <unsigned N, std::size_t I>
  using chunk_of = vector_chunk<leaf_type_t<value_type, I>, N>;
  template <unsigned N, std::size_t I>
  static constexpr bool multi_access = sizeof(chunk_of<N, I>) > 16 && sizeof(chunk_of<N, I>) % 16 == 0;
  template <unsigned N, std::size_t... I>
  static constexpr std::size_t staging_bytes(std::index_sequence<I...>) {
    return ((multi_access<N, I> ? sizeof(chunk_of<N, I>) : std::size_t(0)) + ... + std::size_t(0)) * chunk_walk_threads;
  }
  template <unsigned N>
  static constexpr bool warp_staged = staging_bytes<N>(field_indices{}) > 0 &&
                                      staging_bytes<N>(field_indices{}) <= 40 * 1024;
  template <unsigned N, std::size_t I>
  static constexpr bool staged_field = warp_staged<N> && multi_access<N, I>;

  soa_view<T> view;

  template <unsigned N, bool ReadOnly>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(grid_position p, value_type (&out)[N], unsigned lanes) const {
    load_fields<N, ReadOnly>(p.col, out, lanes, field_indices{});
  }
  // Stores only the columns whose bits changed: a column f only read is never written.
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed(grid_position p, const value_type (&before)[N],
                                                          const value_type (&after)[N], unsigned lanes) const {
    store_changed_fields<N>(p.col, before, after, lanes, field_indices{});
  }

  // What f receives for an element in registers: the type view[i] has, so a functor written for
  // view[i] (p.x += p.vx * dt) works unchanged.
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<value_type> element(value_type& v) {
    return make_reference<value_type>(value_leaves<value_type>{v});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<const value_type> element(const value_type& v) {
    return make_reference<const value_type>(value_leaves<const value_type>{v});
  }
  // One element outside the chunks (a head, a tail, columns that never align alike), a leaf at a
  // time; only the leaves whose bits changed are stored.
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_one(grid_position p, value_type& out) const {
    load_leaves(p.col, out, field_indices{});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_one_changed(grid_position p, const value_type& before,
                                                              const value_type& after) const {
    store_changed_leaves(p.col, before, after, field_indices{});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static constexpr bool live(grid_position, unsigned) { return true; }
  // As transform's output: every column stored, none loaded.
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store(grid_position p, const value_type (&in)[N], unsigned lanes) const {
    store_fields<N>(p.col, in, lanes, field_indices{});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_one(grid_position p, const value_type& value) const {
    store_leaves(p.col, value, field_indices{});
  }

  // Host side: chunks of N must start at the same element in every column.
  template <unsigned N>
  std::size_t head() const {
    return aligning_head<leaf_type_t<value_type, 0>, N>(view.columns()[0]);
  }
  template <unsigned N>
  bool aligned_at(std::size_t head, std::size_t) const {
    return aligned_fields<N>(head, field_indices{});
  }
  template <class Visit>
  void visit_ranges(std::size_t, std::size_t cols, Visit&& visit) const {
    visit_fields(cols, visit, field_indices{});
  }

 private:
  // The warp's slots for column I's chunks in shared memory (one per lane), and the first of the
  // warp's chunks in the column.
  template <unsigned N, std::size_t I>
  COALESCE_DEVICE COALESCE_FORCEINLINE static chunk_of<N, I>* warp_slots() {
    __shared__ chunk_of<N, I> slots[chunk_walk_threads];
    return slots + threadIdx.x / 32 * 32;
  }
  template <unsigned N, std::size_t I>
  using column_chunk = std::conditional_t<std::is_const_v<T>, const chunk_of<N, I>, chunk_of<N, I>>;
  template <unsigned N, std::size_t I>
  COALESCE_DEVICE COALESCE_FORCEINLINE column_chunk<N, I>* chunk_at(std::size_t first) const {
    return reinterpret_cast<column_chunk<N, I>*>(view.template leaf_column<I>() + first);
  }

  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_leaves(std::size_t i, value_type& out, std::index_sequence<I...>) const {
    ((struct_leaf<I>(out) = view.template leaf_column<I>()[i]), ...);
  }
  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed_leaves(std::size_t i, const value_type& before,
                                                                 const value_type& after, std::index_sequence<I...>) const {
    (
        [&] {
          if (!same_bits(struct_leaf<I>(before), struct_leaf<I>(after)))
            view.template leaf_column<I>()[i] = struct_leaf<I>(after);
        }(),
        ...);
  }

  template <unsigned N, bool ReadOnly, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_fields(std::size_t first, value_type (&out)[N], unsigned lanes,
                                                        std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> chunk;
          if constexpr (staged_field<N, I>) {
            const unsigned lane = threadIdx.x % 32, count = __popc(lanes);
            chunk_of<N, I>* slots = warp_slots<N, I>();
            constexpr unsigned words = sizeof(chunk_of<N, I>) / 16;
            __syncwarp(lanes);  // every lane has read its slot of the previous chunk
            warp_copy<words, ReadOnly>(reinterpret_cast<uint4*>(slots),
                                       reinterpret_cast<const uint4*>(chunk_at<N, I>(first) - lane), lane, count);
            __syncwarp(lanes);
            chunk = slots[lane];
          } else {
            chunk = load_chunk<ReadOnly>(chunk_at<N, I>(first));
          }
#pragma unroll
          for (unsigned k = 0; k < N; ++k) struct_leaf<I>(out[k]) = chunk.value[k];
        }(),
        ...);
  }

  template <unsigned N, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed_fields(std::size_t first, const value_type (&before)[N],
                                                                 const value_type (&after)[N], unsigned lanes,
                                                                 std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> old_chunk, new_chunk;
#pragma unroll
          for (unsigned k = 0; k < N; ++k) {
            old_chunk.value[k] = struct_leaf<I>(before[k]);
            new_chunk.value[k] = struct_leaf<I>(after[k]);
          }
          const bool changed = !same_bits(old_chunk, new_chunk);
          if constexpr (staged_field<N, I>) {
            // The slots still hold what was loaded; a lane whose chunk changed overwrites its own,
            // and the warp writes its whole span back if any did.
            const unsigned lane = threadIdx.x % 32, count = __popc(lanes);
            chunk_of<N, I>* slots = warp_slots<N, I>();
            constexpr unsigned words = sizeof(chunk_of<N, I>) / 16;
            if (changed) slots[lane] = new_chunk;
            if (__any_sync(lanes, changed)) {
              __syncwarp(lanes);
              warp_copy<words, false>(reinterpret_cast<uint4*>(chunk_at<N, I>(first) - lane),
                                      reinterpret_cast<const uint4*>(slots), lane, count);
            }
          } else if (changed) {
            store_chunk(chunk_at<N, I>(first), new_chunk);
          }
        }(),
        ...);
  }

  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_leaves(std::size_t i, const value_type& value, std::index_sequence<I...>) const {
    ((view.template leaf_column<I>()[i] = struct_leaf<I>(value)), ...);
  }
  template <unsigned N, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_fields(std::size_t first, const value_type (&in)[N], unsigned lanes,
                                                         std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> chunk;
#pragma unroll
          for (unsigned k = 0; k < N; ++k) chunk.value[k] = struct_leaf<I>(in[k]);
          if constexpr (staged_field<N, I>) {
            const unsigned lane = threadIdx.x % 32, count = __popc(lanes);
            chunk_of<N, I>* slots = warp_slots<N, I>();
            constexpr unsigned words = sizeof(chunk_of<N, I>) / 16;
            __syncwarp(lanes);  // every lane has copied out the previous chunk
            slots[lane] = chunk;
            __syncwarp(lanes);
            warp_copy<words, false>(reinterpret_cast<uint4*>(chunk_at<N, I>(first) - lane),
                                    reinterpret_cast<const uint4*>(slots), lane, count);
          } else {
            store_chunk(chunk_at<N, I>(first), chunk);
          }
        }(),
        ...);
  }

  template <unsigned N, std::size_t... I>
  bool aligned_fields(std::size_t head, std::index_sequence<I...>) const {
    return (chunks_aligned<leaf_type_t<value_type, I>, N>(view.columns()[I], head, 1, 0) && ...);
  }
  template <class Visit, std::size_t... I>
  void visit_fields(std::size_t cols, Visit& visit, std::index_sequence<I...>) const {
    if (cols == 0) return;
    (visit(static_cast<const void*>(view.template leaf_column<I>()),
           static_cast<const void*>(view.template leaf_column<I>() + cols)),
     ...);
  }
};

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
  static_assert(!unadapted,
                "coalesce: to pass a cuda::std::mdspan to for_each, transform or for_each_index, include "
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
                "soa_vector or pitched_matrix is taken as the input, a pitched_matrix (not const) as the output");
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
soa_view<const T> as_const_view(const soa_view<T>& v) { return v; }
template <class T>
pitched_view<const T> as_const_view(const pitched_view<T>& v) { return v; }

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
cuda::std::span<const T, Extent> as_const_view(const cuda::std::span<T, Extent>& v) { return v; }

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
  else
    launch_element_walk(rows, cols, work, stream, what);
}

template <class Columns, class F>
void update_columns(const Columns& columns, std::size_t rows, std::size_t cols, const F& f, cudaStream_t stream) {
  launch_columns<Columns::chunk_elements>(rows, cols, update_in_place<Columns, F>{columns, f}, stream,
                                          "coalesce::for_each kernel launch", columns);
}

template <class In, class Out, class F>
void map_columns_into(const In& in, const Out& out, std::size_t rows, std::size_t cols, const F& f, cudaStream_t stream) {
  constexpr unsigned n = In::chunk_elements < Out::chunk_elements ? In::chunk_elements : Out::chunk_elements;
  constexpr const char* what = "coalesce::transform kernel launch";
  const overlap met = columns_overlap(in, out, rows, cols);
  if (met == overlap::partial)
    throw std::invalid_argument(
        "coalesce::transform: an input overlaps the output without being the same elements (in place), so what an "
        "element reads would depend on the order the threads run in; write to other memory");
  if (met == overlap::in_place)
    launch_columns<n>(rows, cols, map_columns<In, Out, F, false>{in, out, f}, stream, what, in, out);
  else
    launch_columns<n>(rows, cols, map_columns<In, Out, F, true>{in, out, f}, stream, what, in, out);
}

}  // namespace coalesce::detail
