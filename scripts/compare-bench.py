#!/usr/bin/env python3
"""Compares coalesce's rows of two coalesce_bench outputs (the text it prints, or its
coalesce-bench.txt) and prints a Markdown table: each row's median time and its ratio to the best
competitor of its own run, before and after.

    scripts/compare-bench.py BEFORE.txt AFTER.txt [BEFORE2.txt AFTER2.txt ...]

Pairs of files are read in order (one pair per group run), so that runs made in turns on one
machine compare group by group. Rows in only one of a pair are listed as such."""
import re
import sys

ROW = re.compile(r"\s+(.*?)\s+(coalesce|competitor|context)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+)%"
                 r".*?\s([\d.]+)%\s+([\d.]+)\s")
NOT_GROUP = ("coalesce benchmark", "cudaMemcpy", "DRAM", "wrote", "|", "--check", "target missed", "kernel")


def coalesce_rows(path):
    """{(group, row): (median ms, % of cudaMemcpy, ratio to the best competitor)} of path's coalesce rows."""
    rows, group = {}, None
    with open(path) as text:
        for line in text:
            if line.strip() and not line.startswith(" ") and not line.startswith(NOT_GROUP):
                group = line.strip()
            m = ROW.match(line)
            if m and group and m.group(2) == "coalesce":
                rows[(group, m.group(1))] = (float(m.group(3)), float(m.group(5)), float(m.group(8)))
    return rows


def main(paths):
    if len(paths) < 2 or len(paths) % 2:
        print(__doc__)
        return 2
    print("| work | coalesce | before: ms | after: ms | after / before time | before: ratio to best | after: ratio to best |")
    print("|---|---|---|---|---|---|---|")
    for before_path, after_path in zip(paths[::2], paths[1::2]):
        before, after = coalesce_rows(before_path), coalesce_rows(after_path)
        for key in list(before) + [k for k in after if k not in before]:
            group, row = key
            if key in before and key in after:
                b, a = before[key], after[key]
                print(f"| {group} | `{row}` | {b[0]:.4f} | {a[0]:.4f} | {a[0] / b[0]:.4f} | {b[2]:.3f} | {a[2]:.3f} |")
            else:
                side = "before" if key in before else "after"
                print(f"| {group} | `{row}` | only {side} | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
