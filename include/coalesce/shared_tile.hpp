// coalesce: shared-memory tiles that are bank-conflict-free by default. shared_tile replaces
// `__shared__ T t[Rows][Cols]`: same indexing, a layout from <coalesce/tile_layout.hpp> (padded by
// default), a compile error when the layout conflicts for the access you declare, and
// block-cooperative loads and stores from pitched views. Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/shared_tile.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/tile_layout.hpp>

#  include <cstddef>
#  include <cstdint>
#  include <type_traits>

namespace coalesce {

template <class T, std::size_t Rows, std::size_t Cols, class Policy = padded>
class shared_tile_view;

namespace detail {

// The vector path's tile stores: lane l of a warp holds vector `first_vector` + l of the tile
// walked row by row (vectors_per_row to a row), and stores its element `e` to
// (row, PerVector * vector + e), one scalar store per element.
template <class Layout, std::size_t PerVector>
COALESCE_HOST_DEVICE constexpr warp_access vector_load_stores(std::size_t first_vector, std::size_t e) {
  return warp_access::along_row(PerVector).from(0, first_vector * PerVector + e).in_lines_of(Layout::cols);
}

COALESCE_HOST_DEVICE constexpr std::size_t greatest_common_divisor(std::size_t a, std::size_t b) {
  return b == 0 ? a : greatest_common_divisor(b, a % b);
}

// Whether a load may read global rows as 16-byte vectors and spread each over `per_vector`
// scalar tile stores without bank conflicts: decided by the layout's certificate for every store
// the path makes. Warp w starts at vector 32w, which falls on one of a few places in a row, and
// the certificate's worst case covers every row. With [32][33] floats, a warp's 32 float4s cover
// 4 rows and land in 32 distinct banks; with [32][33] doubles they would conflict 2-way, so
// doubles load as scalars.
template <class Layout, std::size_t PerVector>
COALESCE_HOST_DEVICE constexpr bool vector_loads_stay_conflict_free() {
  if (PerVector < 2 || Layout::cols % PerVector != 0) return false;
  constexpr std::size_t vectors_per_row = Layout::cols / PerVector;
  constexpr std::size_t start_step = greatest_common_divisor(32, vectors_per_row);
  for (std::size_t first_vector = 0; first_vector < vectors_per_row; first_vector += start_step)
    for (std::size_t e = 0; e < PerVector; ++e)
      if (!Layout::conflict_free(vector_load_stores<Layout, PerVector>(first_vector, e))) return false;
  return true;
}

// Whether this load can take the vector path: the layout allows it, the global rows are 16-byte
// aligned, and no column is clipped.
template <class Layout, std::size_t PerVector>
COALESCE_DEVICE inline bool can_copy_as_vectors(const void* first, std::size_t pitch, std::size_t cols_in_range) {
  constexpr bool layout_allows = vector_loads_stay_conflict_free<Layout, PerVector>();
  return layout_allows && cols_in_range == Layout::cols && reinterpret_cast<std::uintptr_t>(first) % 16 == 0 &&
         pitch % 16 == 0;
}

COALESCE_DEVICE inline unsigned block_thread_index() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
COALESCE_DEVICE inline unsigned block_thread_count() { return blockDim.x * blockDim.y * blockDim.z; }

}  // namespace detail

/// A Rows x Cols tile at some shared-memory address (a static shared_tile's storage, or a slice of
/// dynamic shared memory). The cooperative operations are called by every thread of the block and
/// do not synchronize: put __syncthreads() between writing a tile and reading it.
template <class T, std::size_t Rows, std::size_t Cols, class Policy>
class shared_tile_view {
 public:
  using layout = tile_layout<T, Rows, Cols, Policy>;  ///< where each element lives
  using value_type = T;                               ///< the element type

  /// A view of `storage`, which holds layout::size elements.
  COALESCE_HOST_DEVICE explicit shared_tile_view(T* storage) : data_(storage) {}

  /// Element (r, c), wherever the layout puts it. Precondition: r < Rows, c < Cols (checked under
  /// COALESCE_DEBUG).
  COALESCE_HOST_DEVICE T& operator()(std::size_t r, std::size_t c) const {
    COALESCE_ASSERT(r < Rows && c < Cols, "coalesce::shared_tile: (r, c) out of range");
    return data_[layout::offset(r, c)];
  }
  COALESCE_HOST_DEVICE T* data() const { return data_; }  ///< the storage, in the layout's order

  /// Block-cooperative: tile(r, c) = in(first_row + r, first_col + c) for the part of the tile
  /// inside `in`; elements outside are left as they were. Consecutive threads take consecutive
  /// columns, so each warp reads whole rows (16-byte vectors when the rows allow).
  ///
  /// Tuning: each thread issues `Batch` global loads before storing any (more bytes in flight);
  /// `Vectorize` allows 16-byte global loads where the layout keeps their shared stores
  /// conflict-free and the rows are aligned.
  template <unsigned Batch = 4, bool Vectorize = true>
  COALESCE_DEVICE void load(pitched_view<const T> in, std::size_t first_row, std::size_t first_col) const {
    const std::size_t rows = clip(in.rows(), first_row, Rows);
    const std::size_t cols = clip(in.cols(), first_col, Cols);
    if (rows == 0 || cols == 0) return;
    constexpr std::size_t per_vector = sizeof(T) < 16 ? 16 / sizeof(T) : 1;
    const T* first = in.row(first_row) + first_col;
    if (Vectorize && detail::can_copy_as_vectors<layout, per_vector>(first, in.pitch_bytes(), cols)) {
      load_rows<Batch, per_vector>(first, in.pitch_bytes(), rows, Cols);
      return;
    }
    load_rows<Batch, 1>(first, in.pitch_bytes(), rows, cols);
  }

  /// Block-cooperative: out(first_row + r, first_col + c) = tile(r, c), clipped to `out`.
  COALESCE_DEVICE void store(pitched_view<T> out, std::size_t first_row, std::size_t first_col) const {
    const std::size_t rows = clip(out.rows(), first_row, Rows);
    const std::size_t cols = clip(out.cols(), first_col, Cols);
    if (rows == 0 || cols == 0) return;
    auto* first = reinterpret_cast<unsigned char*>(out.row(first_row) + first_col);
    const std::size_t pitch = out.pitch_bytes();
    walk(cols, Cols, rows, [&](unsigned c, unsigned r) {
      *reinterpret_cast<T*>(first + std::size_t(r) * pitch + std::size_t(c) * sizeof(T)) = (*this)(r, c);
    });
  }

  /// Block-cooperative: out(first_row + c, first_col + r) = tile(r, c), clipped to `out`. Each
  /// warp writes consecutive elements of an output row, so it reads a tile column: conflict-free
  /// when the layout's certificate says conflict_free_columns.
  COALESCE_DEVICE void store_transposed(pitched_view<T> out, std::size_t first_row, std::size_t first_col) const {
    const std::size_t rows = clip(out.rows(), first_row, Cols);  // output rows are tile columns
    const std::size_t cols = clip(out.cols(), first_col, Rows);
    if (rows == 0 || cols == 0) return;
    auto* first = reinterpret_cast<unsigned char*>(out.row(first_row) + first_col);
    const std::size_t pitch = out.pitch_bytes();
    walk(cols, Rows, rows, [&](unsigned r, unsigned c) {
      *reinterpret_cast<T*>(first + std::size_t(c) * pitch + std::size_t(r) * sizeof(T)) = (*this)(r, c);
    });
  }

 private:
  // Calls f(position, line) for every position < `used` of every line < `lines`, where
  // consecutive threads take consecutive positions (so a warp covers a contiguous run of a line)
  // and a line is `width` positions wide. Full tiles take a strided walk with no division per
  // element; clipped ones a general loop.
  template <class F>
  COALESCE_DEVICE static void walk(std::size_t used, std::size_t width, std::size_t lines, F f) {
    const unsigned tid = detail::block_thread_index(), threads = detail::block_thread_count();
    if (used == width && threads % width == 0) {
      const unsigned position = tid % unsigned(width), step = threads / unsigned(width);
#  pragma unroll 4
      for (unsigned line = tid / unsigned(width); line < lines; line += step) f(position, line);
      return;
    }
    for (unsigned i = tid; i < lines * width; i += threads) {
      const unsigned line = i / unsigned(width), position = i % unsigned(width);
      if (position < used) f(position, line);
    }
  }

  // tile rows [0, rows) x columns [0, cols) from global rows starting at `first`, `pitch` bytes
  // apart, moving PerVector elements per access and issuing Batch accesses per thread before
  // storing any: the compiler cannot move a global load above a shared store through generic
  // pointers, so without batching each thread would wait out one DRAM latency per access.
  template <unsigned Batch, std::size_t PerVector>
  COALESCE_DEVICE void load_rows(const T* first, std::size_t pitch, std::size_t rows, std::size_t cols) const {
    using chunk = std::conditional_t<PerVector == 1, T, detail::vector_chunk<T, PerVector>>;
    const auto* base = reinterpret_cast<const unsigned char*>(first);
    const unsigned tid = detail::block_thread_index(), threads = detail::block_thread_count();
    constexpr unsigned per_row = unsigned(Cols / PerVector);
    const auto put = [&](unsigned r, unsigned v, const chunk& value) {
      if constexpr (PerVector == 1) {
        (*this)(r, v) = value;
      } else {
#  pragma unroll
        for (unsigned e = 0; e < PerVector; ++e) (*this)(r, static_cast<unsigned>(PerVector) * v + e) = value.value[e];
      }
    };
    if (cols == Cols && threads % per_row == 0) {
      // Full width: thread t always takes chunk t % per_row, rows t / per_row + k * step.
      const unsigned v = tid % per_row, step = threads / per_row;
      const std::size_t stride = std::size_t(step) * pitch;
      const unsigned char* source = base + std::size_t(tid / per_row) * pitch + std::size_t(v) * sizeof(chunk);
      for (unsigned r = tid / per_row; r < rows; r += Batch * step, source += Batch * stride) {
        chunk value[Batch];
#  pragma unroll
        for (unsigned k = 0; k < Batch; ++k)
          if (r + k * step < rows) value[k] = *reinterpret_cast<const chunk*>(source + k * stride);
#  pragma unroll
        for (unsigned k = 0; k < Batch; ++k)
          if (r + k * step < rows) put(r + k * step, v, value[k]);
      }
      return;
    }
    const unsigned total = unsigned(rows) * per_row;
    for (unsigned i0 = tid; i0 < total; i0 += Batch * threads) {
      chunk value[Batch];
#  pragma unroll
      for (unsigned k = 0; k < Batch; ++k) {
        const unsigned i = i0 + k * threads, r = i / per_row, v = i % per_row;
        if (i < total && v < cols)
          value[k] = *reinterpret_cast<const chunk*>(base + std::size_t(r) * pitch + std::size_t(v) * sizeof(chunk));
      }
#  pragma unroll
      for (unsigned k = 0; k < Batch; ++k) {
        const unsigned i = i0 + k * threads, r = i / per_row, v = i % per_row;
        if (i < total && v < cols) put(r, v, value[k]);
      }
    }
  }

  COALESCE_HOST_DEVICE static std::size_t clip(std::size_t extent, std::size_t first, std::size_t tile) {
    return first >= extent ? 0 : (extent - first < tile ? extent - first : tile);
  }

  T* data_;
};

/// A Rows x Cols tile of T that owns its storage: declare it __shared__ in a kernel, in place of
/// `__shared__ T t[Rows][Cols]`:
///   __shared__ coalesce::shared_tile<float, 32, 32> tile;   // padded: [32][33] underneath
///   tile(threadIdx.y, threadIdx.x) = ...;
/// `Access` is the promise checked at compile time (see coalesce::access).
template <class T, std::size_t Rows, std::size_t Cols, class Policy = padded, class Access = access::rows_and_columns>
class shared_tile {
 public:
  using layout = tile_layout<T, Rows, Cols, Policy>;           ///< where each element lives
  using view_type = shared_tile_view<T, Rows, Cols, Policy>;  ///< the tile's view
  using value_type = T;                                        ///< the element type

 private:
  static constexpr bool needs_rows =
      std::is_same_v<Access, access::rows> || std::is_same_v<Access, access::rows_and_columns>;
  static constexpr bool needs_columns =
      std::is_same_v<Access, access::columns> || std::is_same_v<Access, access::rows_and_columns>;
  // The promise is the layout's certificate, the same warp_access model as every other tile
  // access in the library: access::rows checks layout::row_access (32 consecutive elements of a
  // row: what load's stores and store's reads are), access::columns layout::column_access (32 of
  // a column: what store_transposed reads). Those are exactly the walks' warp instructions when a
  // line is a multiple of 32 elements, as in the transposes' 64 x 64 tiles; a line narrower than
  // a warp folds each warp over several lines, which the promise does not price (a [16][17] float
  // tile takes 2 wavefronts there: warp_access::in_lines_of prices it). The vector path of load
  // checks its own stores (detail::vector_loads_stay_conflict_free).
  static_assert(needs_rows || needs_columns || std::is_same_v<Access, access::unchecked>,
                "coalesce::shared_tile: Access must be access::rows, columns, rows_and_columns or unchecked");
  static_assert(!needs_rows || layout::conflict_free_rows,
                "coalesce::shared_tile: this layout has bank conflicts when a warp reads a row; use coalesce::padded "
                "(or declare access::unchecked to measure it)");
  static_assert(
      !needs_columns || layout::conflict_free_columns,
      "coalesce::shared_tile: this layout has bank conflicts when a warp reads a column; use coalesce::padded "
      "(or declare access::unchecked to measure it)");

 public:
  /// Element (r, c). Precondition: r < Rows, c < Cols (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE T& operator()(std::size_t r, std::size_t c) { return view()(r, c); }
  /// The same, read-only.
  COALESCE_HOST_DEVICE const T& operator()(std::size_t r, std::size_t c) const {
    COALESCE_ASSERT(r < Rows && c < Cols, "coalesce::shared_tile: (r, c) out of range");
    return storage_[layout::offset(r, c)];
  }
  COALESCE_HOST_DEVICE view_type view() { return view_type(storage_); }  ///< a view of the tile

  /// Block-cooperative: shared_tile_view::load on this tile.
  template <unsigned Batch = 4, bool Vectorize = true>
  COALESCE_DEVICE void load(pitched_view<const T> in, std::size_t first_row, std::size_t first_col) {
    view().template load<Batch, Vectorize>(in, first_row, first_col);
  }
  /// Block-cooperative: shared_tile_view::store from this tile.
  COALESCE_DEVICE void store(pitched_view<T> out, std::size_t first_row, std::size_t first_col) {
    view().store(out, first_row, first_col);
  }
  /// Block-cooperative: shared_tile_view::store_transposed from this tile.
  COALESCE_DEVICE void store_transposed(pitched_view<T> out, std::size_t first_row, std::size_t first_col) {
    view().store_transposed(out, first_row, first_col);
  }

  /// Public so the type stays an aggregate (a __shared__ variable cannot have a constructor that
  /// runs); index through operator(), never directly.
  T storage_[layout::size];
};

}  // namespace coalesce

#endif  // __CUDACC__
