#!/usr/bin/env bash
# Checks that coalesce's tracked C++/CUDA sources are laid out as .clang-format says, with one pinned
# clang-format, so that every developer and CI get the same answer.
#
#   scripts/check-format.sh            list each file clang-format would change; exit 1 if any
#   scripts/check-format.sh --diff     the same, with the change each file needs
#   scripts/check-format.sh --fix      format those files in place
#   scripts/check-format.sh [...] -- include/coalesce tests/host/soa.cpp
#                                      only the tracked sources under these paths (relative to the
#                                      repository root)
#
# clang-format comes from its PyPI wheel, pinned below and installed on first use into a virtual
# environment outside the repository (${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-ci-tools/), so it
# never shows up in git status. Files named in .clang-format-ignore (generated ones) are skipped.
# Exit status: 0 formatted (or fixed), 1 some file is not formatted, 2 the tool itself failed.
set -euo pipefail

clang_format_version=20.1.8

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }

mode=check
paths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fix) mode="fix" ;;
    --diff) mode="diff" ;;
    -h | --help) usage; exit 0 ;;
    --) shift; paths+=("$@"); break ;;
    -*) echo "check-format.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) paths+=("$1") ;;
  esac
  shift
done

cd "$(dirname "$0")/.."

tools="${XDG_CACHE_HOME:-$HOME/.cache}/coalesce-ci-tools"
venv="$tools/format-venv"

# The wheel's own binary, not the Python launcher beside it: no interpreter start per call.
find_binary() {
  local candidate
  for candidate in "$venv"/lib/python3*/site-packages/clang_format/data/bin/clang-format \
                   "$venv"/site/clang_format/data/bin/clang-format; do
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

has_pinned() {
  local binary
  binary=$(find_binary) && "$binary" --version 2>/dev/null | grep -q "clang-format version $clang_format_version\b"
}

if ! has_pinned; then
  echo "check-format.sh: installing clang-format $clang_format_version into $venv" >&2
  rm -rf "$venv"
  mkdir -p "$tools"
  pip_quiet=(--quiet --disable-pip-version-check --no-input)
  export PIP_ROOT_USER_ACTION=ignore  # CI runs as root; the install goes into a directory of its own
  if python3 -m venv "$venv" >/dev/null 2>&1; then
    "$venv/bin/python" -m pip install "${pip_quiet[@]}" "clang-format==$clang_format_version"
  else
    # A Python without ensurepip (Debian's, without python3-venv) cannot make a venv; the wheel
    # needs none, as its binary runs on its own.
    rm -rf "$venv"
    python3 -m pip install "${pip_quiet[@]}" --target "$venv/site" "clang-format==$clang_format_version"
  fi
  if ! has_pinned; then
    echo "check-format.sh: clang-format $clang_format_version did not install into $venv" >&2
    exit 2
  fi
fi
clang_format=$(find_binary)

# Tracked sources only (what CI's clone has), and only those still in the working tree.
list=$(mktemp)
out=$(mktemp)
trap 'rm -f "$list" "$out"' EXIT
git ls-files -z -- "${paths[@]+"${paths[@]}"}" \
  | grep -zE '\.(hpp|cpp|cu|cuh|h|hh|cc|cxx|inl)$' \
  | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done >"$list" || true
count=$(tr -cd '\0' <"$list" | wc -c)
if [ "$count" -eq 0 ]; then
  echo "check-format.sh: no tracked C++/CUDA sources${paths[*]:+ under ${paths[*]}}" >&2
  exit 2
fi

if [ "$mode" = fix ]; then
  # -i rewrites only the files whose layout changes, so the others keep their timestamps.
  xargs -0 "$clang_format" -i <"$list"
  echo "check-format.sh: formatted $count files with clang-format $clang_format_version"
  exit 0
fi

# One error per unformatted file (--ferror-limit=1), so the file names can be read off.
status=0
xargs -0 "$clang_format" --dry-run -Werror --ferror-limit=1 <"$list" >"$out" 2>&1 || status=$?
bad=$(sed -nE 's/^(.*):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' "$out" | sort -u)
if [ "$status" -ne 0 ] && [ -z "$bad" ]; then
  cat "$out" >&2
  echo "check-format.sh: clang-format failed" >&2
  exit 2
fi
if [ -z "$bad" ]; then
  echo "check-format.sh: $count sources formatted or in .clang-format-ignore" \
    "(clang-format $clang_format_version)"
  exit 0
fi

while IFS= read -r f; do
  if [ "$mode" = diff ]; then
    "$clang_format" "$f" | diff -u --label "a/$f" --label "b/$f" "$f" - || true
  else
    echo "$f"
  fi
done <<<"$bad"
echo "check-format.sh: $(wc -l <<<"$bad") of $count files are not formatted (clang-format $clang_format_version);" \
  "scripts/check-format.sh --fix formats them" >&2
exit 1
