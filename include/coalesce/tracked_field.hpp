// coalesce::tracked_field<F>: what a field is in the element coalesce::for_each hands f. It
// holds the field's value in registers, reads and assigns like an F, and notes whether f read
// the value the column held before writing it. That note is what lets for_each skip loading a
// column f only writes (e.c = e.a loads a and stores c, as a hand-written kernel does) while a
// column f reads and writes is still stored only where its bits changed. The notes are plain
// bools the compiler folds away: where f writes a field unconditionally, the load is dead code.
// Host-capable; included by <coalesce/soa.hpp>.
#pragma once
/// @file

#include <coalesce/config.hpp>

#include <type_traits>

namespace coalesce {

/// A field of arithmetic or enumeration type in for_each's element. It converts to F& and to
/// const F& (so e.x * 2, sqrtf(e.x), float& r = e.x, update(e.x) and &e.x all work), assigns
/// from anything an F assigns from, and has F's compound assignments and increments. A copy
/// (auto x = e.x) is a value of its own, as copying a float is: writing it changes nothing in
/// the element. Where a template must deduce F from it, name F (cuda::std::max<float>(e.x, 0.f))
/// or convert first (float(e.x)); printf takes float(e.x), not e.x. c ? e.x : 0.f is a float.
template <class F>
class tracked_field {
  static_assert(std::is_arithmetic_v<F> || std::is_enum_v<F>,
                "coalesce::tracked_field<F>: F is a number or an enumeration; other fields are plain references");

 public:
  using value_type = F;  ///< the field's type, a number or an enumeration

  /// Explicit, so that c ? e.x : 0.f has one way to meet (float), not two.
  COALESCE_HOST_DEVICE constexpr explicit tracked_field(const F& value) noexcept : value_(value) {}
  /// A copy holds the value and nothing else: its own notes start clean.
  COALESCE_HOST_DEVICE constexpr tracked_field(const tracked_field& other) noexcept : value_(other.read()) {}

  /// Assigns `value`: a write, not a read, so a field that f only assigns is stored without its
  /// column being loaded.
  COALESCE_HOST_DEVICE constexpr tracked_field& operator=(const F& value) noexcept {
    value_ = value;
    written_ = true;
    return *this;
  }
  /// Assigns the other field's value: a read of `other`, a write of this one (e.c = e.a loads a
  /// and stores c).
  COALESCE_HOST_DEVICE constexpr tracked_field& operator=(const tracked_field& other) noexcept {
    return *this = other.read();
  }

  /// Reading. A reference that may be written through counts as a read and a write.
  COALESCE_HOST_DEVICE constexpr operator const F&() const& noexcept { return read(); }  // NOLINT: as an F
  /// A reference that may be written through (float& r = e.x, update(e.x)): a read and a write.
  COALESCE_HOST_DEVICE constexpr operator F&() & noexcept { return modify(); }            // NOLINT: as an F
  /// The address of the value in registers, not of the element in its column (no &e.x - base):
  /// a read and a write, as it may be written through.
  COALESCE_HOST_DEVICE constexpr F* operator&() & noexcept { return &modify(); }
  /// The address of the value in registers, for reading only: a read.
  COALESCE_HOST_DEVICE constexpr const F* operator&() const& noexcept { return &read(); }

  /// value += u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator+=(const U& u) noexcept {
    modify() += u;
    return *this;
  }
  /// value -= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator-=(const U& u) noexcept {
    modify() -= u;
    return *this;
  }
  /// value *= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator*=(const U& u) noexcept {
    modify() *= u;
    return *this;
  }
  /// value /= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator/=(const U& u) noexcept {
    modify() /= u;
    return *this;
  }
  /// value %= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator%=(const U& u) noexcept {
    modify() %= u;
    return *this;
  }
  /// value &= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator&=(const U& u) noexcept {
    modify() &= u;
    return *this;
  }
  /// value |= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator|=(const U& u) noexcept {
    modify() |= u;
    return *this;
  }
  /// value ^= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator^=(const U& u) noexcept {
    modify() ^= u;
    return *this;
  }
  /// value <<= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator<<=(const U& u) noexcept {
    modify() <<= u;
    return *this;
  }
  /// value >>= u: a read and a write.
  template <class U>
  COALESCE_HOST_DEVICE constexpr tracked_field& operator>>=(const U& u) noexcept {
    modify() >>= u;
    return *this;
  }
  /// ++value, returning this field: a read and a write.
  COALESCE_HOST_DEVICE constexpr tracked_field& operator++() noexcept {
    ++modify();
    return *this;
  }
  /// --value, returning this field: a read and a write.
  COALESCE_HOST_DEVICE constexpr tracked_field& operator--() noexcept {
    --modify();
    return *this;
  }
  /// value++, returning the value before, as an F: a read and a write.
  COALESCE_HOST_DEVICE constexpr F operator++(int) noexcept { return modify()++; }
  /// value--, returning the value before, as an F: a read and a write.
  COALESCE_HOST_DEVICE constexpr F operator--(int) noexcept { return modify()--; }

  /// For the walk that stores the element: whether f wrote the field without reading what the
  /// column held first (so the column's old value does not matter).
  COALESCE_HOST_DEVICE constexpr bool overwritten() const noexcept { return written_ && !read_first_; }
  /// For the same walk: the value, with no read noted.
  COALESCE_HOST_DEVICE constexpr const F& held() const noexcept { return value_; }

 private:
  COALESCE_HOST_DEVICE constexpr const F& read() const noexcept {
    read_first_ = read_first_ || !written_;
    return value_;
  }
  COALESCE_HOST_DEVICE constexpr F& modify() noexcept {
    read_first_ = read_first_ || !written_;
    written_ = true;
    return value_;
  }

  F value_;
  mutable bool read_first_ = false;  // f saw the value the column held
  bool written_ = false;
};

}  // namespace coalesce
