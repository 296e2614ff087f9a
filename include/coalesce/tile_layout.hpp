// coalesce: where each element of a shared-memory tile lives, and a compile-time proof of what
// a warp's row and column accesses cost. `__shared__ float t[32][32]` read by column serialises a
// warp 32 ways (all 32 rows start in bank 0); a tile_layout places (r, c) so that 32 consecutive
// elements of a row, or of a column, sit in distinct banks, and the access model
// (<coalesce/model.hpp>) certifies it. Host-capable: layouts are plain constexpr functions.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/model.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce {

// --- layout policies ------------------------------------------------------------------------
// The naive row-major layout, kept for comparison and teaching: column reads conflict.
struct unpadded {};
// Row-major with each row padded by the least that makes column reads conflict-free: one
// element for 4-, 8- and 16-byte types ([32][33]), one 4-byte word for 1- and 2-byte types.
// Works for any shape; costs at most one word per row.
struct padded {};
// No padding: the column index (in elements, or in 4-byte words for 1- and 2-byte types) is
// XORed with the row, the `t[r][c ^ r]` family. Needs a power-of-two row of at least 32 such units
// for conflict-free columns.
struct swizzled {};
// The 16-byte-chunk swizzle: within each 128-byte segment of a row, chunk j goes to chunk
// j ^ (r mod 8). Conflict-free for 16-byte vector rows and columns; the layout of Hopper's TMA
// 128B swizzle mode and what ldmatrix expects. Rows must be a multiple of 128 bytes.
struct swizzled_128b {};

// --- what a tile's user promises to do with it ----------------------------------------------
// A shared_tile checks at compile time that its layout is conflict-free for the declared access.
namespace access {
struct rows {};              // warps read or write consecutive elements of one row
struct columns {};           // warps read or write consecutive elements of one column
struct rows_and_columns {};  // both (a transpose): the default
struct unchecked {};         // no promise and no check: for measuring the naive layout
}  // namespace access

namespace detail {

template <class Policy>
inline constexpr bool is_tile_policy_v = std::is_same_v<Policy, unpadded> || std::is_same_v<Policy, padded> ||
                                         std::is_same_v<Policy, swizzled> || std::is_same_v<Policy, swizzled_128b>;

// The wavefronts a warp needs when its lane i touches element (row_of(i), col_of(i)) of a tile
// laid out by `offset_of`, `lanes` lanes active.
template <class Offset>
COALESCE_HOST_DEVICE constexpr unsigned tile_access_wavefronts(const Offset& offset_of, std::size_t elem_bytes,
                                                               std::size_t first_row, std::size_t first_col,
                                                               bool along_row, std::size_t lanes) {
  const auto address = [&](unsigned lane) -> std::uint64_t {
    const std::size_t r = along_row ? first_row : first_row + lane;
    const std::size_t c = along_row ? first_col + lane : first_col;
    return std::uint64_t(offset_of(r, c)) * elem_bytes;
  };
  return model::warp_shared_access(address, unsigned(elem_bytes), model::detail::lanes_mask(lanes)).wavefronts;
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
      ideal = tile_access_wavefronts(row_major_offset{stride}, sizeof(T), 0, c, false, lanes) ==
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
  static_assert(Cols % per_unit == 0 && units_per_row != 0 && (units_per_row & (units_per_row - 1)) == 0,
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

// Where element (r, c) of a Rows x Cols tile of T lives in shared memory, and what it costs.
// Every value is a compile-time constant, so a user can static_assert on the certificate.
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
  using value_type = T;
  using policy = Policy;
  static constexpr std::size_t rows = Rows;
  static constexpr std::size_t cols = Cols;

  // Elements to allocate (padding included).
  static constexpr std::size_t size = offsets::size;
  // Element offset of (r, c) from the tile's start.
  COALESCE_HOST_DEVICE static constexpr std::size_t offset(std::size_t r, std::size_t c) {
    return offsets{}(r, c);
  }

 private:
  struct offset_function {
    COALESCE_HOST_DEVICE constexpr std::size_t operator()(std::size_t r, std::size_t c) const { return offset(r, c); }
  };
  static constexpr std::size_t row_lanes = Cols < 32 ? Cols : 32;
  static constexpr std::size_t column_lanes = Rows < 32 ? Rows : 32;
  // The worst over the first 32 rows (row access) or columns (column access): every policy's
  // placement repeats within that.
  static constexpr unsigned worst(bool along_row) {
    unsigned w = 0;
    const std::size_t count = along_row ? (Rows < 32 ? Rows : 32) : (Cols < 32 ? Cols : 32);
    for (std::size_t k = 0; k < count; ++k) {
      const unsigned here = along_row
                                ? detail::tile_access_wavefronts(offset_function{}, sizeof(checked_type), k, 0, true, row_lanes)
                                : detail::tile_access_wavefronts(offset_function{}, sizeof(checked_type), 0, k, false, column_lanes);
      w = here > w ? here : w;
    }
    return w;
  }

 public:
  // The certificate: shared-memory wavefronts of one warp instruction in which 32 lanes (or the
  // whole row / column when shorter) touch consecutive elements of a row, or of a column, worst
  // case over the tile, and the least any layout can do (128 bytes per wavefront).
  static constexpr unsigned row_access_wavefronts = worst(true);
  static constexpr unsigned column_access_wavefronts = worst(false);
  static constexpr unsigned ideal_row_wavefronts = detail::ideal_wavefronts(sizeof(checked_type), row_lanes);
  static constexpr unsigned ideal_column_wavefronts = detail::ideal_wavefronts(sizeof(checked_type), column_lanes);
  static constexpr bool conflict_free_rows = row_access_wavefronts == ideal_row_wavefronts;
  static constexpr bool conflict_free_columns = column_access_wavefronts == ideal_column_wavefronts;
};

}  // namespace coalesce
