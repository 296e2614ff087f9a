#!/usr/bin/env python3
"""docs.render: the documentation site renders as a reader sees it.

Opens the built site's index and the API page of soa_vector in headless Chromium, keeps a
screenshot of each (under --out, in the build tree), and fails unless

  - each page's DOM, after Chromium ran it, has its title and its heading;
  - no page of the site shows a rendering problem: a docutils system message or "problematic"
    marker (a reference or directive that did not resolve), or a Breathe error such as
    "Cannot find class" or "Unable to resolve";
  - the index links every guide it lists and the API reference;
  - soa_vector's page declares the class and every member its header documents (taken from
    Doxygen's XML), each with its comment's first words;
  - each screenshot is a picture with something drawn on it, not an empty page.

  render.py --site build/docs/html --xml build/docs/doxygen/xml --chromium chromium --out DIR
"""

import argparse
import html
import pathlib
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def chromium(binary, url, *args):
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             f"--user-data-dir={profile}", *args, url],
            capture_output=True, text=True, timeout=120)
    return run


def dump_dom(binary, page):
    run = chromium(binary, page.as_uri(), "--dump-dom", "--virtual-time-budget=5000")
    check(run.returncode == 0, f"{page}: chromium --dump-dom exited {run.returncode}: {run.stderr[-500:]}")
    return run.stdout


def screenshot(binary, page, png):
    png.unlink(missing_ok=True)
    run = chromium(binary, page.as_uri(), f"--screenshot={png}", "--window-size=1280,2000")
    check(run.returncode == 0 and png.is_file(), f"{page}: no screenshot ({run.returncode}): {run.stderr[-500:]}")
    if png.is_file():
        distinct = png_colours(png.read_bytes())
        # A page that failed to load or lost its style sheet is one or two colours.
        check(distinct >= 16, f"{png}: only {distinct} colours: the page drew (almost) nothing")
        print(f"docs.render: {png} ({png.stat().st_size} bytes, {distinct} colours)")


def png_colours(data, cap=4096):
    """How many distinct pixel values an 8-bit RGB or RGBA PNG holds (counting stops at cap)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4}.get(colour_type, 0) if depth == 8 else 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if not channels:
        return cap  # a format this check does not decode: do not fail on it
    raw, stride, previous, colours = zlib.decompress(idat), width * channels, bytearray(width * channels), set()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = line
        if y % 8 == 0:
            colours.update(bytes(line[i:i + channels]) for i in range(0, stride, channels * 4))
            if len(colours) >= cap:
                break
    return len(colours)


PROBLEMS = [
    (re.compile(r'class="[^"]*\bsystem-message\b'), "a docutils system message"),
    (re.compile(r'class="[^"]*\bproblematic\b'), "a problematic (unresolved) marker"),
    (re.compile(r"Cannot find (class|struct|file|function|namespace|define|typedef|variable|enum)"), "Breathe: Cannot find"),
    (re.compile(r"Unable to resolve (function|template)"), "Breathe: Unable to resolve"),
    (re.compile(r"Invalid C\+\+ declaration|Error when parsing function declaration"), "a declaration Sphinx could not parse"),
    (re.compile(r"doxygen(class|struct|file|function)::"), "a directive left as text"),
]


def text_of(element):
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def documented_members(xml_dir, class_name):
    """Public members of class_name that carry a comment: (name, the comment's first words)."""
    index = ET.parse(xml_dir / "index.xml").getroot()
    refid = next(c.get("refid") for c in index.iter("compound") if c.findtext("name") == class_name)
    compound = ET.parse(xml_dir / f"{refid}.xml").getroot().find("compounddef")
    members = []
    for section in compound.iter("sectiondef"):
        if not section.get("kind", "").startswith("public"):
            continue
        for member in section.iter("memberdef"):
            comment = (text_of(member.find("briefdescription")) + " " + text_of(member.find("detaileddescription"))).strip()
            if comment:
                members.append((member.findtext("name"), " ".join(comment.split()[:6])))
    return plain_quotes(text_of(compound.find("detaileddescription"))), [(n, plain_quotes(w)) for n, w in members]


def plain_quotes(text):
    """Sphinx prints ' and " as typographic quotes; compare them plain."""
    return text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}))


def visible_text(dom):
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return plain_quotes(" ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split()))


def main():
    parser = argparse.ArgumentParser(description="docs.render")
    parser.add_argument("--site", type=pathlib.Path, required=True)
    parser.add_argument("--xml", type=pathlib.Path, required=True)
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--class-page", default="api/soa_vector.html")
    parser.add_argument("--class-name", default="coalesce::soa_vector")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    index, api = args.site / "index.html", args.site / args.class_page
    if not check(index.is_file() and api.is_file(), f"{args.site}: no index.html or {args.class_page}: build the docs first"):
        return report()

    # Every page of the site, as built: nothing failed to render.
    pages = sorted(args.site.rglob("*.html"))
    for page in pages:
        body = page.read_text(errors="replace")
        for pattern, what in PROBLEMS:
            m = pattern.search(body)
            check(m is None, f"{page.relative_to(args.site)}: {what}: ...{body[max(0, m.start() - 80):m.end() + 80] if m else ''}...")
    print(f"docs.render: {len(pages)} pages checked for rendering problems")

    # The index, as Chromium renders it.
    dom = dump_dom(args.chromium, index)
    check(re.search(r"<title>[^<]*coalesce[^<]*</title>", dom), "index: no <title> naming coalesce in the rendered DOM")
    check(re.search(r"<h1[^>]*>\s*coalesce", dom), "index: no coalesce heading")
    check('href="api/index.html"' in dom, "index: no link to the API reference")
    for guide in re.findall(r"^([\w-]+)$", (pathlib.Path(__file__).resolve().parents[2] / "docs" / "index.md").read_text(), re.M):
        if (args.site / f"{guide}.html").is_file():
            check(f'href="{guide}.html"' in dom, f"index: the guide {guide} is built but not linked")
    screenshot(args.chromium, index, args.out / "index.png")

    # soa_vector's page: the class, and each member its comments document.
    dom = dump_dom(args.chromium, api)
    short = args.class_name.split("::")[-1]
    check(re.search(rf"<title>[^<]*{short}[^<]*</title>", dom), f"{args.class_page}: no <title> naming {short}")
    text = visible_text(dom)
    # Tags split words from punctuation (<code>Space</code>: reads "Space :"): compare without spaces.
    squashed = re.sub(r"\s+", "", text)
    shown = lambda words: re.sub(r"\s+", "", words) in squashed  # noqa: E731
    class_comment, members = documented_members(args.xml, args.class_name)
    check(f"class {short}" in text, f"{args.class_page}: no declaration 'class {short}'")
    check(shown(class_comment[:60]), f"{args.class_page}: the class comment is not shown: {class_comment[:60]!r}")
    check(len(members) >= 10, f"{args.class_name}: only {len(members)} documented members in Doxygen's XML")
    for name, words in members:
        check(re.search(rf"\b{re.escape(name)}\s*\(|\b{re.escape(name)}\b", text) is not None,
              f"{args.class_page}: member {name} is not shown")
        check(shown(words), f"{args.class_page}: the comment of {name} is not shown: {words!r}")
    print(f"docs.render: {args.class_page}: class {short} and {len(members)} documented members shown")
    screenshot(args.chromium, api, args.out / "soa_vector.png")
    return report()


def report():
    for f in failures:
        print(f"FAILED: {f}")
    print(f"docs.render: {'failed' if failures else 'passed'} ({len(failures)} problems)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
