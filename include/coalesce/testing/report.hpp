// coalesce::testing: the benchmark report. One row per measured kernel - its group ("particle
// update"), its name ("coalesce::for_each"), median time, bandwidth, ratio to cudaMemcpy and,
// when measured, counters - written as a terminal table, CSV, JSON and one SVG bar chart per
// group, each row also set against the best row of its group. Host code, any compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/testing/bandwidth.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace coalesce::testing {

// One measured kernel. Counter fields are NaN when they were not measured.
struct report_row {
  std::string group;
  std::string name;
  double median_ms = 0.0;
  double gigabytes_per_s = 0.0;
  double ratio_to_memcpy = 0.0;
  double load_sectors_per_request = std::numeric_limits<double>::quiet_NaN();
  double store_sectors_per_request = std::numeric_limits<double>::quiet_NaN();
  double dram_bytes = std::numeric_limits<double>::quiet_NaN();
};

// A row from a bandwidth measurement; counters can be filled in afterwards.
inline report_row make_report_row(std::string group, std::string name, const bandwidth_result& r) {
  report_row row;
  row.group = std::move(group);
  row.name = std::move(name);
  row.median_ms = r.median_ms;
  row.gigabytes_per_s = r.gigabytes_per_s;
  row.ratio_to_memcpy = r.ratio_to_memcpy;
  return row;
}

namespace detail {

inline std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A JSON number, or null for NaN (JSON has no NaN).
inline std::string json_number(double v) { return std::isnan(v) ? "null" : format_number("%.6g", v); }
inline std::string csv_number(double v, const char* format = "%.6g") { return std::isnan(v) ? "" : format_number(format, v); }

inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace detail

class report {
 public:
  // `title` names the run (device, date); `memcpy_gigabytes_per_s` is the reference measured in
  // the same process (bandwidth_meter::memcpy_gigabytes_per_s()).
  report(std::string title, double memcpy_gigabytes_per_s)
      : title_(std::move(title)), memcpy_gbps_(memcpy_gigabytes_per_s) {}

  void add(report_row row) { rows_.push_back(std::move(row)); }

  const std::string& title() const noexcept { return title_; }
  double memcpy_gigabytes_per_s() const noexcept { return memcpy_gbps_; }
  const std::vector<report_row>& rows() const noexcept { return rows_; }

  // Group names in order of first appearance.
  std::vector<std::string> groups() const {
    std::vector<std::string> names;
    for (const auto& r : rows_)
      if (std::find(names.begin(), names.end(), r.group) == names.end()) names.push_back(r.group);
    return names;
  }

  // The highest ratio to cudaMemcpy in `group`; throws std::out_of_range for an unknown group.
  double best_ratio(const std::string& group) const {
    double best = -1.0;
    for (const auto& r : rows_)
      if (r.group == group) best = std::max(best, r.ratio_to_memcpy);
    if (best < 0.0) throw std::out_of_range("coalesce::testing::report: no group named \"" + group + "\"");
    return best;
  }
  // A row's bandwidth over the best of its group: 1 for the best.
  double ratio_to_best(const report_row& row) const {
    const double best = best_ratio(row.group);
    return best > 0.0 ? row.ratio_to_memcpy / best : 0.0;
  }

  // Fixed-width table for a terminal, one block per group.
  std::string table() const {
    std::string out = title_ + "\ncudaMemcpy device-to-device: " + detail::format_number("%.1f", memcpy_gbps_) +
                      " GB/s (= 100%)\n";
    char line[512];
    for (const auto& group : groups()) {
      out += "\n" + group + "\n";
      std::snprintf(line, sizeof line, "  %-36s %10s %9s %9s %8s %8s %12s %8s\n", "kernel", "median ms", "GB/s",
                    "% memcpy", "ld s/req", "st s/req", "DRAM MB", "vs best");
      out += line;
      for (const auto& r : rows_) {
        if (r.group != group) continue;
        std::snprintf(line, sizeof line, "  %-36s %10.4f %9.1f %8.1f%% %8s %8s %12s %7.1f%%\n", r.name.c_str(),
                      r.median_ms, r.gigabytes_per_s, 100.0 * r.ratio_to_memcpy,
                      detail::csv_number(r.load_sectors_per_request, "%.2f").c_str(),
                      detail::csv_number(r.store_sectors_per_request, "%.2f").c_str(),
                      detail::csv_number(r.dram_bytes / 1e6, "%.1f").c_str(), 100.0 * ratio_to_best(r));
        out += line;
      }
    }
    return out;
  }

  // One header line, then one line per row; unmeasured counters are empty fields.
  std::string csv() const {
    std::string out =
        "group,name,median_ms,gigabytes_per_s,ratio_to_memcpy,load_sectors_per_request,store_sectors_per_request,"
        "dram_bytes,ratio_to_best\n";
    for (const auto& r : rows_) {
      out += detail::csv_field(r.group) + "," + detail::csv_field(r.name) + "," + detail::csv_number(r.median_ms) + "," +
             detail::csv_number(r.gigabytes_per_s) + "," + detail::csv_number(r.ratio_to_memcpy) + "," +
             detail::csv_number(r.load_sectors_per_request) + "," + detail::csv_number(r.store_sectors_per_request) +
             "," + detail::csv_number(r.dram_bytes) + "," + detail::csv_number(ratio_to_best(r)) + "\n";
    }
    return out;
  }

  // {"title": ..., "memcpy_gigabytes_per_s": ..., "rows": [{...}, ...]}; unmeasured counters null.
  std::string json() const {
    std::string out = "{\n  \"title\": " + detail::json_string(title_) +
                      ",\n  \"memcpy_gigabytes_per_s\": " + detail::json_number(memcpy_gbps_) + ",\n  \"rows\": [";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      out += i == 0 ? "\n" : ",\n";
      out += "    {\"group\": " + detail::json_string(r.group) + ", \"name\": " + detail::json_string(r.name) +
             ", \"median_ms\": " + detail::json_number(r.median_ms) +
             ", \"gigabytes_per_s\": " + detail::json_number(r.gigabytes_per_s) +
             ", \"ratio_to_memcpy\": " + detail::json_number(r.ratio_to_memcpy) +
             ", \"load_sectors_per_request\": " + detail::json_number(r.load_sectors_per_request) +
             ", \"store_sectors_per_request\": " + detail::json_number(r.store_sectors_per_request) +
             ", \"dram_bytes\": " + detail::json_number(r.dram_bytes) +
             ", \"ratio_to_best\": " + detail::json_number(ratio_to_best(r)) + "}";
    }
    return out + "\n  ]\n}\n";
  }

  // A horizontal bar chart of one group: each row's share of cudaMemcpy, with the 100% line.
  std::string svg(const std::string& group) const {
    const double scale_max = std::max(1.0, best_ratio(group));  // throws for an unknown group
    const double label_width = 300, bar_width = 420, row_height = 26, top = 56;
    std::vector<const report_row*> members;
    for (const auto& r : rows_)
      if (r.group == group) members.push_back(&r);
    const double width = label_width + bar_width + 90, height = top + row_height * double(members.size()) + 30;
    std::string s = detail::format_number("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" ", width) +
                    detail::format_number("height=\"%.0f\" font-family=\"DejaVu Sans, Helvetica, sans-serif\">\n", height);
    s += detail::format_number("<rect x=\"0\" y=\"0\" width=\"%.0f\" ", width) +
         detail::format_number("height=\"%.0f\" fill=\"white\"/>\n", height);
    s += "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">" + detail::xml_escape(group) + "</text>\n";
    s += "<text x=\"12\" y=\"42\" font-size=\"11\">" + detail::xml_escape(title_) +
         " - bandwidth as a share of cudaMemcpy device-to-device</text>\n";
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& r = *members[i];
      const double y = top + row_height * double(i);
      const double w = bar_width * std::max(0.0, r.ratio_to_memcpy) / scale_max;
      const bool best = r.ratio_to_memcpy >= best_ratio(group);
      s += "<text x=\"" + detail::format_number("%.0f", label_width - 8) + "\" y=\"" +
           detail::format_number("%.1f", y + 17) + "\" font-size=\"12\" text-anchor=\"end\">" +
           detail::xml_escape(r.name) + "</text>\n";
      s += "<rect class=\"bar\" x=\"" + detail::format_number("%.0f", label_width) + "\" y=\"" +
           detail::format_number("%.1f", y + 4) + "\" width=\"" + detail::format_number("%.1f", w) +
           "\" height=\"18\" fill=\"" + (best ? "#2b7a3d" : "#4a78b5") + "\"/>\n";
      s += "<text x=\"" + detail::format_number("%.1f", label_width + w + 6) + "\" y=\"" +
           detail::format_number("%.1f", y + 17) + "\" font-size=\"12\">" +
           detail::format_number("%.1f%%", 100.0 * r.ratio_to_memcpy) + "</text>\n";
    }
    const double x100 = label_width + bar_width / scale_max;
    s += "<line class=\"memcpy\" x1=\"" + detail::format_number("%.1f", x100) + "\" y1=\"" +
         detail::format_number("%.0f", top - 4) + "\" x2=\"" + detail::format_number("%.1f", x100) + "\" y2=\"" +
         detail::format_number("%.0f", height - 20) + "\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n";
    s += "<text x=\"" + detail::format_number("%.1f", x100) + "\" y=\"" + detail::format_number("%.0f", height - 6) +
         "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#c0392b\">cudaMemcpy = 100%</text>\n";
    return s + "</svg>\n";
  }

  // Writes <directory>/<stem>.csv, <stem>.json and <stem>-<n>.svg for the n-th group (0-based);
  // returns the paths written. Throws std::runtime_error naming a file that cannot be written.
  std::vector<std::string> write(const std::string& directory, const std::string& stem) const {
    std::vector<std::string> written;
    auto put = [&](const std::string& name, const std::string& body) {
      const std::string path = directory + "/" + name;
      std::ofstream file(path, std::ios::binary);
      file << body;
      if (!file) throw std::runtime_error("coalesce::testing::report: cannot write " + path);
      written.push_back(path);
    };
    put(stem + ".csv", csv());
    put(stem + ".json", json());
    const auto names = groups();
    for (std::size_t i = 0; i < names.size(); ++i) put(stem + "-" + std::to_string(i) + ".svg", svg(names[i]));
    return written;
  }

 private:
  std::string title_;
  double memcpy_gbps_;
  std::vector<report_row> rows_;
};

}  // namespace coalesce::testing
