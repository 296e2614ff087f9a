// coalesce::detail: the columns of a soa_view as the chunk walk reads and writes them - one
// column per leaf, loaded chunk by chunk into registers, stored only where they changed (for_each)
// or whole (transform's output), columns of multi-access chunks staged through shared memory a
// warp at a time. Users never include this header; detail/view_walks.hpp does. Needs a CUDA
// compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/make_reference.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/layout_view.hpp>
#include <coalesce/soa.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// A view's runs of leaves are whole columns (a soa_view's), so that a warp's chunks of one leaf
// are one contiguous span; a layout_view of tiles has a run per tile, each Lanes values long.
// chunked(L): whether leaf L's values are runs at all; a split's cold records are not, and are read
// a value at a time (a chunk's values of the leaf, a record apart).
template <class View>
struct leaf_runs {
  static constexpr bool whole_columns = true;
  static constexpr unsigned most_chunk_elements = 16;
  template <std::size_t L>
  static constexpr bool chunked = true;
};
// Tiles of a warp's width or more: chunks of Lanes / 32 elements, so that a warp's access to a leaf
// is one whole run (with 32 lanes, a float run is 128 bytes: 4-byte accesses). 16-byte chunks
// would make each warp instruction four runs a tile apart: on an NVIDIA H100, CUDA 13.0, the
// particle update over aosoa<32> ran at 0.966 of the same on columns that way, and at 0.988 a run
// an instruction (hand-written kernels, 32 M particles); aosoa<128> with 16-byte chunks, again a
// run an instruction, at 0.992. Narrower tiles: chunks of at most a run.
template <class T, std::size_t Lanes, class Space>
struct leaf_runs<layout_view<T, layout::aosoa<Lanes>, Space>> {
  static constexpr bool whole_columns = false;
  static constexpr unsigned most_chunk_elements = Lanes >= 32  ? (Lanes / 32 < 16 ? unsigned(Lanes / 32) : 16u)
                                                  : Lanes < 16 ? unsigned(Lanes)
                                                               : 16u;
  template <std::size_t L>
  static constexpr bool chunked = true;
};
// A split: hot columns, and cold tiles (walked as tiles are) or cold records (a value at a time).
template <class T, class Hot, class Cold, class Space>
struct leaf_runs<layout_view<T, layout::split<Hot, Cold>, Space>> {
  using map = layout_map<std::remove_const_t<T>, layout::split<Hot, Cold>>;
  static constexpr bool whole_columns = false;
  static constexpr unsigned most_chunk_elements = map::group < 16 && map::group > 1 ? unsigned(map::group) : 16u;
  template <std::size_t L>
  static constexpr bool chunked = map::group > 1 || map::table.hot[L];
};

// The columns of a soa_view<T> (T or const T), loaded chunk by chunk into registers: one per
// leaf of T ("field" below is a leaf, a column). View is the soa_view, or a layout_view of tiles
// (layout::aosoa<Lanes>), whose runs of Lanes values of a leaf are walked as columns are: a chunk
// never crosses a tile (chunks of at most Lanes elements, aligned alike in every tile), so each is
// one aligned access, and a warp's 32 chunks of a leaf are a few whole runs.
template <class T, class View = soa_view<T>>
struct soa_columns {
  using value_type = std::remove_const_t<T>;
  static constexpr std::size_t fields = leaf_count_v<value_type>;
  using field_indices = std::make_index_sequence<fields>;
  // Each leaf is its own column: a struct's padding is in no column, so nothing to keep.
  static constexpr bool keeps_padding = false;

  template <std::size_t... I>
  static constexpr unsigned fewest_chunk_elements(std::index_sequence<I...>) {
    unsigned n = 16;  // over the leaves whose values are runs: a value at a time bounds no chunk
    ((n = leaf_runs<View>::template chunked<I> && chunk_elements_for(sizeof(leaf_type_t<value_type, I>)) < n
              ? chunk_elements_for(sizeof(leaf_type_t<value_type, I>))
              : n),
     ...);
    return n;
  }
  // 16-byte accesses to the widest column (a float column moves 4 elements a chunk, a double
  // column 2, a float3 column 4 in three accesses); narrower columns move fewer bytes per access,
  // each as wide as its chunk's size allows, still one contiguous span per warp.
  static constexpr unsigned chunk_elements =
      fewest_chunk_elements(field_indices{}) < leaf_runs<View>::most_chunk_elements
          ? fewest_chunk_elements(field_indices{})
          : leaf_runs<View>::most_chunk_elements;

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
  static constexpr bool warp_staged = leaf_runs<View>::whole_columns && staging_bytes<N>(field_indices{}) > 0 &&
                                      staging_bytes<N>(field_indices{}) <= 40 * 1024;
  template <unsigned N, std::size_t I>
  static constexpr bool staged_field = warp_staged<N> && multi_access<N, I>;

  View view;
  // The first leaf whose values are runs, whose alignment decides where chunks start.
  template <std::size_t... I>
  static constexpr std::size_t first_chunked_leaf(std::index_sequence<I...>) {
    std::size_t first = 0;
    (void)((leaf_runs<View>::template chunked<I> ? (first = I, true) : false) || ...);
    return first;
  }
  static constexpr std::size_t aligning_leaf = first_chunked_leaf(field_indices{});

  template <unsigned N, bool ReadOnly>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(grid_position p, value_type (&out)[N], unsigned lanes) const {
    load_fields<N, ReadOnly>(p.col, out, lanes, field_indices{});
  }
  // Stores the columns f overwrote (wrote without reading first; their old values, never
  // looked at, need not have been loaded) and the others only where their bits changed: a
  // column f only read is never written.
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed(grid_position p, const value_type (&before)[N],
                                                          const value_type (&after)[N],
                                                          const bool (&overwritten)[N][fields], unsigned lanes) const {
    store_changed_fields<N>(p.col, before, after, overwritten, lanes, field_indices{});
  }

  // What f receives for an element in registers: the type view[i] has, so a functor written for
  // view[i] (p.x += p.vx * dt) works unchanged.
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<value_type> element(value_type& v) {
    return make_reference<value_type>(value_leaves<value_type>{v});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<const value_type> element(const value_type& v) {
    return make_reference<const value_type>(value_leaves<const value_type>{v});
  }
  // for_each's element: the same members, its fields of numbers tracked_fields, so that the walk
  // learns which columns f overwrote.
  using tracked_element = tracked_leaves<value_type>;
  COALESCE_DEVICE COALESCE_FORCEINLINE static for_each_reference_t<value_type> element(tracked_element& e) {
    return make_reference<tracked<value_type>>(tracked_source<value_type>{e});
  }
  // One element outside the chunks (a head, a tail, columns that never align alike), a leaf at a
  // time; only the leaves whose bits changed are stored.
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_one(grid_position p, value_type& out) const {
    load_leaves(p.col, out, field_indices{});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_one_changed(grid_position p, const value_type& before,
                                                              const value_type& after,
                                                              const bool (&overwritten)[fields]) const {
    store_changed_leaves(p.col, before, after, overwritten, field_indices{});
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
    return aligning_head<leaf_type_t<value_type, aligning_leaf>, N>(view.template leaf_pointer<aligning_leaf>(0));
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
    return reinterpret_cast<column_chunk<N, I>*>(view.template leaf_pointer<I>(first));
  }

  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_leaves(std::size_t i, value_type& out,
                                                        std::index_sequence<I...>) const {
    ((struct_leaf<I>(out) = *view.template leaf_pointer<I>(i)), ...);
  }
  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed_leaves(std::size_t i, const value_type& before,
                                                                 const value_type& after,
                                                                 const bool (&overwritten)[fields],
                                                                 std::index_sequence<I...>) const {
    (
        [&] {
          if (overwritten[I] || !same_bits(struct_leaf<I>(before), struct_leaf<I>(after)))
            *view.template leaf_pointer<I>(i) = struct_leaf<I>(after);
        }(),
        ...);
  }

  template <unsigned N, bool ReadOnly, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_fields(std::size_t first, value_type (&out)[N], unsigned lanes,
                                                        std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> chunk;
          if constexpr (!leaf_runs<View>::template chunked<I>) {
#pragma unroll
            for (unsigned k = 0; k < N; ++k) chunk.value[k] = *view.template leaf_pointer<I>(first + k);
          } else if constexpr (staged_field<N, I>) {
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
                                                                 const value_type (&after)[N],
                                                                 const bool (&overwritten)[N][fields], unsigned lanes,
                                                                 std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> old_chunk, new_chunk;
          bool whole_chunk_overwritten = true;
#pragma unroll
          for (unsigned k = 0; k < N; ++k) {
            old_chunk.value[k] = struct_leaf<I>(before[k]);
            new_chunk.value[k] = struct_leaf<I>(after[k]);
            whole_chunk_overwritten = whole_chunk_overwritten && overwritten[k][I];
          }
          // Where f overwrote the whole chunk, the old values are never compared, so the compiler
          // drops their load (when f writes unconditionally, whole_chunk_overwritten is a constant).
          // A staged column's old chunk is in shared memory anyway: it is compared.
          const bool changed = (!staged_field<N, I> && whole_chunk_overwritten) || !same_bits(old_chunk, new_chunk);
          if constexpr (!leaf_runs<View>::template chunked<I>) {
            (void)changed;  // each value is tested on its own
#pragma unroll
            for (unsigned k = 0; k < N; ++k)
              if (overwritten[k][I] || !same_bits(old_chunk.value[k], new_chunk.value[k]))
                *view.template leaf_pointer<I>(first + k) = new_chunk.value[k];
          } else if constexpr (staged_field<N, I>) {
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
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_leaves(std::size_t i, const value_type& value,
                                                         std::index_sequence<I...>) const {
    ((*view.template leaf_pointer<I>(i) = struct_leaf<I>(value)), ...);
  }
  template <unsigned N, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_fields(std::size_t first, const value_type (&in)[N], unsigned lanes,
                                                         std::index_sequence<I...>) const {
    (
        [&] {
          chunk_of<N, I> chunk;
#pragma unroll
          for (unsigned k = 0; k < N; ++k) chunk.value[k] = struct_leaf<I>(in[k]);
          if constexpr (!leaf_runs<View>::template chunked<I>) {
#pragma unroll
            for (unsigned k = 0; k < N; ++k) *view.template leaf_pointer<I>(first + k) = chunk.value[k];
          } else if constexpr (staged_field<N, I>) {
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
    return ((!leaf_runs<View>::template chunked<I> ||
             chunks_aligned<leaf_type_t<value_type, I>, N>(view.template leaf_pointer<I>(0), head, 1, 0)) &&
            ...);
  }
  // The bytes each column spans; a view of tiles spans one range, from element 0's tile to the
  // end of the last element's.
  template <class Visit, std::size_t... I>
  void visit_fields(std::size_t cols, Visit& visit, std::index_sequence<I...>) const {
    if (cols == 0) return;
    if constexpr (leaf_runs<View>::whole_columns) {
      (visit(static_cast<const void*>(view.template leaf_pointer<I>(0)),
             static_cast<const void*>(view.template leaf_pointer<I>(cols))),
       ...);
    } else if constexpr (is_split<typename View::layout_type>::value) {
      // Each hot column's run, then the cold groups from element 0's to the end of the last one's.
      using map = layout_map<value_type, typename View::layout_type>;
      ((map::table.hot[I] ? (void)visit(static_cast<const void*>(view.template leaf_pointer<I>(0)),
                                        static_cast<const void*>(view.template leaf_pointer<I>(cols)))
                          : void()),
       ...);
      if constexpr (map::group_bytes > 0) {
        const auto* cold = view.block() + map::cold_start(view.stride());
        const std::size_t first = view.first(), last = first + cols - 1;
        visit(static_cast<const void*>(cold + first / map::group * map::group_bytes),
              static_cast<const void*>(cold + (last / map::group + 1) * map::group_bytes));
      }
    } else {
      using map = layout_map<value_type, typename View::layout_type>;
      const auto* block = view.block();
      const std::size_t first = view.first(), last = first + cols - 1;
      visit(static_cast<const void*>(block + first / map::group * map::tile_bytes),
            static_cast<const void*>(block + (last / map::group + 1) * map::tile_bytes));
    }
  }
};

}  // namespace coalesce::detail
