#!/usr/bin/env python3
"""Makes the comments of coalesce's public headers visible to Doxygen, by their markers alone.

The public headers are commented with `//` blocks directly above each declaration. Doxygen reads
only `///` (and `///<` after a member), so this script turns

  - a `//` block directly above a declaration that a user can name (namespace scope outside
    `namespace detail`, or a public or protected member of such a class) into `///` lines, and
  - a `//` comment after such a declaration on its own line (a field, a constant, a tag type) into
    `///<`,

changing nothing else: no text, no code, no line added, removed or reflowed. It leaves alone a
header's opening comment (it sits above `#pragma once`, not a declaration), comments inside
function bodies, enums and initializers, comments set apart from the next line by a blank line,
private members, `namespace detail` blocks and include/coalesce/detail/. Running it twice changes
nothing the second time.

  scripts/doc-comments.py [--check] [FILE_OR_DIR...]   (default: include/coalesce)

--check writes nothing: it lists the comments that would change and exits 1 if there are any
(the docs build runs it, so that a new public declaration's comment reaches the reference).
Each file is read just before it is written, and written only when it changes.
"""

import argparse
import pathlib
import re
import sys

ACCESS = re.compile(r"^\s*(public|protected|private)\s*:(?!:)")
NAMESPACE = re.compile(r"^\s*(?:inline\s+)?namespace\b\s*([\w:]*)\s*$")
CLASS_HEAD = re.compile(r"^\s*(?:\[\[[^\]]*\]\]\s*)*(class|struct|union)\b")
ENUM_HEAD = re.compile(r"^\s*enum\b")
# Comments that are for tools, not readers.
TOOL_COMMENT = re.compile(r"^\s*//\s*(NOLINT|clang-format|IWYU|cppcheck|namespace\b)")
# What cannot start a declaration that a comment documents.
NOT_A_DECLARATION = re.compile(
    r"^\s*(#|}|\)|:|,|static_assert\b|using\s+namespace\b|namespace\b|extern\s+\"|return\b|public\s*:|private\s*:|protected\s*:)"
)


def strip_template_head(text):
    """The declaration after any leading `template <...>` heads (angle brackets balanced)."""
    while True:
        m = re.match(r"\s*template\s*<", text)
        if not m:
            return text
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
        text = text[i:]


class Scope:
    def __init__(self, kind, name="", access="public", visible=True):
        self.kind = kind  # "namespace", "class" or "other"
        self.name = name
        self.access = access
        self.visible = visible  # a class declared where a user can name it


def code_of(line, state):
    """The line's code with comments and literals blanked, and where a // comment starts (or -1).

    `state` carries an open /* */ comment across lines."""
    out, i, comment_at = [], 0, -1
    n = len(line)
    while i < n:
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), comment_at
            state["block"] = False
            i = end + 2
            continue
        c = line[i]
        if line.startswith("//", i):
            comment_at = i
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if c in "\"'":
            # A digit separator (1'000'000) is no character literal.
            if c == "'" and i > 0 and line[i - 1].isalnum() and i + 1 < n and line[i + 1].isalnum():
                i += 1
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(c + " " * max(0, min(j, n) - i - 1) + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), comment_at


def convert(text):
    """The header's text with its public comments' markers made Doxygen's, and how many changed."""
    lines = text.split("\n")
    stack = [Scope("namespace", "")]  # the file scope
    pending = ""  # the statement so far at the current scope (code since the last ; { or })
    state = {"block": False}
    in_directive = False
    # Per line: whether it starts at a statement boundary in a scope a user can name.
    eligible_at = [False] * len(lines)
    code_lines = [""] * len(lines)
    comment_cols = [-1] * len(lines)

    def user_visible():
        for s in stack:
            if s.kind == "other":
                return False
            if s.kind == "namespace" and "detail" in s.name.split("::"):
                return False
            if s.kind == "class" and (not s.visible or s.access == "private"):
                return False
        return True

    for k, line in enumerate(lines):
        stripped = line.strip()
        if in_directive or stripped.startswith("#"):
            in_directive = line.rstrip().endswith("\\")
            continue
        eligible_at[k] = not state["block"] and pending.strip() == "" and user_visible()
        code, comment_at = code_of(line, state)
        code_lines[k] = code
        comment_cols[k] = comment_at
        m = ACCESS.match(code)
        if m and stack[-1].kind == "class":
            stack[-1].access = m.group(1)
            code = code[m.end():]
        for c in code:
            if c == "{":
                head = strip_template_head(pending)
                nm = NAMESPACE.match(head)
                if nm:
                    stack.append(Scope("namespace", nm.group(1)))
                elif CLASS_HEAD.match(head) and "(" not in head.split("{")[0] and "=" not in head:
                    kind = CLASS_HEAD.match(head).group(1)
                    stack.append(Scope("class", access="private" if kind == "class" else "public",
                                       visible=user_visible()))
                else:
                    stack.append(Scope("other"))
                pending = ""
            elif c == "}":
                if len(stack) == 1:
                    raise ValueError(f"line {k + 1}: a closing brace with no opening one")
                stack.pop()
                pending = ""
            elif c == ";":
                pending = ""
            else:
                pending += c
        pending += " " if pending else ""
    if len(stack) != 1 or state["block"]:
        raise ValueError("the braces or comments do not balance at the end of the file")

    changed = 0
    out = list(lines)
    k = 0
    while k < len(lines):
        # A run of whole-line // comments at one indentation.
        if eligible_at[k] and re.match(r"^\s*//(?![/!])", lines[k]):
            indent = re.match(r"^\s*", lines[k]).group(0)
            j = k
            while j < len(lines) and lines[j].startswith(indent + "//") and re.match(r"^\s*//(?![/!])", lines[j]) \
                    and eligible_at[j]:
                j += 1
            nxt = lines[j] if j < len(lines) else ""
            documents = (nxt.strip() != "" and not nxt.lstrip().startswith("//") and not NOT_A_DECLARATION.match(nxt)
                         and eligible_at[j] and not TOOL_COMMENT.match(lines[k]))
            if documents:
                for i in range(k, j):
                    out[i] = re.sub(r"^(\s*)//", r"\1///", lines[i], count=1)
                    changed += 1
            k = j
            continue
        # A whole declaration on one line, then a // comment: the comment documents it.
        at = comment_cols[k]
        code = code_lines[k].strip()
        if (at > 0 and eligible_at[k] and code.endswith(";") and not NOT_A_DECLARATION.match(code)
                and not ACCESS.match(code) and not lines[k].startswith("///<", at)
                and not lines[k].startswith("///", at) and not TOOL_COMMENT.match(lines[k][at:])):
            out[k] = lines[k][:at] + "///<" + lines[k][at + 2:]
            changed += 1
        k += 1
    return "\n".join(out), changed


def public_headers(paths):
    for p in paths:
        p = pathlib.Path(p)
        files = sorted(p.rglob("*.hpp")) if p.is_dir() else [p]
        for f in files:
            if "detail" not in f.parts:
                yield f


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    parser.add_argument("paths", nargs="*", default=None)
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = args.paths or [root / "include" / "coalesce"]
    pending_files = 0
    for header in public_headers(paths):
        text = header.read_text()  # read now, just before a write: other work may be editing it
        try:
            new, changed = convert(text)
        except ValueError as e:
            print(f"{header}: {e}; left as it is", file=sys.stderr)
            return 2
        if not changed:
            continue
        pending_files += 1
        if args.check:
            for n, (a, b) in enumerate(zip(text.split("\n"), new.split("\n")), 1):
                if a != b:
                    print(f"{header}:{n}: a // comment that documents a public declaration (make it ///)")
        else:
            if header.read_text() != text:  # changed between the read and now: read again
                print(f"{header}: changed while being converted; run again", file=sys.stderr)
                return 2
            header.write_text(new)
            print(f"{header}: {changed} comment lines")
    if args.check and pending_files:
        print("doc-comments.py: run scripts/doc-comments.py to make them Doxygen comments", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
