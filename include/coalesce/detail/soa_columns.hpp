// coalesce::detail: where each column of a soa_vector sits in its one allocation, and how new
// elements of a column are filled. Users never include this header; <coalesce/soa_vector.hpp> does.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/soa_view.hpp>  // column_array

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace coalesce::detail {

// Byte offsets of each column in a soa_vector's single allocation of `capacity` elements: every
// column starts on a 256-byte boundary and is padded to one, so 16-byte vector access to the
// last element of any column stays inside the allocation. Columns of one type are therefore
// equally far apart, which the proxy of an array field relies on.
template <class T, std::size_t... L>
column_array<std::size_t, sizeof...(L) + 1> column_offsets(std::size_t capacity, std::index_sequence<L...>) {
  constexpr std::size_t field_bytes[] = {sizeof(leaf_type_t<T, L>)...};
  column_array<std::size_t, sizeof...(L) + 1> offsets{};
  std::size_t at = 0;
  for (std::size_t k = 0; k < sizeof...(L); ++k) {
    offsets[k] = at;
    const std::size_t column =
        checked_round_up(checked_multiply(capacity, field_bytes[k], "coalesce::soa_vector: a column of"),
                         allocation_alignment, "coalesce::soa_vector: a column of");
    if (column > static_cast<std::size_t>(-1) - at)
      throw std::length_error("coalesce::soa_vector: " + std::to_string(capacity) + " elements overflow std::size_t");
    at += column;
  }
  offsets[sizeof...(L)] = at;
  return offsets;
}

// Sets `count` elements of a column in `Space` from `first` on to `value`, ordered on `stream`: one
// element copied from the host, then doubling copies within the column, so that it needs no
// kernel (and compiles with any C++ compiler): log2(count) + 1 copies.
template <class Space, class F>
void fill_column(F* first, std::size_t count, const F& value, cudaStream_t stream) {
  if (count == 0) return;
  copy_rows<Space, host_space>(first, 0, &value, 0, sizeof(F), 1, stream);
  for (std::size_t done = 1; done < count; done *= 2) {
    const std::size_t n = done < count - done ? done : count - done;
    copy_rows<Space, Space>(first + done, 0, first, 0, n * sizeof(F), 1, stream);
  }
}

// Copies `count` elements of every leaf column of T, from the columns `from` (in FromSpace) to
// `to` (in ToSpace), ordered on `on`: one copy per column.
template <class T, class ToSpace, class FromSpace, class To, class From, std::size_t... L>
void copy_leaf_columns(const To& to, const From& from, std::size_t count, cudaStream_t on, std::index_sequence<L...>) {
  (copy_rows<ToSpace, FromSpace>(to[L], 0, from[L], 0, count * sizeof(leaf_type_t<T, L>), 1, on), ...);
}

// Elements [first, last) of every leaf column of T in `Space` = T{}, column by column (fill_column:
// no kernel), ordered on `stream`.
template <class T, class Space, class To, std::size_t... L>
void fill_leaf_columns_value_initialized(const To& to, std::size_t first, std::size_t last, cudaStream_t stream,
                                         std::index_sequence<L...>) {
  const T value{};
  (fill_column<Space>(static_cast<leaf_type_t<T, L>*>(to[L]) + first, last - first, struct_leaf<L>(value), stream),
   ...);
}

}  // namespace coalesce::detail
