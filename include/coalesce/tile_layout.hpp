// coalesce: where each element of a shared-memory tile lives, and a compile-time proof of what
// a warp's accesses to it cost. `__shared__ float t[32][32]` read by column serialises a warp 32
// ways (all 32 rows start in bank 0); a tile_layout places (r, c) so that 32 consecutive elements
// of a row, or of a column, sit in distinct banks, and the access model (<coalesce/model.hpp>)
// certifies it, for rows and columns and for any warp_access a kernel declares. Host-capable:
// layouts are plain constexpr functions.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/model.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce {

/// --- layout policies ------------------------------------------------------------------------
/// The naive row-major layout, kept for comparison and teaching: column reads conflict.
struct unpadded {};
/// Row-major with each row padded by the least that makes column reads conflict-free: one
/// element for 4-, 8- and 16-byte types ([32][33]), one 4-byte word for 1- and 2-byte types.
/// Works for any shape; costs at most one word per row.
struct padded {};
/// No padding: the column index (in elements, or in 4-byte words for 1- and 2-byte types) is
/// XORed with the row, the `t[r][c ^ r]` family. Needs a power-of-two row of at least 32 such units
/// for conflict-free columns.
struct swizzled {};
/// The 16-byte-chunk swizzle: within each 128-byte segment of a row, chunk j goes to chunk
/// j ^ (r mod 8). Conflict-free for 16-byte vector rows and columns; the layout of Hopper's TMA
/// 128B swizzle mode and what ldmatrix expects. Rows must be a multiple of 128 bytes.
struct swizzled_128b {};

// --- what a tile's user promises to do with it ----------------------------------------------
/// A shared_tile checks at compile time that its layout is conflict-free for the declared access.
namespace access {
struct rows {};              ///< warps read or write consecutive elements of one row
struct columns {};           ///< warps read or write consecutive elements of one column
struct rows_and_columns {};  ///< both (a transpose): the default
struct unchecked {};         ///< no promise and no check: for measuring the naive layout
}  // namespace access

/// --- one warp instruction's access to a tile ------------------------------------------------
/// Lane l touches element (first_row + row_step * l, first_col + col_step * l) and the
/// elements - 1 after it in the same row, as one access of elements * sizeof(T) bytes; lanes at or
/// past `lanes` take no part. A kernel declares each shared access it makes as one of these and
/// indexes its tile through row(lane) and col(lane), so the declaration is the code; the tile's
/// layout prices it at compile time (tile_layout::wavefronts).
///   constexpr auto even_stores = coalesce::warp_access::along_row(2);  // lane l: (0, 2l)
///   static_assert(layout::wavefronts(even_stores) == 2 * layout::ideal_wavefronts(even_stores));
///   tile(r + even_stores.row(lane), even_stores.col(lane)) = x;
struct warp_access {
  std::size_t first_row = 0;  ///< lane 0's row
  std::size_t first_col = 0;  ///< lane 0's column
  std::size_t row_step = 0;   ///< rows from lane l to lane l + 1
  std::size_t col_step = 1;   ///< columns from lane l to lane l + 1
  std::size_t elements = 1;   ///< consecutive elements of a row per lane: one access
  std::size_t lanes = 32;     ///< lanes 0 .. lanes - 1 take part
  /// 0: the lanes walk one straight line. Otherwise the coordinate they walk (the column when
  /// row_step is 0, else the row) folds every line_length onto the next line, one row down (or one
  /// column right): a block's threads walking a tile line by line, as shared_tile's loads do.
  std::size_t line_length = 0;

  /// Lane l at (0, col_step * l): consecutive (or strided) elements of a row.
  COALESCE_HOST_DEVICE static constexpr warp_access along_row(std::size_t col_step = 1) {
    warp_access a{};
    a.col_step = col_step;
    return a;
  }
  /// Lane l at (row_step * l, 0): consecutive (or strided) elements of a column.
  COALESCE_HOST_DEVICE static constexpr warp_access along_column(std::size_t row_step = 1) {
    warp_access a{};
    a.row_step = row_step;
    a.col_step = 0;
    return a;
  }
  /// The same pattern with lane 0 at (row, col).
  COALESCE_HOST_DEVICE constexpr warp_access from(std::size_t row, std::size_t col) const {
    warp_access a = *this;
    a.first_row = row;
    a.first_col = col;
    return a;
  }
  /// Each lane moves `n` consecutive elements of a row as one vector access.
  COALESCE_HOST_DEVICE constexpr warp_access vectors_of(std::size_t n) const {
    warp_access a = *this;
    a.elements = n;
    return a;
  }
  /// Only lanes 0 .. n - 1 take part (n <= 32).
  COALESCE_HOST_DEVICE constexpr warp_access with_lanes(std::size_t n) const {
    warp_access a = *this;
    a.lanes = n;
    return a;
  }
  /// The walked coordinate folds every `length` onto the next line (see line_length).
  COALESCE_HOST_DEVICE constexpr warp_access in_lines_of(std::size_t length) const {
    warp_access a = *this;
    a.line_length = length;
    return a;
  }

  /// Where lane `lane`'s (first) element is.
  COALESCE_HOST_DEVICE constexpr std::size_t row(std::size_t lane) const {
    const std::size_t r = first_row + row_step * lane;
    if (line_length == 0) return r;
    return row_step == 0 ? first_row + (first_col + col_step * lane) / line_length : r % line_length;
  }
  /// The column of lane `lane`'s (first) element.
  COALESCE_HOST_DEVICE constexpr std::size_t col(std::size_t lane) const {
    const std::size_t c = first_col + col_step * lane;
    if (line_length == 0) return c;
    return row_step == 0 ? c % line_length : c + (first_row + row_step * lane) / line_length;
  }
};

namespace detail {

template <class Policy>
inline constexpr bool is_tile_policy_v = std::is_same_v<Policy, unpadded> || std::is_same_v<Policy, padded> ||
                                         std::is_same_v<Policy, swizzled> || std::is_same_v<Policy, swizzled_128b>;

// What access_wavefronts answers when a lane's elements are not one access: not 1, 2, 4, 8 or 16
// bytes, not adjacent in the layout, or not aligned to their size.
inline constexpr unsigned not_one_access = ~0u;

// The wavefronts of warp access `a` on a rows x cols tile of elem_bytes elements laid out by
// `offset_of`. A lane whose elements fall outside the tile sits idle, as a kernel's bounds check
// makes it; 0 when no lane takes part.
template <class Offset>
COALESCE_HOST_DEVICE constexpr unsigned access_wavefronts(const Offset& offset_of, std::size_t elem_bytes,
                                                          std::size_t rows, std::size_t cols, const warp_access& a) {
  const std::size_t access_bytes = elem_bytes * a.elements;
  std::uint32_t active = 0;
  for (unsigned lane = 0; lane < a.lanes && lane < model::warp_size; ++lane) {
    const std::size_t r = a.row(lane), c = a.col(lane);
    if (r >= rows || c + a.elements > cols) continue;
    const std::size_t first = offset_of(r, c);
    for (std::size_t e = 1; e < a.elements; ++e)
      if (offset_of(r, c + e) != first + e) return not_one_access;
    if (!is_access_width(access_bytes) || first * elem_bytes % access_bytes != 0) return not_one_access;
    active |= std::uint32_t(1) << lane;
  }
  const auto address = [&](unsigned lane) -> std::uint64_t {
    return std::uint64_t(offset_of(a.row(lane), a.col(lane))) * elem_bytes;
  };
  return active == 0 ? 0u : model::warp_shared_access(address, unsigned(access_bytes), active).wavefronts;
}

// The worst of access_wavefronts over where a kernel may issue `a`: moved along the dimension its
// lanes do not walk (down the rows for a row access, across the columns for a column access) by
// 0 .. 31, or by fewer when the tile has fewer rows (columns). A kernel issues the same
// instruction all over the tile, and each policy's bank pattern repeats within 32 rows and 32
// columns once a row is a whole number of 4-byte words. 0 when at some place a lane's elements
// are not one access.
template <class Offset>
COALESCE_HOST_DEVICE constexpr unsigned worst_access_wavefronts(const Offset& offset_of, std::size_t elem_bytes,
                                                                std::size_t rows, std::size_t cols,
                                                                const warp_access& a) {
  const bool moves_down = a.row_step == 0, moves_across = !moves_down && a.col_step == 0;
  const std::size_t extent = moves_down ? rows : moves_across ? cols : 1;
  const std::size_t places = extent < 32 ? extent : 32;
  unsigned worst = 0;
  for (std::size_t k = 0; k < places; ++k) {
    const warp_access here = a.from(a.first_row + (moves_down ? k : 0), a.first_col + (moves_across ? k : 0));
    const unsigned w = access_wavefronts(offset_of, elem_bytes, rows, cols, here);
    if (w == not_one_access) return 0;
    worst = w > worst ? w : worst;
  }
  return worst;
}

// The fewest wavefronts `lanes` lanes of `elem_bytes` can take: 128 bytes per pass.
COALESCE_HOST_DEVICE constexpr unsigned ideal_wavefronts(std::size_t elem_bytes, std::size_t lanes) {
  const std::size_t bytes = elem_bytes * lanes;
  return bytes == 0 ? 0u : unsigned((bytes + 127) / 128);
}

// Row-major placement with a row stride in elements.
struct row_major_offset {
  std::size_t stride;
  COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const { return r * stride + c; }
};

// The padded stride: the least stride >= Cols whose column reads take the ideal wavefronts.
// Searched with the access model itself, so "padded" means "proved conflict-free", not a rule of
// thumb; a stride of Cols + 32 words always works, so the search ends.
template <class T, std::size_t Rows, std::size_t Cols>
constexpr std::size_t padded_stride() {
  const std::size_t lanes = Rows < 32 ? Rows : 32;
  const std::size_t cols_checked = Cols < 4 ? Cols : 4;  // sub-word types: every position in a word
  for (std::size_t stride = Cols;; ++stride) {
    bool ideal = true;
    for (std::size_t c = 0; c < cols_checked && ideal; ++c)
      ideal = access_wavefronts(row_major_offset{stride}, sizeof(T), Rows, Cols,
                                warp_access::along_column().from(0, c).with_lanes(lanes)) ==
              ideal_wavefronts(sizeof(T), lanes);
    if (ideal) return stride;
  }
}

template <class T, std::size_t Rows, std::size_t Cols, class Policy>
struct tile_offset;

template <class T, std::size_t Rows, std::size_t Cols>
struct tile_offset<T, Rows, Cols, unpadded> {
  static constexpr std::size_t size = Rows * Cols;
  COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const { return r * Cols + c; }
};

template <class T, std::size_t Rows, std::size_t Cols>
struct tile_offset<T, Rows, Cols, padded> {
  static constexpr std::size_t stride = padded_stride<T, Rows, Cols>();
  static constexpr std::size_t size = Rows * stride;
  COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const { return r * stride + c; }
};

template <class T, std::size_t Rows, std::size_t Cols>
struct tile_offset<T, Rows, Cols, swizzled> {
  // The XOR works on units of max(sizeof(T), 4) bytes: a 4-byte bank word, or one element.
  static constexpr std::size_t per_unit = sizeof(T) >= 4 ? 1 : 4 / sizeof(T);
  static constexpr std::size_t units_per_row = Cols / per_unit;
  static_assert(
      Cols % per_unit == 0 && units_per_row != 0 && (units_per_row & (units_per_row - 1)) == 0,
      "coalesce::swizzled: a row must be a power of two of max(sizeof(T), 4)-byte units; use coalesce::padded");
  static constexpr std::size_t size = Rows * Cols;
  COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const {
    const std::size_t unit = (c / per_unit) ^ (r % units_per_row);
    return r * Cols + unit * per_unit + c % per_unit;
  }
};

template <class T, std::size_t Rows, std::size_t Cols>
struct tile_offset<T, Rows, Cols, swizzled_128b> {
  static_assert((Cols * sizeof(T)) % 128 == 0 && sizeof(T) <= 16,
                "coalesce::swizzled_128b: a row must be a multiple of 128 bytes; use coalesce::padded");
  static constexpr std::size_t per_chunk = 16 / sizeof(T);
  static constexpr std::size_t size = Rows * Cols;
  COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const {
    const std::size_t chunk = c / per_chunk;
    const std::size_t swizzled_chunk = (chunk & ~std::size_t(7)) | ((chunk & 7) ^ (r & 7));
    return r * Cols + swizzled_chunk * per_chunk + c % per_chunk;
  }
};

}  // namespace detail

/// Where element (r, c) of a Rows x Cols tile of T lives in shared memory, and what it costs.
/// Every value is a compile-time constant, so a user can static_assert on the certificate.
template <class T, std::size_t Rows, std::size_t Cols, class Policy = padded>
struct tile_layout {
  static_assert(detail::is_access_width(sizeof(T)),
                "coalesce::tile_layout<T>: sizeof(T) must be 1, 2, 4, 8 or 16 bytes (one shared-memory access)");
  static_assert(Rows > 0 && Cols > 0, "coalesce::tile_layout: Rows and Cols must be positive");
  static_assert(detail::is_tile_policy_v<Policy>,
                "coalesce::tile_layout: Policy must be coalesce::padded, swizzled, swizzled_128b or unpadded");

 private:
  // After a failed check above, the rest is computed for a valid stand-in, so that the one
  // static_assert is the only error the user reads.
  using checked_type = std::conditional_t<detail::is_access_width(sizeof(T)), T, float>;
  using checked_policy = std::conditional_t<detail::is_tile_policy_v<Policy>, Policy, padded>;
  static constexpr std::size_t checked_rows = Rows > 0 ? Rows : 1;
  static constexpr std::size_t checked_cols = Cols > 0 ? Cols : 1;
  using offsets = detail::tile_offset<checked_type, checked_rows, checked_cols, checked_policy>;

 public:
  using value_type = T;                      ///< the element type
  using policy = Policy;                     ///< the layout policy
  static constexpr std::size_t rows = Rows;  ///< the tile's rows
  static constexpr std::size_t cols = Cols;  ///< the tile's columns

  /// Elements to allocate (padding included).
  static constexpr std::size_t size = offsets::size;
  /// Element offset of (r, c) from the tile's start.
  COALESCE_HOST_DEVICE static constexpr std::size_t offset(std::size_t r, std::size_t c) { return offsets{}(r, c); }

 private:
  struct offset_function {
    COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const { return offset(r, c); }
  };

 public:
  /// What one warp instruction `a` costs on this tile: its shared-memory wavefronts, worst case
  /// over the places a kernel issues it (moved along the dimension its lanes do not walk, to each
  /// of the first 32 rows or columns), and the least any layout can do: 128 bytes per wavefront.
  /// wavefronts(a) is 0 when a lane's elements are not one aligned access in this layout.
  COALESCE_HOST_DEVICE static constexpr unsigned wavefronts(warp_access a) {
    return detail::worst_access_wavefronts(offset_function{}, sizeof(checked_type), checked_rows, checked_cols, a);
  }
  /// The least wavefronts any layout needs for `a`: 128 bytes per wavefront.
  COALESCE_HOST_DEVICE static constexpr unsigned ideal_wavefronts(warp_access a) {
    return detail::ideal_wavefronts(sizeof(checked_type) * a.elements, a.lanes < 32 ? a.lanes : 32);
  }
  /// No more wavefronts than the ideal: no bank conflict anywhere the kernel issues `a`.
  COALESCE_HOST_DEVICE static constexpr bool conflict_free(warp_access a) {
    const unsigned w = wavefronts(a);
    return w != 0 && w <= ideal_wavefronts(a);
  }

  /// The certificate every tile carries: 32 lanes (or the whole row / column when shorter) touching
  /// consecutive elements of a row, or of a column.
  static constexpr warp_access row_access = warp_access::along_row().with_lanes(Cols < 32 ? Cols : 32);
  static constexpr warp_access column_access =
      warp_access::along_column().with_lanes(Rows < 32 ? Rows : 32);  ///< the same down a column
  static constexpr unsigned row_access_wavefronts = wavefronts(row_access);  ///< wavefronts(row_access)
  static constexpr unsigned column_access_wavefronts = wavefronts(column_access);  ///< wavefronts(column_access)
  static constexpr unsigned ideal_row_wavefronts = ideal_wavefronts(row_access);  ///< the least for row_access
  static constexpr unsigned ideal_column_wavefronts = ideal_wavefronts(column_access);  ///< the least for column_access
  static constexpr bool conflict_free_rows = row_access_wavefronts == ideal_row_wavefronts;  ///< no conflict along rows
  static constexpr bool conflict_free_columns =
      column_access_wavefronts == ideal_column_wavefronts;  ///< nor along columns
};

}  // namespace coalesce
