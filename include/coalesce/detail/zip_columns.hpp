// coalesce::detail: the walk over coalesce::inputs(a, b, ...) - the columns of several views of
// one shape, loaded side by side, f called with one element of each. Users never include this
// header; <coalesce/algorithm.hpp> and <coalesce/reduce.hpp> do. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/chunk_walk.hpp>
#include <coalesce/detail/value_pack.hpp>
#include <coalesce/detail/view_adapter_base.hpp>
#include <coalesce/detail/view_walks.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// The columns of each input, walked together: chunks as narrow as the narrowest input's, and
// only where every input's chunks align at the same element (else the element walk).
template <class... Columns>
struct zip_columns {
  using value_type = value_pack<typename Columns::value_type...>;
  using indices = std::index_sequence_for<Columns...>;
  static constexpr unsigned chunk_elements = [] {
    unsigned n = 16;
    ((n = Columns::chunk_elements < n ? Columns::chunk_elements : n), ...);
    return n;
  }();
  template <unsigned N>
  static constexpr bool warp_staged = (Columns::template warp_staged<N> || ...);
  static constexpr bool keeps_padding = false;
  // f(element of input 0, element of input 1, ...): see call_on_element.
  static constexpr bool spreads_arguments = true;

  value_pack<Columns...> columns;

  COALESCE_DEVICE COALESCE_FORCEINLINE bool live(grid_position p, unsigned k) const {
    return slot<0>(columns).live(p, k);
  }
  template <unsigned N, bool ReadOnly>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load(grid_position p, value_type (&out)[N], unsigned lanes) const {
    load_each<N, ReadOnly>(p, out, lanes, indices{});
  }
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_one(grid_position p, value_type& out) const {
    load_one_each(p, out, indices{});
  }
  template <class F>
  COALESCE_DEVICE COALESCE_FORCEINLINE static decltype(auto) call(const F& f, const value_type& v) {
    return call_each(f, v, indices{});
  }

  // Host side.
  template <unsigned N>
  std::size_t head() const {
    return slot<0>(columns).template head<N>();
  }
  template <unsigned N>
  bool aligned_at(std::size_t head, std::size_t rows) const {
    return aligned_each<N>(head, rows, indices{});
  }
  template <class Visit>
  void visit_ranges(std::size_t rows, std::size_t cols, Visit&& visit) const {
    visit_each(rows, cols, visit, indices{});
  }

 private:
  template <std::size_t I>
  using column_t = std::tuple_element_t<I, std::tuple<Columns...>>;

  template <unsigned N, bool ReadOnly, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_each(grid_position p, value_type (&out)[N], unsigned lanes,
                                                      std::index_sequence<I...>) const {
    (
        [&] {
          typename column_t<I>::value_type values[N];
          slot<I>(columns).template load<N, ReadOnly>(p, values, lanes);
#pragma unroll
          for (unsigned k = 0; k < N; ++k) slot<I>(out[k]) = values[k];
        }(),
        ...);
  }
  template <std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE void load_one_each(grid_position p, value_type& out,
                                                          std::index_sequence<I...>) const {
    (slot<I>(columns).load_one(p, slot<I>(out)), ...);
  }
  template <class F, std::size_t... I>
  COALESCE_DEVICE COALESCE_FORCEINLINE static decltype(auto) call_each(const F& f, const value_type& v,
                                                                       std::index_sequence<I...>) {
    return f(column_t<I>::element(slot<I>(v))...);
  }
  template <unsigned N, std::size_t... I>
  bool aligned_each(std::size_t head, std::size_t rows, std::index_sequence<I...>) const {
    return (slot<I>(columns).template aligned_at<N>(head, rows) && ...);
  }
  template <class Visit, std::size_t... I>
  void visit_each(std::size_t rows, std::size_t cols, Visit& visit, std::index_sequence<I...>) const {
    (slot<I>(columns).visit_ranges(rows, cols, visit), ...);
  }
};

// What each input of a list is walked as: the view itself, or a volume's rows (its adapter).
template <class View>
using walked_t = std::remove_const_t<decltype(as_walkable(std::declval<const View&>()))>;

template <class... Views>
struct walk_of<input_list<Views...>> {
  static constexpr bool supported = (walk_of<walked_t<Views>>::supported && ...);
  static constexpr bool is_contiguous_range = false;
  using indices = std::index_sequence_for<Views...>;

  static auto columns(const input_list<Views...>& in) { return columns_of(in, indices{}); }
  // Every input has the shape of the first (checked by shape()).
  static std::size_t rows(const input_list<Views...>& in) { return shape(in).rows; }
  static std::size_t cols(const input_list<Views...>& in) { return shape(in).cols; }
  // Into owned padding only where every input walks as far.
  static std::size_t walk_cols(const input_list<Views...>& in) { return walk_cols_of(in, indices{}); }

 private:
  struct extent {
    std::size_t rows, cols;
  };
  template <std::size_t I>
  static auto walked(const input_list<Views...>& in) {
    return as_walkable(slot<I>(in.views));
  }
  template <std::size_t... I>
  static auto columns_of(const input_list<Views...>& in, std::index_sequence<I...>) {
    using zip = zip_columns<decltype(walk_of<walked_t<Views>>::columns(walked<I>(in)))...>;
    return zip{make_pack(walk_of<walked_t<Views>>::columns(walked<I>(in))...)};
  }
  // Throws std::invalid_argument naming every input's shape when they differ.
  static extent shape(const input_list<Views...>& in) { return shape_of(in, indices{}); }
  template <std::size_t... I>
  static extent shape_of(const input_list<Views...>& in, std::index_sequence<I...>) {
    const extent shapes[] = {
        extent{walk_of<walked_t<Views>>::rows(walked<I>(in)), walk_of<walked_t<Views>>::cols(walked<I>(in))}...};
    bool same = true;
    for (const extent& e : shapes) same = same && e.rows == shapes[0].rows && e.cols == shapes[0].cols;
    if (!same) {
      std::string text;
      for (const extent& e : shapes)
        text += (text.empty() ? "" : ", ") + std::to_string(e.rows) + " x " + std::to_string(e.cols);
      throw std::invalid_argument("coalesce::inputs: the inputs must have one shape; they are " + text + " elements");
    }
    return shapes[0];
  }
  template <std::size_t... I>
  static std::size_t walk_cols_of(const input_list<Views...>& in, std::index_sequence<I...>) {
    const std::size_t walks[] = {walk_of<walked_t<Views>>::walk_cols(walked<I>(in))...};
    for (const std::size_t w : walks)
      if (w != walks[0]) return shape(in).cols;
    return walks[0];
  }
};

// The memory space of a list: the device's when every input's is (the algorithms' checks refuse
// the rest, naming the list).
template <class View>
constexpr bool in_device_space() {
  if constexpr (view_space<View>::known) {
    return std::is_same_v<typename view_space<View>::type, device_space>;
  } else {
    return false;
  }
}
template <class... Views>
struct view_space<input_list<Views...>> {
  static constexpr bool known = (view_space<walked_t<Views>>::known && ...);
  using type = std::conditional_t<(in_device_space<walked_t<Views>>() && ...), device_space, host_space>;
};

// inputs() already made every view read-only.
template <class... Views>
const input_list<Views...>& as_const_view(const input_list<Views...>& in) {
  return in;
}

}  // namespace coalesce::detail
