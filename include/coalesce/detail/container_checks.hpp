// coalesce::detail: the containers' sizes in bytes and their checks of what they are handed: the
// pitch of a row and the bytes of rows x cols elements under a pitch policy (each checked for
// std::size_t overflow), and the std::invalid_argument that a soa_vector's or a pitched_matrix's
// copy throws when sizes or shapes differ. Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/byte_copies.hpp>
#include <coalesce/memory.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace coalesce::detail {

// The alignment of a matrix's allocation: the allocation's 256 bytes, or the policy's rows' when
// they ask for more.
template <class PitchPolicy>
constexpr std::size_t pitched_allocation_alignment() {
  return PitchPolicy::row_alignment > allocation_alignment ? PitchPolicy::row_alignment : allocation_alignment;
}

// The pitch of rows of `cols` elements of T; throws std::length_error on overflow.
template <class T, class PitchPolicy>
std::size_t checked_pitch(std::size_t cols) {
  const std::size_t row_bytes = checked_multiply(cols, sizeof(T), "coalesce::pitched_matrix: a row of");
  return checked_round_up(row_bytes, PitchPolicy::row_alignment, "coalesce::pitched_matrix: the pitch of");
}

// The bytes of rows x cols elements of T, pitched (0 for an empty shape, whose pitch is still
// checked); throws std::length_error on overflow.
template <class T, class PitchPolicy>
std::size_t pitched_allocation_bytes(std::size_t rows, std::size_t cols) {
  if (rows == 0 || cols == 0) {
    (void)checked_pitch<T, PitchPolicy>(cols);
    return 0;
  }
  return checked_multiply(rows, checked_pitch<T, PitchPolicy>(cols), "coalesce::pitched_matrix: rows x pitch");
}

// Throws std::invalid_argument naming soa_vector's `operation` unless a source of `source_size`
// elements fits a vector of `size`.
inline void check_same_size(std::size_t source_size, std::size_t size, const char* operation) {
  if (source_size != size)
    throw std::invalid_argument(std::string("coalesce::soa_vector::") + operation + ": the source has " +
                                std::to_string(source_size) + " elements but the destination " + std::to_string(size) +
                                "; resize first or construct a new vector");
}

inline std::string matrix_shape_text(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// Throws std::invalid_argument naming pitched_matrix's `operation` unless a source of rows x cols
// fits a destination of to_rows x to_cols.
inline void check_same_shape(std::size_t rows, std::size_t cols, std::size_t to_rows, std::size_t to_cols,
                             const char* operation) {
  if (rows != to_rows || cols != to_cols)
    throw std::invalid_argument(std::string("coalesce::pitched_matrix::") + operation + ": the source is " +
                                matrix_shape_text(rows, cols) + " but the destination is " +
                                matrix_shape_text(to_rows, to_cols));
}

// Throws std::invalid_argument unless a dense vector of `dense_size` elements fills rows x cols.
inline void check_dense_size(std::size_t dense_size, std::size_t rows, std::size_t cols) {
  if (dense_size != rows * cols)
    throw std::invalid_argument("coalesce::pitched_matrix::copy_from: a dense vector of " + std::to_string(dense_size) +
                                " elements cannot fill a " + matrix_shape_text(rows, cols) + " matrix");
}

}  // namespace coalesce::detail
