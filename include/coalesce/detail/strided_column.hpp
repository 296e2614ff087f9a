// coalesce::detail: one column of T in rows (a span, a pitched view, an array of structs), as the
// chunk walk reads and writes it. Users never include this header; detail/view_walks.hpp does.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/element_bytes.hpp>
#include <coalesce/detail/vector_access.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace coalesce::detail {

// One column of T, in rows `row_stride` elements apart (a contiguous range is one row). A walk
// may run past `live_cols` into padding the view owns (to store whole 64-byte units): those
// positions are loaded and stored back but are not elements, and f never sees them.
template <class T>
struct strided_column {
  using value_type = std::remove_const_t<T>;
  static constexpr unsigned chunk_elements = chunk_elements_for(sizeof(T));
  T* data;
  std::size_t row_stride;
  std::size_t live_cols = static_cast<std::size_t>(-1);

  COALESCE_DEVICE COALESCE_FORCEINLINE bool live(grid_position p, unsigned k) const { return p.col + k < live_cols; }

  COALESCE_DEVICE COALESCE_FORCEINLINE T& at(grid_position p) const { return data[p.row * row_stride + p.col]; }

  // Every lane loads its own chunk (see soa_columns for columns that share loads across a warp).
  template <unsigned N>
  static constexpr bool warp_staged = false;

  // Copies are of bytes (memcpy), so that a struct's padding comes and goes as it was.
  template <unsigned N, bool ReadOnly>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(grid_position p, value_type (&out)[N], unsigned) const {
    const auto chunk = load_chunk<ReadOnly>(reinterpret_cast<const vector_chunk<value_type, N>*>(&at(p)));
    std::memcpy(out, chunk.value, sizeof(out));
  }
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store(grid_position p, const value_type (&in)[N], unsigned = 0) const {
    vector_chunk<value_type, N> chunk;
    std::memcpy(chunk.value, in, sizeof(in));
    store_chunk(reinterpret_cast<vector_chunk<value_type, N>*>(&at(p)), chunk);
  }
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_changed(grid_position p, const value_type (&before)[N],
                                                          value_type (&after)[N], unsigned) const {
    if (!same_bits(before, after)) store<N>(p, after);
  }
  // A padded struct is updated on its bytes as loaded (see "padding"): N values from p, or
  // (Alignment == alignof) the one value at p.
  static constexpr bool keeps_padding = has_padding_v<value_type>;
  template <unsigned N, std::size_t Alignment>
  COALESCE_DEVICE COALESCE_FORCEINLINE auto load_bytes(grid_position p) const {
    return load_image<Alignment>(reinterpret_cast<const vector_chunk<value_type, N, Alignment>*>(&at(p)));
  }
  template <unsigned N, std::size_t Alignment>
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_bytes(grid_position p,
                                                        const word_image<N * sizeof(T), Alignment>& bytes) const {
    store_image<Alignment>(reinterpret_cast<vector_chunk<value_type, N, Alignment>*>(const_cast<value_type*>(&at(p))),
                           bytes);
  }
  // One element outside the chunks (a head, a tail, a column that never aligns), in the
  // accesses its own alignment allows.
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_one(grid_position p, value_type& out) const {
    out = load_words<alignof(value_type)>(&at(p));
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_one_changed(grid_position p, const value_type& before,
                                                              value_type& after) const {
    if (!same_bits(before, after)) store_one(p, after);
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void store_one(grid_position p, const value_type& value) const {
    store_words<alignof(value_type)>(const_cast<value_type*>(&at(p)), value);
  }
  // What f receives: an element held in registers.
  COALESCE_DEVICE COALESCE_FORCEINLINE static value_type& element(value_type& v) { return v; }
  COALESCE_DEVICE COALESCE_FORCEINLINE static const value_type& element(const value_type& v) { return v; }

  // Host side.
  template <unsigned N>
  std::size_t head() const {
    return aligning_head<value_type, N>(data);
  }
  template <unsigned N>
  bool aligned_at(std::size_t head, std::size_t rows) const {
    return chunks_aligned<value_type, N>(data, head, rows, row_stride * sizeof(T));
  }
  // Calls visit(first byte, one past the last byte) for the memory of a rows x cols walk.
  template <class Visit>
  void visit_ranges(std::size_t rows, std::size_t cols, Visit&& visit) const {
    if (rows != 0 && cols != 0)
      visit(static_cast<const void*>(data), static_cast<const void*>(data + (rows - 1) * row_stride + cols));
  }
};

}  // namespace coalesce::detail
