// coalesce: soa_view, a non-owning view of structure-of-arrays columns (one pointer per leaf:
// per field, with fields that are structs, vector types or arrays split into theirs), and its
// iterator. What kernels take. Host-capable; included by <coalesce/soa.hpp>.
//
// A unit that only holds kernels can include this header alone: it brings the view, view[i] and
// COALESCE_FIELDS, and none of the container's host headers (<string>, <stdexcept>, <vector>),
// which cost more nvcc time than all of coalesce's own code (bench/: coalesce_compile_cost).
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/detail/make_reference.hpp>
#include <coalesce/memory_space.hpp>
#include <coalesce/soa_fields.hpp>
#include <coalesce/soa_reference.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

// The iterator needs std::random_access_iterator_tag only. libstdc++'s <iterator> also brings the
// stream iterators, and with them <iosfwd>, <streambuf> and the locale classes: half a second of
// nvcc time per unit, more than a kernel on a soa_view costs. libstdc++ declares the tags alone in
// one internal header; other standard libraries get <iterator>.
#if defined(__GLIBCXX__) && __has_include(<bits/stl_iterator_base_types.h>)
#  include <bits/stl_iterator_base_types.h>
#else
#  include <iterator>
#endif

namespace coalesce {

template <class T, class Space = device_space>
class soa_view;

/// A fixed array of N values, one per column: a soa_view's column pointers in leaf order (a
/// plain aggregate, not cuda::std::array: no libcu++ here, see detail/fields.hpp).
template <class P, std::size_t N>
struct column_array {
  P values[N];  ///< the values, in leaf order
  COALESCE_HOST_DEVICE constexpr P& operator[](std::size_t i) { return values[i]; }  ///< value i
  COALESCE_HOST_DEVICE constexpr const P& operator[](std::size_t i) const { return values[i]; }  ///< value i
  COALESCE_HOST_DEVICE static constexpr std::size_t size() noexcept { return N; }  ///< N
  COALESCE_HOST_DEVICE constexpr P* begin() { return values; }  ///< the first value
  COALESCE_HOST_DEVICE constexpr P* end() { return values + N; }  ///< one past the last
  COALESCE_HOST_DEVICE constexpr const P* begin() const { return values; }  ///< the first value
  COALESCE_HOST_DEVICE constexpr const P* end() const { return values + N; }  ///< one past the last
};

/// A random-access iterator over a soa_view; *it is view[i].
template <class T, class Space = device_space>
class soa_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;  ///< random access
  using value_type = std::remove_const_t<T>;  ///< the element type
  using difference_type = std::ptrdiff_t;  ///< a distance in elements
  using reference = soa_reference_t<T>;  ///< what *it is: a proxy of references
  using pointer = void;  ///< none: elements are spread over columns

  soa_iterator() = default;
  /// The iterator at element `index` of `view`.
  COALESCE_HOST_DEVICE soa_iterator(const soa_view<T, Space>& view, std::size_t index) : view_(view), index_(index) {}

  /// Host-only for a view of host memory, as view[i] is.
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator*() const { return view_[index_]; }
  /// view[index() + n], host-only for a view of host memory as well.
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator[](difference_type n) const { return view_[index_ + n]; }
  /// On to the next element.
  COALESCE_HOST_DEVICE soa_iterator& operator++() {
    ++index_;
    return *this;
  }
  /// On to the next element, returning the iterator as it was.
  COALESCE_HOST_DEVICE soa_iterator operator++(int) {
    soa_iterator old = *this;
    ++index_;
    return old;
  }
  /// Back to the element before.
  COALESCE_HOST_DEVICE soa_iterator& operator--() {
    --index_;
    return *this;
  }
  /// Back to the element before, returning the iterator as it was.
  COALESCE_HOST_DEVICE soa_iterator operator--(int) {
    soa_iterator old = *this;
    --index_;
    return old;
  }
  /// `n` elements on (back, for a negative n).
  COALESCE_HOST_DEVICE soa_iterator& operator+=(difference_type n) {
    index_ += n;
    return *this;
  }
  /// `n` elements back.
  COALESCE_HOST_DEVICE soa_iterator& operator-=(difference_type n) {
    index_ -= n;
    return *this;
  }
  COALESCE_HOST_DEVICE friend soa_iterator operator+(soa_iterator it, difference_type n) { return it += n; }
  COALESCE_HOST_DEVICE friend soa_iterator operator+(difference_type n, soa_iterator it) { return it += n; }
  COALESCE_HOST_DEVICE friend soa_iterator operator-(soa_iterator it, difference_type n) { return it -= n; }
  COALESCE_HOST_DEVICE friend difference_type operator-(const soa_iterator& a, const soa_iterator& b) {
    return difference_type(a.index_) - difference_type(b.index_);
  }
  COALESCE_HOST_DEVICE friend bool operator==(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ == b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator!=(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ != b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator<(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ < b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator>(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ > b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator<=(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ <= b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator>=(const soa_iterator& a, const soa_iterator& b) {
    return a.index_ >= b.index_;
  }
  /// The index in view() of the element it points to.
  COALESCE_HOST_DEVICE std::size_t index() const { return index_; }
  /// The view it walks.
  COALESCE_HOST_DEVICE const soa_view<T, Space>& view() const { return view_; }

 private:
  soa_view<T, Space> view_{};
  std::size_t index_ = 0;
};

/// A non-owning view of `size()` elements stored as columns: one pointer per leaf. Trivially
/// copyable, so kernels take it by value; soa_view<const T> is read-only. Space says where the
/// columns live: a view of device memory (the default, what kernels and algorithms take) and a
/// view of host memory are different types, so host memory cannot reach a kernel unnoticed.
/// A view carries no stream: an algorithm handed a view runs on the stream it is given (0 unless
/// told), where one handed the soa_vector runs on the vector's.
template <class T, class Space>
class soa_view {
  static_assert(is_memory_space_v<Space>,
                "coalesce::soa_view<T, Space>: Space must be coalesce::host_space or coalesce::device_space");

 public:
  using element_type = T;  ///< the element type, const for a read-only view
  using value_type = std::remove_const_t<T>;  ///< the element type without const
  using memory_space = Space;  ///< where the columns live
  using reference = soa_reference_t<T>;  ///< what view[i] is: a proxy of references
  using iterator = soa_iterator<T, Space>;  ///< what begin() and end() return
  /// The number of T's own fields.
  static constexpr std::size_t field_count = detail::field_count_v<value_type>;
  /// The number of columns T is stored in (leaf_count_v<T>): one per leaf, so a field that is a
  /// struct, a vector type or an array counts once for each leaf in it.
  static constexpr std::size_t leaf_count = detail::leaf_count_v<value_type>;
  /// The column pointers in leaf order, untyped: what columns() returns and the constructor takes
  /// (const void* for a read-only view).
  using column_pointers = column_array<std::conditional_t<std::is_const_v<T>, const void*, void*>, leaf_count>;

 private:
  static_assert(detail::check_soa_element<value_type>());
  template <std::size_t L>
  using leaf_type = detail::qualify_like_t<T, detail::leaf_type_t<value_type, L>>;

 public:
  soa_view() = default;
  /// Columns given as untyped pointers in leaf order, each holding at least `size` elements; the
  /// columns of one array field equally far apart (checked under COALESCE_DEBUG), as soa_vector
  /// lays them out.
  COALESCE_HOST_DEVICE soa_view(const column_pointers& columns, std::size_t size) : columns_(columns), size_(size) {}
  /// A read-only view of a writable one.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  COALESCE_HOST_DEVICE soa_view(const soa_view<U, Space>& other) : size_(other.size()) {
    for (std::size_t i = 0; i < leaf_count; ++i) columns_[i] = other.columns()[i];
  }

  COALESCE_HOST_DEVICE std::size_t size() const noexcept { return size_; }  ///< the number of elements
  COALESCE_HOST_DEVICE bool empty() const noexcept { return size_ == 0; }  ///< whether size() is 0
  COALESCE_HOST_DEVICE const column_pointers& columns() const noexcept {
    return columns_;
  }  ///< the columns, in leaf order

  /// The column of a field that is one column, as a raw pointer (256-byte aligned for a
  /// soa_vector's view): Key is a field index (column<0>()) or a pointer to member
  /// (column<&Particle::x>()). A field split into leaves has one column per leaf: leaf_column.
  template <auto Key>
  COALESCE_HOST_DEVICE auto* column() const noexcept {
    if constexpr (std::is_member_object_pointer_v<decltype(Key)>) {
      constexpr std::size_t index = detail::field_index_v<value_type, Key>;
      static_assert(index < field_count, "coalesce::soa_view::column<&T::member>: not a field of T");
      return column<index>();
    } else {
      static_assert(std::size_t(Key) < field_count, "coalesce::soa_view::column<I>: I is not a field index of T");
      if constexpr (std::size_t(Key) < field_count) {
        static_assert(!detail::splits_v<detail::field_type_t<value_type, std::size_t(Key)>>,
                      "coalesce::soa_view::column: this field of T is a struct, a vector type or an array, stored "
                      "as one column per leaf; take those with leaf_column<coalesce::first_leaf_v<T, I> + k>()");
        return leaf_column<detail::leaf_starts_v<value_type>.at[std::size_t(Key)]>();
      } else {
        return static_cast<leaf_type<0>*>(nullptr);  // after the assertion's message: no second error
      }
    }
  }
  /// Column L, L < leaf_count: leaf L of T (coalesce::leaf_t<T, L>), as a raw pointer.
  template <std::size_t L>
  COALESCE_HOST_DEVICE leaf_type<L>* leaf_column() const noexcept {
    static_assert(L < leaf_count, "coalesce::soa_view::leaf_column<L>: L is not a leaf index of T");
    return static_cast<leaf_type<L>*>(columns_[L]);
  }

  /// Leaf L of element i, as a raw pointer: leaf_column<L>() + i. Every view of a layout has it
  /// (layout_view's computes the address in its tile or record), so code that walks leaves takes
  /// any of them.
  template <std::size_t L>
  COALESCE_HOST_DEVICE leaf_type<L>* leaf_pointer(std::size_t i) const noexcept {
    return leaf_column<L>() + i;
  }

  /// Element i: references into every column. Precondition: i < size() (checked under
  /// COALESCE_DEBUG). Host and device code for a view of device memory; host code only for a view
  /// of host memory (device code that indexes one does not compile).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t i) const {
    return element(i);
  }
  /// Element i of a view of host memory, in host code only. Precondition: i < size() (checked
  /// under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  reference operator[](std::size_t i) const {
    return element(i);
  }

  /// An iterator at element 0.
  COALESCE_HOST_DEVICE iterator begin() const { return iterator(*this, 0); }
  /// An iterator one past the last element (at index size()).
  COALESCE_HOST_DEVICE iterator end() const { return iterator(*this, size_); }

  /// Elements [first, first + count) as a view of their own: the same columns, each `first`
  /// elements on, as cuda::std::span::subspan. An algorithm handed it walks only that range (its
  /// columns are then not 256-byte aligned at element 0; the walks align chunks with a head).
  /// Precondition: first + count <= size() (checked under COALESCE_DEBUG).
  COALESCE_HOST_DEVICE soa_view subview(std::size_t first, std::size_t count) const {
    COALESCE_ASSERT(first <= size_ && count <= size_ - first, "coalesce::soa_view::subview: range out of bounds");
    return soa_view(columns_from(first, std::make_index_sequence<leaf_count>{}), count);
  }
  /// Elements [first, size()).
  COALESCE_HOST_DEVICE soa_view subview(std::size_t first) const {
    COALESCE_ASSERT(first <= size_, "coalesce::soa_view::subview: first beyond the end");
    return subview(first, size_ - first);
  }

 private:
  template <std::size_t... L>
  COALESCE_HOST_DEVICE column_pointers columns_from(std::size_t first, std::index_sequence<L...>) const {
    return column_pointers{{leaf_column<L>() + first...}};
  }

  // The leaves of element i: column L at i.
  struct leaves_at {
    const soa_view& view;
    std::size_t i;
    template <std::size_t L>
    COALESCE_HOST_DEVICE leaf_type<L>& leaf() const {
      return view.template leaf_column<L>()[i];
    }
  };

  COALESCE_HOST_DEVICE reference element(std::size_t i) const {
    COALESCE_ASSERT(i < size_, "coalesce::soa_view: index out of range");
    return detail::make_reference<T>(leaves_at{*this, i});
  }

  column_pointers columns_{};
  std::size_t size_ = 0;
};

}  // namespace coalesce
