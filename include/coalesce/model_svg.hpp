// coalesce::model pictures: SVG drawings of one warp's access - its 32 threads against the
// 32-byte sectors and 128-byte lines they touch, or against the 32 shared-memory banks - with the
// model's cost written on the picture, and the memory map of a container's layout (columns,
// tiles, records and their padding). Host-only; pictures teach faster than tables.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/detail/layout_map.hpp>
#include <coalesce/layout.hpp>
#include <coalesce/model.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace coalesce::model {

namespace detail {

inline std::string fmt(const char* format, double a = 0, double b = 0, double c = 0, double d = 0) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, a, b, c, d);
  return buffer;
}

// Text as SVG's XML takes it: a title may name layout::aosoa<32>.
inline std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

inline std::string svg_open(double width, double height, const std::string& title) {
  std::string s = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" ", width, height);
  s += fmt("viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, sans-serif\">\n", width, height);
  s += fmt("<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
  s += "<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">" + escaped(title) + "</text>\n";
  return s;
}

inline std::string text(double x, double y, const std::string& body, int size = 11, const char* anchor = "start") {
  return fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" ", x, y, size) + "text-anchor=\"" + anchor + "\">" + body +
         "</text>\n";
}

inline std::string rect(double x, double y, double w, double h, const char* fill, const char* stroke = "#555") {
  return fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ", x, y, w, h) + "fill=\"" + fill +
         "\" stroke=\"" + stroke + "\" stroke-width=\"0.7\"/>\n";
}

inline std::string line(double x1, double y1, double x2, double y2, const char* color) {
  return fmt("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" ", x1, y1, x2, y2) + "stroke=\"" + color +
         "\" stroke-width=\"0.8\" opacity=\"0.7\"/>\n";
}

}  // namespace detail

/// One warp's global access: lane i touches elem_bytes at byte_addresses[i] (N <= 32).
/// Draws the threads on top and every 128-byte line the warp touches below, its 4 sectors shaded
/// when moved, the requested bytes in darker colour, and the cost from global_access().
template <std::size_t N>
std::string global_access_svg(const std::array<std::uint64_t, N>& byte_addresses, unsigned elem_bytes,
                              const std::string& title) {
  static_assert(N <= warp_size, "coalesce::model::global_access_svg: one warp has at most 32 threads");
  const global_cost cost = global_access(byte_addresses, elem_bytes);
  std::set<std::uint64_t> lines;
  for (auto a : byte_addresses) lines.insert(a / line_bytes);
  const double lane_w = 26, left = 16, top = 50, line_w = 4 * 48.0, line_gap = 12;
  const std::size_t per_row = 4;
  const std::size_t rows = (lines.size() + per_row - 1) / per_row;
  const double width = std::max(left * 2 + 32 * lane_w, left * 2 + per_row * (line_w + line_gap));
  const double mem_top = top + 110, row_h = 70;
  const double height = mem_top + rows * row_h + 60;
  std::string s = detail::svg_open(width, height, title);
  // Sectors and lines.
  std::vector<std::uint64_t> line_list(lines.begin(), lines.end());
  auto line_pos = [&](std::uint64_t line_index, double& x, double& y) {
    const std::size_t k =
        static_cast<std::size_t>(std::find(line_list.begin(), line_list.end(), line_index) - line_list.begin());
    x = left + (k % per_row) * (line_w + line_gap);
    y = mem_top + (k / per_row) * row_h;
  };
  std::set<std::uint64_t> sectors, bytes;
  for (auto a : byte_addresses) {
    sectors.insert(a / sector_bytes);
    for (unsigned b = 0; b < elem_bytes; ++b) bytes.insert(a + b);
  }
  for (auto l : line_list) {
    double x = 0, y = 0;
    line_pos(l, x, y);
    for (unsigned sct = 0; sct < 4; ++sct) {
      const bool moved = sectors.count(l * 4 + sct) != 0;
      s += detail::rect(x + sct * 48, y, 48, 26, moved ? "#f6c35b" : "#eeeeee");
      for (unsigned b = 0; b < 32; ++b)
        if (bytes.count(l * line_bytes + sct * 32 + b))
          s += detail::rect(x + sct * 48 + b * 1.5, y + 2, 1.5, 22, "#c0392b", "none");
    }
    s += detail::text(x, y + 40, "line @" + std::to_string(l * line_bytes) + " B", 10);
  }
  // Threads, and an edge from each to its bytes.
  for (std::size_t t = 0; t < N; ++t) {
    const double x = left + t * lane_w;
    s += detail::rect(x, top, lane_w - 4, 22, "#5b8def");
    s += detail::text(x + (lane_w - 4) / 2, top + 15, std::to_string(t), 9, "middle");
    double lx = 0, ly = 0;
    line_pos(byte_addresses[t] / line_bytes, lx, ly);
    const double bx = lx + double(byte_addresses[t] % line_bytes) * 1.5;
    s += detail::line(x + (lane_w - 4) / 2, top + 22, bx, ly, "#34495e");
  }
  s += detail::text(left, height - 30,
                    std::to_string(cost.lines) + " lines, " + std::to_string(cost.sectors) + " sectors (" +
                        std::to_string(cost.moved_bytes) + " B moved for " + std::to_string(cost.useful_bytes) +
                        " B used)",
                    13);
  s += detail::text(left, height - 12,
                    detail::fmt("sector efficiency %.1f%%, line efficiency %.1f%%, DRAM estimate %.0f B",
                                100 * cost.efficiency(), 100 * cost.line_efficiency(), double(cost.dram_bytes)),
                    13);
  return s + "</svg>\n";
}

/// One warp's shared-memory access: the 32 banks as columns, each distinct 4-byte word a cell in
/// its bank's column (a column of k cells is a k-way conflict), and the cost from shared_access().
template <std::size_t N>
std::string shared_access_svg(const std::array<std::uint64_t, N>& byte_addresses, unsigned elem_bytes,
                              const std::string& title) {
  const shared_cost cost = shared_access(byte_addresses, elem_bytes);
  std::vector<std::set<std::uint64_t>> bank_words(bank_count);
  for (auto a : byte_addresses)
    for (unsigned b = 0; b < std::max(elem_bytes, 1u); b += bank_bytes)
      bank_words[((a + b) / bank_bytes) % bank_count].insert((a + b) / bank_bytes);
  std::size_t depth = 1;
  for (const auto& w : bank_words) depth = std::max(depth, w.size());
  const double cell = 26, left = 16, top = 50, bank_top = top + 110;
  const double width = left * 2 + 32 * cell;
  const double height = bank_top + 24 + depth * 16 + 60;
  std::string s = detail::svg_open(width, height, title);
  for (unsigned b = 0; b < bank_count; ++b) {
    const double x = left + b * cell;
    s += detail::rect(x, bank_top, cell - 4, 20, "#dddddd");
    s += detail::text(x + (cell - 4) / 2, bank_top + 14, std::to_string(b), 9, "middle");
    std::size_t k = 0;
    for (auto w : bank_words[b]) {
      s += detail::rect(x, bank_top + 24 + k * 16, cell - 4, 14, k == 0 ? "#f6c35b" : "#e74c3c");
      ++k;
      (void)w;
    }
  }
  for (std::size_t t = 0; t < N; ++t) {
    const double x = left + t * cell;
    s += detail::rect(x, top, cell - 4, 22, "#5b8def");
    s += detail::text(x + (cell - 4) / 2, top + 15, std::to_string(t), 9, "middle");
    const unsigned bank = unsigned((byte_addresses[t] / bank_bytes) % bank_count);
    s += detail::line(x + (cell - 4) / 2, top + 22, left + bank * cell + (cell - 4) / 2, bank_top, "#34495e");
  }
  s +=
      detail::text(left, height - 30, "threads (top) -> banks (bottom); each cell below a bank is a distinct word", 12);
  s += detail::text(left, height - 12,
                    std::to_string(cost.wavefronts) + " wavefront(s), worst conflict " +
                        std::to_string(cost.conflict_degree) + "-way",
                    13);
  return s + "</svg>\n";
}

namespace detail {

// One leaf of one element in a memory map: its bytes [offset, offset + bytes).
struct mapped_leaf {
  std::size_t offset, bytes, leaf, element;
};

// Where each leaf of elements [0, count) sits in T's Layout. Columns are drawn one after another,
// each from a new line (in a container each starts on a 256-byte boundary, far from the others).
template <class T, class Layout, std::size_t... L>
std::vector<mapped_leaf> map_leaves(std::size_t count, std::index_sequence<L...>) {
  using coalesce::detail::leaf_type_t;
  constexpr std::size_t sizes[] = {sizeof(leaf_type_t<T, L>)...};
  std::vector<mapped_leaf> leaves;
  if constexpr (std::is_same_v<Layout, layout::soa> || coalesce::detail::is_split<Layout>::value) {
    // Columns (a split's hot leaves'), then a split's cold records or tiles from a new line.
    constexpr auto columns = [] {
      std::array<bool, sizeof...(L)> hot{};
      for (std::size_t l = 0; l < sizeof...(L); ++l) {
        if constexpr (coalesce::detail::is_split<Layout>::value)
          hot[l] = coalesce::detail::layout_map<T, Layout>::table.hot[l];
        else hot[l] = true;
      }
      return hot;
    }();
    std::size_t column = 0;
    for (std::size_t l = 0; l < sizeof...(L); ++l) {
      if (!columns[l]) continue;
      for (std::size_t i = 0; i < count; ++i) leaves.push_back({column + i * sizes[l], sizes[l], l, i});
      column += (count * sizes[l] + line_bytes - 1) / line_bytes * line_bytes;
    }
    if constexpr (coalesce::detail::is_split<Layout>::value) {
      using map = coalesce::detail::layout_map<T, Layout>;
      for (std::size_t i = 0; i < count; ++i)
        ((columns[L] ? void()
                     : leaves.push_back({column + i / map::group * map::group_bytes + map::template cold_offset<L> +
                                             i % map::group * sizes[L],
                                         sizes[L], L, i})),
         ...);
    }
  } else {
    // Addresses in a block at 0 (a record's leaves where the compiler put them).
    std::vector<unsigned char> block(coalesce::detail::layout_map<T, Layout>::bytes(count) + alignof(T));
    unsigned char* base =
        block.data() + (alignof(T) - reinterpret_cast<std::uintptr_t>(block.data()) % alignof(T)) % alignof(T);
    for (std::size_t i = 0; i < count; ++i)
      (leaves.push_back({std::size_t(reinterpret_cast<unsigned char*>(
                                         coalesce::detail::layout_map<T, Layout>::template leaf_pointer<L>(base, i)) -
                                     base),
                         sizes[L], L, i}),
       ...);
  }
  return leaves;
}

// Where a split's drawing ends: its hot columns, each from a new line, then its whole cold groups.
template <class T, class Layout, std::size_t... L>
std::size_t split_end(std::size_t count, std::index_sequence<L...>) {
  using map = coalesce::detail::layout_map<T, Layout>;
  const std::size_t columns =
      ((map::table.hot[L]
            ? (count * sizeof(coalesce::detail::leaf_type_t<T, L>) + line_bytes - 1) / line_bytes * line_bytes
            : std::size_t(0)) +
       ... + std::size_t(0));
  return columns + (count + map::group - 1) / map::group * map::group_bytes;
}
template <class T, class Layout>
std::size_t split_end(std::size_t count) {
  return split_end<T, Layout>(count, std::make_index_sequence<coalesce::detail::leaf_count_v<T>>{});
}

}  // namespace detail

/// The memory map of `count` elements of T in Layout (layout::soa, aos, aosoa<Lanes> or split): the bytes
/// in rows of 128 (a line each), every leaf of every element a cell coloured by leaf and numbered
/// by element, and bytes no leaf uses (a record's padding, the ends of runs and tiles) grey. The
/// caption counts the bytes used and the padding. Columns start on new lines, as they are far
/// apart in memory.
template <class T, class Layout>
std::string layout_svg(std::size_t count, const std::string& title) {
  constexpr std::size_t leaf_count = coalesce::detail::leaf_count_v<T>;
  const auto leaves = detail::map_leaves<T, Layout>(count, std::make_index_sequence<leaf_count>{});
  std::size_t end = 0, used = 0;
  for (const auto& l : leaves) end = std::max(end, l.offset + l.bytes), used += l.bytes;
  if constexpr (coalesce::detail::is_split<Layout>::value) {
    end = detail::split_end<T, Layout>(count);
  } else if constexpr (!std::is_same_v<Layout, layout::soa>) {
    end = coalesce::detail::layout_map<T, Layout>::bytes(count);
  }
  const std::size_t rows = (end + line_bytes - 1) / line_bytes;
  const double byte_w = 5, row_h = 22, left = 56, top = 44;
  const double width = left + line_bytes * byte_w + 16, height = top + rows * (row_h + 4) + 40;
  static const char* colours[] = {"#5b8def", "#f6c35b", "#6cc17a", "#e67e73",
                                  "#a88be0", "#4fc1c9", "#d9a066", "#9aa9bd"};
  std::string s = detail::svg_open(width, height, title);
  std::vector<bool> covered(rows * line_bytes, false);
  for (std::size_t r = 0; r < rows; ++r)
    s += detail::text(left - 6, top + r * (row_h + 4) + 15, std::to_string(r * line_bytes), 9, "end");
  for (const auto& l : leaves) {
    const double x = left + double(l.offset % line_bytes) * byte_w,
                 y = top + double(l.offset / line_bytes) * (row_h + 4);
    s += detail::rect(x, y, double(l.bytes) * byte_w, row_h, colours[l.leaf % 8]);
    if (l.bytes * byte_w >= 14)
      s += detail::text(x + l.bytes * byte_w / 2, y + 15, std::to_string(l.element), 8, "middle");
    for (std::size_t b = 0; b < l.bytes; ++b) covered[l.offset + b] = true;
  }
  std::size_t padding = 0;
  for (std::size_t b = 0; b < end; ++b)
    if (!covered[b]) {
      ++padding;
      s += detail::rect(left + double(b % line_bytes) * byte_w, top + double(b / line_bytes) * (row_h + 4), byte_w,
                        row_h, "#cccccc", "#cccccc");
    }
  s += detail::text(left, height - 14,
                    std::to_string(count) + " elements: " + std::to_string(used) + " bytes of leaves, " +
                        std::to_string(padding) + " of padding, in rows of 128 (one line each)",
                    12);
  return s + "</svg>\n";
}

}  // namespace coalesce::model
