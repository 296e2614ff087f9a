// coalesce::testing::detail: how <coalesce/testing/report.hpp> writes its values: numbers through
// printf formats, percentages, and strings escaped for CSV, JSON, SVG (XML) and Markdown tables.
// Users never include this header.
#pragma once

#include <coalesce/config.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace coalesce::testing::detail {

inline std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

inline std::string percent(double fraction) {
  return std::isnan(fraction) ? std::string("-") : format_number("%.1f%%", 100.0 * fraction);
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
inline std::string csv_number(double v, const char* format = "%.6g") {
  return std::isnan(v) ? "" : format_number(format, v);
}

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

// A Markdown table cell: pipes would end the cell.
inline std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace coalesce::testing::detail
