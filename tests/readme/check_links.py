#!/usr/bin/env python3
"""The readme.links test: every relative link and image in README.md and in the guides (docs/*.md)
points at a file of the repository, and a link's #anchor names a heading of the Markdown file it
points into, by the slugs GitHub and MyST (myst_heading_anchors) both give headings: lower case,
characters other than letters, digits, '_', '-' and spaces dropped, spaces turned into '-'.

    tests/readme/check_links.py <repository top>

Links to other sites (https://...) are not followed: the test runs offline. Code blocks and code
spans are skipped, as Markdown renders no link there."""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*```")


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose_lines(path):
    """(line number, text) of the lines outside fenced blocks."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if not in_fence:
                yield number, line


def anchors(path, cache={}):
    if path not in cache:
        found = set()
        for _, line in prose_lines(path):
            m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
            if m:
                found.add(slug(m.group(1)))
        cache[path] = found
    return cache[path]


def main(top):
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(top, "docs")) if f.endswith(".md"))
    broken, checked = [], 0
    for name in files:
        path = os.path.join(top, name)
        for number, line in prose_lines(path):
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    broken.append("%s:%d: %s: no such file" % (name, number, target))
                elif anchor and not dest.endswith(".md"):
                    broken.append("%s:%d: %s: an anchor into a file that is not Markdown" % (name, number, target))
                elif anchor and anchor not in anchors(dest):
                    broken.append("%s:%d: %s: %s has no heading with that anchor"
                                  % (name, number, target, os.path.relpath(dest, top)))
    for line in broken:
        print(line)
    print("%d relative links in %d files, %d broken" % (checked, len(files), len(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
