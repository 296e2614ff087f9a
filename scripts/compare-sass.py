#!/usr/bin/env python3
"""Compares the SASS of the kernels two CUDA executables share, by demangled name: which are the
same instruction for instruction, which differ and in how many lines, and which have no match.

    scripts/compare-sass.py BEFORE AFTER [NAME-FILTER]

Needs cuobjdump and c++filt on PATH. Addresses and encodings are left out of the comparison.
A view's memory space (`, coalesce::device_space`), which later trees name in the kernels'
parameter types, is dropped from the names before they are matched. CUB's and Thrust's own
kernels are left out unless NAME-FILTER selects them."""
import difflib
import re
import subprocess
import sys

INSTRUCTION = re.compile(r"\s*/\*[0-9a-f]{4}\*/\s*(.*?)\s*;?\s*/\*")


def kernels(executable):
    """{mangled name: [instruction, ...]} of every kernel in the executable's sm_XX code."""
    sass = subprocess.run(["cuobjdump", "-sass", executable], capture_output=True, text=True, check=True).stdout
    out, name = {}, None
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            m = INSTRUCTION.match(line)
            if m:
                out[name].append(m.group(1))
    return out


def demangled(names):
    text = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return [d.replace(", coalesce::device_space", "") for d in text.split("\n")]


def main(args):
    if len(args) not in (2, 3):
        print(__doc__)
        return 2
    wanted = args[2] if len(args) == 3 else None
    before, after = kernels(args[0]), kernels(args[1])
    after_by_name = dict(zip(demangled(list(after)), after.values()))
    for name, code in zip(demangled(list(before)), before.values()):
        if wanted is None and re.search(r"\bcub::|\bthrust::|CUB_|THRUST_", name):
            continue
        if wanted is not None and wanted not in name:
            continue
        if name not in after_by_name:
            print(f"no match  {name}")
            continue
        changed = [line for line in difflib.unified_diff(code, after_by_name[name], lineterm="", n=0)
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        verdict = "same" if not changed else f"{len(changed)} lines differ"
        print(f"{verdict:16s} {len(code):5d} {len(after_by_name[name]):5d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
