// coalesce::testing: the benchmark report. One row per measured kernel - its group ("particle
// update"), its name ("coalesce::for_each"), its role (coalesce's own code, a competitor doing the
// same work, or context), median time, bandwidth as a share of cudaMemcpy and of the DRAM peak,
// counters when measured, and for coalesce's rows a target - written as a terminal table, CSV,
// JSON, a Markdown table of the targets and one SVG bar chart per group. Targets are code: a row
// must reach a share of the best competitor in the same run and a floor of the DRAM peak, and
// misses() lists every row that did not. Host code, any compiler.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/testing/bandwidth.hpp>
#include <coalesce/testing/detail/report_text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace coalesce::testing {

/// What a row is to its group. Competitors do the same work on the same data as coalesce's rows
/// and decide its target; context rows (another layout, a different amount of work) are shown,
/// never compared against.
enum class row_role { library, competitor, context };

/// "coalesce", "competitor" or "context": the role as the table, CSV and JSON write it.
inline const char* to_string(row_role role) noexcept {
  switch (role) {
    case row_role::library: return "coalesce";
    case row_role::competitor: return "competitor";
    default: return "context";
  }
}

/// What a coalesce row must reach in the run it was measured in.
struct row_target {
  double min_ratio_to_best_competitor = 0.0;  ///< bandwidth over the best competitor's, e.g. 0.98
  double min_fraction_of_dram_peak = 0.0;     ///< an absolute floor, e.g. 0.80
  /// And over one named competitor of the group (the first whose name starts with this), e.g.
  /// at least 1.2 x "thrust::remove_if": a claim against a known baseline that is not the best.
  std::string named_competitor = {};
  double min_ratio_to_named_competitor = 0.0;  ///< bandwidth over that competitor's; 0: no such target
};

/// One measured kernel. Measured fields are NaN when they were not measured.
struct report_row {
  std::string group;                     ///< the work done, e.g. "particle update": its rows are compared
  std::string name;                      ///< who did it, e.g. "coalesce::for_each"
  row_role role = row_role::competitor;  ///< what the row is to its group
  double median_ms = 0.0;                ///< the median time of the timed launches, in milliseconds
  double gigabytes_per_s = 0.0;          ///< bytes read + written per second, 1 GB = 1e9 B
  double ratio_to_memcpy = 0.0;          ///< gigabytes_per_s over the reference copy's
  double fraction_of_dram_peak = std::numeric_limits<double>::quiet_NaN();      ///< over the DRAM peak
  double load_sectors_per_request = std::numeric_limits<double>::quiet_NaN();   ///< counters: 4 = coalesced 4 B
  double store_sectors_per_request = std::numeric_limits<double>::quiet_NaN();  ///< counters: 4 = coalesced 4 B
  double dram_bytes = std::numeric_limits<double>::quiet_NaN();  ///< counters: DRAM bytes read + written
  std::optional<row_target> target;  ///< what a coalesce row must reach; none for other rows
  std::string note;  ///< why a number is what it is (a read-heavy mix above 100% of a copy)
};

/// A row from a bandwidth measurement; counters can be filled in afterwards.
inline report_row make_report_row(std::string group, std::string name, row_role role, const bandwidth_result& r) {
  report_row row;
  row.group = std::move(group);
  row.name = std::move(name);
  row.role = role;
  row.median_ms = r.median_ms;
  row.gigabytes_per_s = r.gigabytes_per_s;
  row.ratio_to_memcpy = r.ratio_to_memcpy;
  row.fraction_of_dram_peak = r.fraction_of_dram_peak;
  return row;
}

/// The rows of one benchmark run, the reference copy and the DRAM peak they were measured
/// against, and the run's outputs: table(), csv(), json(), targets_markdown(), svg(group), or all of
/// them as files (write). Rows keep the order they were added in.
class report {
 public:
  /// `title` names the run (device, date); `reference` is the copy every row's share of cudaMemcpy
  /// was measured against and `peak` the device's DRAM peak (bandwidth_meter::reference(), peak()).
  report(std::string title, reference_copy reference, dram_peak peak)
      : title_(std::move(title)), reference_(reference), peak_(peak) {}

  void add(report_row row) { rows_.push_back(std::move(row)); }  ///< appends a row, after the others

  const std::string& title() const noexcept { return title_; }                          ///< the run's name
  double memcpy_gigabytes_per_s() const noexcept { return reference_.gigabytes_per_s; }  ///< the reference, GB/s
  const reference_copy& reference() const noexcept { return reference_; }  ///< the copy rows are shares of
  const dram_peak& peak() const noexcept { return peak_; }                  ///< the device's DRAM peak
  const std::vector<report_row>& rows() const noexcept { return rows_; }    ///< in the order added

  /// Group names in order of first appearance.
  std::vector<std::string> groups() const {
    std::vector<std::string> names;
    for (const auto& r : rows_)
      if (std::find(names.begin(), names.end(), r.group) == names.end()) names.push_back(r.group);
    return names;
  }

  /// The highest bandwidth in `group`, as a share of cudaMemcpy; throws std::out_of_range for an
  /// unknown group.
  double best_ratio(const std::string& group) const {
    double best = -1.0;
    for (const auto& r : rows_)
      if (r.group == group) best = std::max(best, r.ratio_to_memcpy);
    if (best < 0.0) throw std::out_of_range("coalesce::testing::report: no group named \"" + group + "\"");
    return best;
  }
  /// A row's bandwidth over the best of its group: 1 for the best.
  double ratio_to_best(const report_row& row) const {
    const double best = best_ratio(row.group);
    return best > 0.0 ? row.ratio_to_memcpy / best : 0.0;
  }

  /// The fastest competitor of `group`, or nullptr when it has none.
  const report_row* best_competitor(const std::string& group) const {
    const report_row* best = nullptr;
    for (const auto& r : rows_)
      if (r.group == group && r.role == row_role::competitor &&
          (best == nullptr || r.gigabytes_per_s > best->gigabytes_per_s))
        best = &r;
    return best;
  }
  /// A row's bandwidth over its group's best competitor's (the rows of a group count the same
  /// bytes, so this is the inverse ratio of their times); NaN when the group has no competitor.
  double ratio_to_best_competitor(const report_row& row) const {
    const report_row* best = best_competitor(row.group);
    return best != nullptr && best->gigabytes_per_s > 0.0 ? row.gigabytes_per_s / best->gigabytes_per_s
                                                          : std::numeric_limits<double>::quiet_NaN();
  }

  /// The first competitor of `group` whose name starts with `prefix`, or nullptr.
  const report_row* named_competitor(const std::string& group, const std::string& prefix) const {
    for (const auto& r : rows_)
      if (r.group == group && r.role == row_role::competitor && r.name.compare(0, prefix.size(), prefix) == 0)
        return &r;
    return nullptr;
  }

  /// Why `row` misses its target, or "" when it has none or meets it. A target against the best
  /// competitor in a group without competitors is missed: there is nothing to stand on; so is one
  /// against a named competitor the group does not have.
  std::string miss(const report_row& row) const {
    if (!row.target) return "";
    std::string why;
    if (row.target->min_ratio_to_named_competitor > 0.0) {
      const report_row* named = named_competitor(row.group, row.target->named_competitor);
      const double vs_named = named != nullptr && named->gigabytes_per_s > 0.0
                                  ? row.gigabytes_per_s / named->gigabytes_per_s
                                  : std::numeric_limits<double>::quiet_NaN();
      if (!(vs_named >= row.target->min_ratio_to_named_competitor))
        why += "ratio to " + row.target->named_competitor + " " + detail::csv_number(vs_named, "%.3f") + " < " +
               detail::format_number("%.3f", row.target->min_ratio_to_named_competitor);
    }
    const double vs = ratio_to_best_competitor(row);
    if (row.target->min_ratio_to_best_competitor > 0.0 && !(vs >= row.target->min_ratio_to_best_competitor))
      why += std::string(why.empty() ? "" : "; ") + "ratio to the best competitor " + detail::csv_number(vs, "%.3f") +
             " < " + detail::format_number("%.3f", row.target->min_ratio_to_best_competitor);
    if (row.target->min_fraction_of_dram_peak > 0.0 &&
        !(row.fraction_of_dram_peak >= row.target->min_fraction_of_dram_peak))
      why += std::string(why.empty() ? "" : "; ") + detail::percent(row.fraction_of_dram_peak) + " of DRAM peak < " +
             detail::percent(row.target->min_fraction_of_dram_peak);
    return why;
  }
  bool meets_target(const report_row& row) const { return miss(row).empty(); }  ///< whether miss(row) is ""

  /// One line per row that misses its target: "group: name: why".
  std::vector<std::string> misses() const {
    std::vector<std::string> out;
    for (const auto& r : rows_)
      if (const auto why = miss(r); !why.empty()) out.push_back(r.group + ": " + r.name + ": " + why);
    return out;
  }

  /// Fixed-width table for a terminal, one block per group.
  std::string table() const {
    std::string out = title_ + "\n" + reference_line() + "\n";
    char line[640];
    for (const auto& group : groups()) {
      out += "\n" + group + "\n";
      std::snprintf(line, sizeof line, "  %-50s %-10s %9s %8s %8s %7s %8s %8s %9s %7s %8s  %s\n", "kernel", "role",
                    "median ms", "GB/s", "% memcpy", "% peak", "ld s/req", "st s/req", "DRAM MB", "vs best", "vs comp.",
                    "target");
      out += line;
      for (const auto& r : rows_) {
        if (r.group != group) continue;
        std::snprintf(line, sizeof line, "  %-50s %-10s %9.4f %8.1f %8s %7s %8s %8s %9s %7s %8s  %s\n", r.name.c_str(),
                      to_string(r.role), r.median_ms, r.gigabytes_per_s, detail::percent(r.ratio_to_memcpy).c_str(),
                      detail::percent(r.fraction_of_dram_peak).c_str(),
                      detail::csv_number(r.load_sectors_per_request, "%.2f").c_str(),
                      detail::csv_number(r.store_sectors_per_request, "%.2f").c_str(),
                      detail::csv_number(r.dram_bytes / 1e6, "%.1f").c_str(), detail::percent(ratio_to_best(r)).c_str(),
                      detail::csv_number(ratio_to_best_competitor(r), "%.3f").c_str(), target_text(r).c_str());
        out += line;
      }
      for (const auto& r : rows_)
        if (r.group == group && !r.note.empty()) out += "  note, " + r.name + ": " + r.note + "\n";
    }
    return out;
  }

  /// One header line, then one line per row; unmeasured values are empty fields.
  std::string csv() const {
    std::string out =
        "group,name,role,median_ms,gigabytes_per_s,ratio_to_memcpy,fraction_of_dram_peak,load_sectors_per_request,"
        "store_sectors_per_request,dram_bytes,ratio_to_best,ratio_to_best_competitor,target_min_ratio_to_best_competitor,"
        "target_min_fraction_of_dram_peak,target_met,note\n";
    for (const auto& r : rows_) {
      out += detail::csv_field(r.group) + "," + detail::csv_field(r.name) + "," + to_string(r.role) + "," +
             detail::csv_number(r.median_ms) + "," + detail::csv_number(r.gigabytes_per_s) + "," +
             detail::csv_number(r.ratio_to_memcpy) + "," + detail::csv_number(r.fraction_of_dram_peak) + "," +
             detail::csv_number(r.load_sectors_per_request) + "," + detail::csv_number(r.store_sectors_per_request) +
             "," + detail::csv_number(r.dram_bytes) + "," + detail::csv_number(ratio_to_best(r)) + "," +
             detail::csv_number(ratio_to_best_competitor(r)) + "," +
             (r.target
                  ? detail::csv_number(r.target->min_ratio_to_best_competitor) + "," +
                        detail::csv_number(r.target->min_fraction_of_dram_peak) + "," + (meets_target(r) ? "yes" : "no")
                  : std::string(",,")) +
             "," + detail::csv_field(r.note) + "\n";
    }
    return out;
  }

  /// {"title": ..., "reference": {...}, "dram_peak": {...}, "rows": [{...}, ...]}; unmeasured
  /// values are null.
  std::string json() const {
    std::string out = "{\n  \"title\": " + detail::json_string(title_) +
                      ",\n  \"memcpy_gigabytes_per_s\": " + detail::json_number(reference_.gigabytes_per_s) +
                      ",\n  \"reference\": {\"copy_bytes\": " + detail::json_number(double(reference_.copy_bytes)) +
                      ", \"copies_per_sample\": " + std::to_string(reference_.copies_per_sample) +
                      ", \"samples\": " + std::to_string(reference_.samples) + "}" +
                      ",\n  \"dram_peak\": {\"gigabytes_per_s\": " + detail::json_number(peak_.gigabytes_per_s()) +
                      ", \"memory_clock_khz\": " + detail::json_number(peak_.memory_clock_khz) +
                      ", \"bus_width_bits\": " + std::to_string(peak_.bus_width_bits) + "}" + ",\n  \"rows\": [";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      out += i == 0 ? "\n" : ",\n";
      out +=
          "    {\"group\": " + detail::json_string(r.group) + ", \"name\": " + detail::json_string(r.name) +
          ", \"role\": " + detail::json_string(to_string(r.role)) +
          ", \"median_ms\": " + detail::json_number(r.median_ms) +
          ", \"gigabytes_per_s\": " + detail::json_number(r.gigabytes_per_s) +
          ", \"ratio_to_memcpy\": " + detail::json_number(r.ratio_to_memcpy) +
          ", \"fraction_of_dram_peak\": " + detail::json_number(r.fraction_of_dram_peak) +
          ", \"load_sectors_per_request\": " + detail::json_number(r.load_sectors_per_request) +
          ", \"store_sectors_per_request\": " + detail::json_number(r.store_sectors_per_request) +
          ", \"dram_bytes\": " + detail::json_number(r.dram_bytes) +
          ", \"ratio_to_best\": " + detail::json_number(ratio_to_best(r)) +
          ", \"ratio_to_best_competitor\": " + detail::json_number(ratio_to_best_competitor(r)) + ", \"target\": " +
          (r.target
               ? "{\"min_ratio_to_best_competitor\": " + detail::json_number(r.target->min_ratio_to_best_competitor) +
                     ", \"min_fraction_of_dram_peak\": " + detail::json_number(r.target->min_fraction_of_dram_peak) +
                     ", \"met\": " + (meets_target(r) ? "true" : "false") + "}"
               : std::string("null")) +
          ", \"note\": " + detail::json_string(r.note) + "}";
    }
    return out + "\n  ]\n}\n";
  }

  /// The rows with targets as a Markdown table: each against its group's best competitor.
  std::string targets_markdown() const {
    std::string out = "| work | coalesce | % of cudaMemcpy | % of DRAM peak | best competitor | its % of cudaMemcpy | "
                      "coalesce / best competitor | target | met |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : rows_) {
      if (!r.target) continue;
      const report_row* best = best_competitor(r.group);
      out += "| " + detail::markdown_cell(r.group) + " | `" + detail::markdown_cell(r.name) + "` | " +
             detail::percent(r.ratio_to_memcpy) + " | " + detail::percent(r.fraction_of_dram_peak) + " | " +
             (best ? detail::markdown_cell(best->name) : std::string("-")) + " | " +
             (best ? detail::percent(best->ratio_to_memcpy) : std::string("-")) + " | " +
             detail::csv_number(ratio_to_best_competitor(r), "%.3f") + " | " + target_text(r, false) + " | " +
             (meets_target(r) ? "yes" : "**no**") + " |\n";
    }
    return out;
  }

  /// A horizontal bar chart of one group: each row's share of cudaMemcpy, with the 100% line and
  /// the DRAM peak's line; coalesce's rows, competitors and context in three colours.
  std::string svg(const std::string& group) const {
    const double peak_ratio =
        reference_.gigabytes_per_s > 0.0 ? peak_.gigabytes_per_s() / reference_.gigabytes_per_s : 0.0;
    const double scale_max = std::max({1.0, best_ratio(group), peak_ratio});  // throws for an unknown group
    const double label_width = 330, bar_width = 420, row_height = 26, top = 74;
    std::vector<const report_row*> members;
    for (const auto& r : rows_)
      if (r.group == group) members.push_back(&r);
    const double width = label_width + bar_width + 190, height = top + row_height * double(members.size()) + 34;
    auto x_at = [&](double ratio) { return label_width + bar_width * std::max(0.0, ratio) / scale_max; };
    auto num = [](const char* f, double v) { return detail::format_number(f, v); };
    std::string s = num("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" ", width) +
                    num("height=\"%.0f\" font-family=\"DejaVu Sans, Helvetica, sans-serif\">\n", height);
    s += num("<rect x=\"0\" y=\"0\" width=\"%.0f\" ", width) + num("height=\"%.0f\" fill=\"white\"/>\n", height);
    s += "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">" + detail::xml_escape(group) + "</text>\n";
    s += "<text x=\"12\" y=\"42\" font-size=\"11\">" + detail::xml_escape(title_) +
         " - bandwidth as a share of cudaMemcpy device-to-device (and of the DRAM peak)</text>\n";
    const char* colours[] = {"#2b7a3d", "#4a78b5", "#9aa5b1"};
    const char* legend[] = {"coalesce", "competitor", "context"};
    for (int i = 0; i < 3; ++i) {
      s +=
          num("<rect x=\"%.0f\" y=\"50\" width=\"10\" height=\"10\" fill=\"", 12.0 + 110.0 * i) + colours[i] + "\"/>\n";
      s += num("<text x=\"%.0f\" y=\"59\" font-size=\"11\">", 26.0 + 110.0 * i) + legend[i] + "</text>\n";
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& r = *members[i];
      const double y = top + row_height * double(i);
      s += num("<text x=\"%.0f\" ", label_width - 8) + num("y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">", y + 17) +
           detail::xml_escape(r.name) + "</text>\n";
      s += num("<rect class=\"bar\" x=\"%.0f\" ", label_width) + num("y=\"%.1f\" ", y + 4) +
           num("width=\"%.1f\" height=\"18\" fill=\"", x_at(r.ratio_to_memcpy) - label_width) +
           colours[static_cast<int>(r.role)] + "\"/>\n";
      s += num("<text x=\"%.1f\" ", x_at(r.ratio_to_memcpy) + 6) + num("y=\"%.1f\" font-size=\"12\">", y + 17) +
           detail::percent(r.ratio_to_memcpy) + " (" + detail::percent(r.fraction_of_dram_peak) + " of peak)</text>\n";
    }
    auto vertical = [&](const char* cls, double ratio, const char* colour, const std::string& label, double label_y) {
      s += std::string("<line class=\"") + cls + "\"" + num(" x1=\"%.1f\"", x_at(ratio)) +
           num(" y1=\"%.0f\"", top - 4) + num(" x2=\"%.1f\"", x_at(ratio)) + num(" y2=\"%.0f\"", height - 24) +
           " stroke=\"" + colour + "\" stroke-dasharray=\"4 3\"/>\n";
      s += num("<text x=\"%.1f\" ", x_at(ratio)) +
           num("y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\" fill=\"", label_y) + colour + "\">" + label +
           "</text>\n";
    };
    vertical("memcpy", 1.0, "#c0392b", "cudaMemcpy = 100%", height - 12);
    if (peak_ratio > 0.0)
      vertical("peak", peak_ratio, "#7d3c98", "DRAM peak = " + detail::percent(peak_ratio), height - 2);
    return s + "</svg>\n";
  }

  /// Writes `<directory>/<stem>.txt` (the table), .csv, .json, `<stem>-targets.md` and `<stem>-<n>.svg`
  /// for the n-th group (0-based); returns the paths written. Throws std::runtime_error naming a
  /// file that cannot be written.
  std::vector<std::string> write(const std::string& directory, const std::string& stem) const {
    std::vector<std::string> written;
    auto put = [&](const std::string& name, const std::string& body) {
      const std::string path = directory + "/" + name;
      std::ofstream file(path, std::ios::binary);
      file << body;
      if (!file) throw std::runtime_error("coalesce::testing::report: cannot write " + path);
      written.push_back(path);
    };
    put(stem + ".txt", table());
    put(stem + ".csv", csv());
    put(stem + ".json", json());
    put(stem + "-targets.md", targets_markdown());
    const auto names = groups();
    for (std::size_t i = 0; i < names.size(); ++i) put(stem + "-" + std::to_string(i) + ".svg", svg(names[i]));
    return written;
  }

 private:
  std::string reference_line() const {
    return "cudaMemcpy device-to-device: " + detail::format_number("%.1f", reference_.gigabytes_per_s) +
           " GB/s (= 100%; best of " + std::to_string(reference_.samples) + " samples of " +
           std::to_string(reference_.copies_per_sample) + " back-to-back copies of " +
           detail::format_number("%.0f", double(reference_.copy_bytes) / double(1 << 20)) +
           " MiB)\nDRAM peak: " + detail::format_number("%.1f", peak_.gigabytes_per_s()) + " GB/s (2 x " +
           detail::format_number("%.0f", peak_.memory_clock_khz / 1e3) + " MHz x " +
           std::to_string(peak_.bus_width_bits) + "-bit bus) = " +
           detail::percent(reference_.gigabytes_per_s > 0 ? peak_.gigabytes_per_s() / reference_.gigabytes_per_s
                                                          : 0.0) +
           " of cudaMemcpy";
  }

  // ">= 0.98 x best competitor, >= 80% of peak: met" (or MISSED), "" without a target.
  std::string target_text(const report_row& r, bool with_verdict = true) const {
    if (!r.target) return "";
    std::string t;
    if (r.target->min_ratio_to_best_competitor > 0.0)
      t += ">= " + detail::format_number("%.2f", r.target->min_ratio_to_best_competitor) + " x best competitor";
    if (r.target->min_fraction_of_dram_peak > 0.0)
      t += std::string(t.empty() ? "" : ", ") + ">= " + detail::percent(r.target->min_fraction_of_dram_peak) +
           " of peak";
    if (r.target->min_ratio_to_named_competitor > 0.0)
      t += std::string(t.empty() ? "" : ", ") +
           ">= " + detail::format_number("%.2f", r.target->min_ratio_to_named_competitor) + " x " +
           r.target->named_competitor;
    if (with_verdict) t += meets_target(r) ? ": met" : ": MISSED";
    return t;
  }

  std::string title_;
  reference_copy reference_;
  dram_peak peak_;
  std::vector<report_row> rows_;
};

}  // namespace coalesce::testing
