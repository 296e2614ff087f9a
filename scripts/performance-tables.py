#!/usr/bin/env python3
"""Writes the performance tables of README.md and docs/performance.md from the benchmark's result
files in docs/bench, so that no published figure is typed by hand.

    scripts/performance-tables.py            rewrite the generated sections in place
    scripts/performance-tables.py --check    change nothing; exit 1, naming each section, when a
                                             file's generated section is not what this writes

A generated section lies between two marker lines, which this script keeps and which the reader
never sees (HTML comments):

    <!-- performance-tables.py: begin NAME -->
    <!-- performance-tables.py: end NAME -->

The sections (NAME): README.md's `headline` (a handful of rows a newcomer cares about), and
docs/performance.md's `targets` (every row of the main run that carries a target), `babelstream`
(the BabelStream run's rows), `charts` (each group's chart). Every number comes from a run's
JSON (or CSV where the run wrote no JSON); the target's wording and whether it was met come from
the -targets.md the same run wrote, and where both files hold a figure this script checks that
they agree, so the tables cannot mix two runs. The device and CUDA version are read from the
run's title; runs of different devices or CUDA versions stop the script.

Python 3.6 or newer, standard library only.
"""
import csv
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The runs, by directory under docs/bench: (directory, stem).
MAIN_RUN = ("docs/bench", "coalesce-bench")
BABELSTREAM_RUN = ("docs/bench/babelstream-h200", "coalesce-bench")

# README.md's headline rows: (run, group, coalesce row's name). The rows a newcomer asks about
# first: an element-wise update of particles, BabelStream's Triad and Dot, a transpose, a stencil,
# a reduction, removal and sorting of particles.
HEADLINE = [
    (MAIN_RUN, "particle update in place (6 float columns, 3 written)", "coalesce::for_each(soa_view)"),
    (BABELSTREAM_RUN, "BabelStream double, 2^28: Triad, a = b + s c",
     "coalesce::for_each(soa_vector), as a user writes it first"),
    (BABELSTREAM_RUN, "BabelStream double, 2^28: Dot, sum a b", "coalesce::transform_reduce(inputs(a, b))"),
    (MAIN_RUN, "transpose ladder, 8192 x 8192 floats", "coalesce::transpose"),
    (MAIN_RUN, "5-point stencil, clamp, pitched 8192 x 8192 floats", "coalesce::stencil<1>(clamp, view, view)"),
    (MAIN_RUN, "kinetic energy of 256 M particles (3 float columns read, one double out)",
     "coalesce::transform_reduce(soa_view), result in device memory"),
    (MAIN_RUN, "removing 10% of 32 M particles (6 float columns, x < -0.8)", "coalesce::erase_if(soa_vector, pred)"),
    (MAIN_RUN, "sorting 32 M particles by a 32-bit cell key, random", "coalesce::sort_by_key(soa_vector, key)"),
]

# docs/performance.md's chart gallery: the groups shown as pictures, three a row, by caption.
GALLERY = [
    ("particle update", "particle update in place (6 float columns, 3 written)"),
    ("one column in place", "one float column in place"),
    ("8 mixed columns", "8 mixed columns (float, double, int, short), 3 written"),
    ("pitched rows", "row operation in place, pitched 200000 x 1000 floats"),
    ("array of structs", "array of structs in place (Particle*, 24 B), whole structs read and written"),
    ("transpose ladder", "transpose ladder, 8192 x 8192 floats"),
]

SECTION = re.compile(r"^<!-- performance-tables\.py: (begin|end) ([a-z-]+) -->$")


class Failure(Exception):
    pass


def number(text):
    return float("nan") if text in ("", None) else float(text)


def percent(fraction):
    return "-" if fraction != fraction else "%.1f%%" % (100.0 * fraction)


def ratio(value):
    return "-" if value != value else "%.3f" % value


def cell(text):
    return text.replace("|", "\\|")


class Run:
    """One coalesce_bench run: its title, reference copy, DRAM peak and rows."""

    def __init__(self, directory, stem):
        self.directory = directory
        base = os.path.join(ROOT, directory, stem)
        json_path = base + ".json"
        if os.path.exists(json_path):
            self.source = stem + ".json"
            with open(json_path) as f:
                data = json.load(f)
            self.title = data["title"]
            self.memcpy_gigabytes_per_s = float(data["memcpy_gigabytes_per_s"])
            self.peak_gigabytes_per_s = float(data["dram_peak"]["gigabytes_per_s"])
            self.rows = [dict(r, target_met=None if r["target"] is None else r["target"]["met"]) for r in data["rows"]]
        else:
            # A run that wrote no JSON: the CSV holds the rows, the table's first lines the rest.
            self.source = stem + ".csv"
            with open(base + ".csv", newline="") as f:
                self.rows = []
                for r in csv.DictReader(f):
                    row = {k: r[k] for k in ("group", "name", "role", "note")}
                    for k in ("median_ms", "gigabytes_per_s", "ratio_to_memcpy", "fraction_of_dram_peak",
                              "ratio_to_best_competitor"):
                        row[k] = number(r[k])
                    row["target_met"] = {"yes": True, "no": False}.get(r["target_met"])
                    self.rows.append(row)
            with open(base + ".txt") as f:
                lines = f.read().splitlines()
            self.title = lines[0]
            m = re.match(r"cudaMemcpy device-to-device: ([\d.]+) GB/s", lines[1])
            p = re.match(r"DRAM peak: ([\d.]+) GB/s", lines[2])
            if not (m and p):
                raise Failure("%s/%s.txt: its second and third lines do not name the copy and the peak" % (directory, stem))
            self.memcpy_gigabytes_per_s, self.peak_gigabytes_per_s = float(m.group(1)), float(p.group(1))
        for r in self.rows:
            for k in ("ratio_to_memcpy", "fraction_of_dram_peak", "gigabytes_per_s", "ratio_to_best_competitor"):
                if r.get(k) is None:
                    r[k] = float("nan")
        m = re.match(r"coalesce benchmark, (.+), (CUDA [\d.]+), (\d{4}-\d\d-\d\d)$", self.title)
        if not m:
            raise Failure("%s/%s: the title '%s' does not read 'coalesce benchmark, <device>, CUDA <x.y>, <date>'"
                          % (directory, self.source, self.title))
        self.device, self.cuda, self.date = m.groups()
        self.targets = self._read_targets(base + "-targets.md")
        self._check_against_targets()

    def _read_targets(self, path):
        """{(group, name): the -targets.md row's cells} of the rows the run gave a target."""
        targets = {}
        with open(path) as f:
            for line in f.read().splitlines()[2:]:
                cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
                if len(cells) != 9:
                    raise Failure("%s: '%s' is not a row of nine cells" % (path, line))
                group, name = cells[0], cells[1].strip("`")
                targets[(group, name)] = dict(zip(
                    ("group", "name", "memcpy", "peak", "best", "best_memcpy", "vs_best", "target", "met"), cells))
        return targets

    def best_competitor(self, group):
        best = None
        for r in self.rows:
            if r["group"] == group and r["role"] == "competitor" and (best is None or r["gigabytes_per_s"] > best["gigabytes_per_s"]):
                best = r
        return best

    def row(self, group, name):
        for r in self.rows:
            if r["group"] == group and r["name"] == name:
                return r
        raise Failure("%s/%s has no row '%s' in group '%s'" % (self.directory, self.source, name, group))

    def groups(self):
        names = []
        for r in self.rows:
            if r["group"] not in names:
                names.append(r["group"])
        return names

    def shown(self, row):
        """A row's figures as the run printed them: its -targets.md cells where it has a target
        (checked against the JSON or CSV above), else formatted from the JSON or CSV."""
        t = self.targets.get((row["group"], row["name"]))
        if t is not None:
            return t
        best = self.best_competitor(row["group"])
        return {"memcpy": percent(row["ratio_to_memcpy"]), "peak": percent(row["fraction_of_dram_peak"]),
                "best_memcpy": percent(best["ratio_to_memcpy"]) if best else "-",
                "vs_best": ratio(row["ratio_to_best_competitor"]), "target": "-", "met": "-"}

    def target_rows(self):
        return [r for r in self.rows if (r["group"], r["name"]) in self.targets]

    def _check_against_targets(self):
        """The -targets.md and the JSON / CSV are one run: every figure both hold agrees."""
        with_targets = [r for r in self.rows if r["target_met"] is not None]
        if len(with_targets) != len(self.targets):
            raise Failure("%s: %d rows carry a target in %s, %d in its -targets.md"
                          % (self.directory, len(with_targets), self.source, len(self.targets)))
        for r in with_targets:
            t = self.targets.get((r["group"], r["name"]))
            if t is None:
                raise Failure("%s: '%s' / '%s' has a target in %s but no row in its -targets.md"
                              % (self.directory, r["group"], r["name"], self.source))
            best = self.best_competitor(r["group"])
            if (best["name"] if best else "-") != t["best"] or ("yes" if r["target_met"] else "**no**") != t["met"]:
                raise Failure("%s: %s and -targets.md differ on '%s' / '%s': best competitor or met"
                              % (self.directory, self.source, r["group"], r["name"]))
            # The JSON and CSV hold 6 significant digits, the -targets.md the figures as measured:
            # they agree to the -targets.md's last digit, up to that rounding.
            for value, text, unit in ((r["ratio_to_memcpy"], t["memcpy"], 100.0),
                                      (r["fraction_of_dram_peak"], t["peak"], 100.0),
                                      (best["ratio_to_memcpy"] if best else float("nan"), t["best_memcpy"], 100.0),
                                      (r["ratio_to_best_competitor"], t["vs_best"], 1.0)):
                shown = float(text.rstrip("%")) if text != "-" else float("nan")
                step = 0.1 if unit == 100.0 else 0.001
                if not (abs(unit * value - shown) <= step / 2 + 1e-5 * abs(unit * value)):
                    raise Failure("%s: %s and -targets.md differ on '%s' / '%s': %r against %s"
                                  % (self.directory, self.source, r["group"], r["name"], value, text))

    def path(self, name=None):
        """A file of this run, from the repository's top: a link's text."""
        return self.directory + "/" + (name or self.source)

    def link(self, from_dir, name=None):
        """A relative link from a file in from_dir (relative to the repository) to a file of this run."""
        return os.path.relpath(self.path(name), from_dir).replace(os.sep, "/")


def measured_on(runs):
    devices = {(r.device, r.cuda) for r in runs}
    if len(devices) != 1:
        raise Failure("the tables would mix devices or CUDA versions: %s" % sorted(devices))
    device, cuda = devices.pop()
    return "Measured on an %s, %s" % (device, cuda)


def headline(runs, from_dir):
    used = []
    out = ["| work | coalesce | % of `cudaMemcpy` | % of DRAM peak | coalesce / best competitor | best competitor |",
           "|---|---|---|---|---|---|"]
    for run_key, group, name in HEADLINE:
        run = runs[run_key]
        if run not in used:
            used.append(run)
        r = run.row(group, name)
        best = run.best_competitor(group)
        t = run.shown(r)
        ratio_text = t["vs_best"] + ("" if r["target_met"] is not False else " (target missed)")
        out.append("| %s | `%s` | %s | %s | %s | %s |" % (
            cell(group), cell(name), t["memcpy"], t["peak"], ratio_text, cell(best["name"]) if best else "-"))
    sources = ["[%s](%s) (%s)" % (run.path(), run.link(from_dir), run.date) for run in used]
    out.append("")
    out.append("%s, each against the fastest competitor in the same run (hand-written kernels, "
               "CUB, Thrust), on buffers at least 4x the L2; from %s." % (
                   measured_on(used), " and ".join(sources)))
    return out


def targets_table(run, from_dir):
    out = ["| work | coalesce | % of cudaMemcpy | % of DRAM peak | best competitor | its % of cudaMemcpy | "
           "coalesce / best competitor | target | met |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in run.target_rows():
        t = run.shown(r)
        best = run.best_competitor(r["group"])
        out.append("| %s | `%s` | %s | %s | %s | %s | %s | %s | %s |" % (
            cell(r["group"]), cell(r["name"]), t["memcpy"], t["peak"], cell(best["name"]) if best else "-",
            t["best_memcpy"], t["vs_best"], cell(t["target"]), t["met"]))
    out.append("")
    out.append("%s, %s: `cudaMemcpy` device-to-device %.1f GB/s, DRAM peak %.1f GB/s. From [%s](%s) and "
               "[%s](%s)." % (
                   measured_on([run]), run.date, run.memcpy_gigabytes_per_s,
                   run.peak_gigabytes_per_s, run.path(), run.link(from_dir),
                   run.path("coalesce-bench-targets.md"), run.link(from_dir, "coalesce-bench-targets.md")))
    return out


def charts(run, from_dir):
    groups = run.groups()

    def chart(group):
        if group not in groups:
            raise Failure("%s/%s has no group '%s' to chart" % (run.directory, run.source, group))
        return run.link(from_dir, "coalesce-bench-%d.svg" % groups.index(group))

    out = []
    for start in range(0, len(GALLERY), 3):
        row = GALLERY[start:start + 3]
        captions = " | ".join(("**%s**" % c) if start else c for c, _ in row)
        out.append("| %s |" % captions)
        if start == 0:
            out.append("|" + "---|" * len(row))
        out.append("| %s |" % " | ".join("![%s](%s)" % (c, chart(g)) for c, g in row))
    out.append("")
    out.append("Every group of the run, as a chart (bandwidth as a share of `cudaMemcpy`, coalesce, its "
               "competitors and context rows in three colours):")
    out.append("")
    for group in groups:
        out.append("- [%s](%s)" % (group.replace("[", "\\[").replace("]", "\\]"), chart(group)))
    return out


def sections():
    """{file: {section: lines}}, everything this script writes."""
    runs = {MAIN_RUN: Run(*MAIN_RUN), BABELSTREAM_RUN: Run(*BABELSTREAM_RUN)}
    return {
        "README.md": {"headline": headline(runs, ".")},
        "docs/performance.md": {
            "targets": targets_table(runs[MAIN_RUN], "docs"),
            "babelstream": targets_table(runs[BABELSTREAM_RUN], "docs"),
            "charts": charts(runs[MAIN_RUN], "docs"),
        },
    }


def replace_sections(path, text, wanted):
    """text with each wanted section's lines replaced; raises Failure for a marker out of place."""
    lines = text.split("\n")
    out, open_name, seen = [], None, []
    for number_, line in enumerate(lines, 1):
        m = SECTION.match(line.strip())
        if not m:
            if open_name is None:
                out.append(line)
            continue
        kind, name = m.groups()
        if kind == "begin":
            if open_name is not None:
                raise Failure("%s:%d: section '%s' begins inside '%s'" % (path, number_, name, open_name))
            if name not in wanted:
                raise Failure("%s:%d: this script writes no section '%s' here (it writes %s)"
                              % (path, number_, name, ", ".join(sorted(wanted))))
            if name in seen:
                raise Failure("%s:%d: section '%s' appears twice" % (path, number_, name))
            out.append(line)
            out.extend(wanted[name])
            open_name = name
        else:
            if name != open_name:
                raise Failure("%s:%d: 'end %s' closes no open section" % (path, number_, name))
            out.append(line)
            seen.append(name)
            open_name = None
    if open_name is not None:
        raise Failure("%s: section '%s' never ends" % (path, open_name))
    missing = [n for n in wanted if n not in seen]
    if missing:
        raise Failure("%s has no marker lines for section(s) %s: add <!-- performance-tables.py: begin %s --> "
                      "and its end where the table belongs" % (path, ", ".join(missing), missing[0]))
    return "\n".join(out)


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        stale = []
        for path, wanted in sections().items():
            with open(os.path.join(ROOT, path)) as f:
                text = f.read()
            new = replace_sections(path, text, wanted)
            if new == text:
                continue
            if check:
                old_lines, new_lines = text.split("\n"), new.split("\n")
                first = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b),
                             min(len(old_lines), len(new_lines)))
                stale.append("%s:%d: a generated section differs from what scripts/performance-tables.py writes"
                             % (path, first + 1))
            else:
                with open(os.path.join(ROOT, path), "w") as f:
                    f.write(new)
                print("wrote %s" % path)
        if stale:
            print("\n".join(stale))
            print("Run scripts/performance-tables.py to regenerate them from docs/bench; do not edit them by hand.")
            return 1
        if check:
            print("README.md and docs/performance.md: every generated section is what docs/bench's files give")
        return 0
    except (Failure, OSError, KeyError, ValueError) as e:
        print("performance-tables.py: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
