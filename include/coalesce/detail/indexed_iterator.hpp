// coalesce::detail: a random-access iterator over any view with view[i]: a view and an index, *it
// is view[index]. What layout_view's begin() and end() return. Users never include this header.
// Host-capable.
#pragma once

#include <coalesce/config.hpp>

#include <cstddef>
#include <type_traits>

// As in soa_view.hpp: the iterator tag alone, without the stream iterators of <iterator>.
#if defined(__GLIBCXX__) && __has_include(<bits/stl_iterator_base_types.h>)
#  include <bits/stl_iterator_base_types.h>
#else
#  include <iterator>
#endif

namespace coalesce::detail {

template <class View>
class indexed_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = typename View::value_type;
  using difference_type = std::ptrdiff_t;
  using reference = typename View::reference;
  using pointer = void;

  indexed_iterator() = default;
  COALESCE_HOST_DEVICE indexed_iterator(const View& view, std::size_t index) : view_(view), index_(index) {}

  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator*() const { return view_[index_]; }
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator[](difference_type n) const { return view_[index_ + n]; }
  COALESCE_HOST_DEVICE indexed_iterator& operator++() { return *this += 1; }
  COALESCE_HOST_DEVICE indexed_iterator operator++(int) {
    indexed_iterator old = *this;
    ++index_;
    return old;
  }
  COALESCE_HOST_DEVICE indexed_iterator& operator--() { return *this -= 1; }
  COALESCE_HOST_DEVICE indexed_iterator operator--(int) {
    indexed_iterator old = *this;
    --index_;
    return old;
  }
  COALESCE_HOST_DEVICE indexed_iterator& operator+=(difference_type n) {
    index_ += n;
    return *this;
  }
  COALESCE_HOST_DEVICE indexed_iterator& operator-=(difference_type n) {
    index_ -= n;
    return *this;
  }
  COALESCE_HOST_DEVICE friend indexed_iterator operator+(indexed_iterator it, difference_type n) { return it += n; }
  COALESCE_HOST_DEVICE friend indexed_iterator operator+(difference_type n, indexed_iterator it) { return it += n; }
  COALESCE_HOST_DEVICE friend indexed_iterator operator-(indexed_iterator it, difference_type n) { return it -= n; }
  COALESCE_HOST_DEVICE friend difference_type operator-(const indexed_iterator& a, const indexed_iterator& b) {
    return difference_type(a.index_) - difference_type(b.index_);
  }
  COALESCE_HOST_DEVICE friend bool operator==(const indexed_iterator& a, const indexed_iterator& b) {
    return a.index_ == b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator!=(const indexed_iterator& a, const indexed_iterator& b) {
    return a.index_ != b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator<(const indexed_iterator& a, const indexed_iterator& b) {
    return a.index_ < b.index_;
  }
  COALESCE_HOST_DEVICE friend bool operator>(const indexed_iterator& a, const indexed_iterator& b) { return b < a; }
  COALESCE_HOST_DEVICE friend bool operator<=(const indexed_iterator& a, const indexed_iterator& b) { return !(b < a); }
  COALESCE_HOST_DEVICE friend bool operator>=(const indexed_iterator& a, const indexed_iterator& b) { return !(a < b); }
  COALESCE_HOST_DEVICE std::size_t index() const { return index_; }  // the element's index in view()
  COALESCE_HOST_DEVICE const View& view() const { return view_; }    // the view it walks

 private:
  View view_{};
  std::size_t index_ = 0;
};

}  // namespace coalesce::detail
