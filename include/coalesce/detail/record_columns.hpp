// coalesce::detail: the records of a layout_view<T, layout::aos> as the chunk walk reads them: a
// column of whole structs (strided_column), whose element f receives as the named-field proxy of
// the copy in registers, as it does for every other layout. Users never include this header.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/make_reference.hpp>
#include <coalesce/detail/strided_column.hpp>
#include <coalesce/soa_reference.hpp>

#include <type_traits>

namespace coalesce::detail {

template <class T>
struct record_columns : strided_column<T> {
  using value_type = std::remove_const_t<T>;
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<value_type> element(value_type& v) {
    return make_reference<value_type>(value_leaves<value_type>{v});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE static soa_reference_t<const value_type> element(const value_type& v) {
    return make_reference<const value_type>(value_leaves<const value_type>{v});
  }
};

// f called with the proxy of a record it is handed by reference: what the staged walk, which
// hands f a T&, runs for a layout_view of records.
template <class T, class F>
struct call_with_proxy {
  F f;
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE void operator()(T& record) const {
    f(make_reference<T>(value_leaves<T>{record}));
  }
};

}  // namespace coalesce::detail
